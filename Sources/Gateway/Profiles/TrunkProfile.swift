import Media
import SIP

/// One SIP trunk, as configured by a JSON5 file in `sip-profiles/` (see docs/sip-profiles.md).
///
/// A profile has an `outbound` part (calls from apps to phone numbers), an `inbound` part
/// (calls from the carrier to DIDs), or both. Secrets are not held here: `Outbound.Auth`
/// names an environment variable, resolved when needed.
public struct TrunkProfile: Sendable, Equatable {
    /// The trunk's name, `[A-Za-z0-9_-]+`, unique across profiles; `createWithTN` picks a
    /// profile by it. Required.
    public var name: String

    /// Names a profile may have: `[A-Za-z0-9_-]+` (so a page token's scope can list them).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }
    /// Outbound calling; nil (key absent) when the trunk takes no outbound calls.
    public var outbound: Outbound?
    /// Inbound calling; nil (key absent) when the trunk accepts no inbound calls.
    public var inbound: Inbound?
    /// Codecs, DTMF and RTP supervision. Default: all defaults of `MediaSettings`.
    public var media: MediaSettings
    /// SIP transport and timers. Default: all defaults of `SIPSettings`.
    public var sip: SIPSettings
    /// The file the profile was read from ("" when built in code); errors name it.
    public var source: String
    /// Transfers: the fallback and the inbound REFER policy. Default: all defaults of `Transfer`.
    public var transfer = Transfer()
    /// Recording of the trunk's calls, and SIPREC. Default: all defaults of `Recording`.
    public var recording = Recording()
    /// Answering-machine detection's thresholds (used when a call asks for `amd`). Default:
    /// all defaults of `AMDSettings`.
    public var amd = AMDSettings()

    /// Builds a profile in code; `ProfileLoader` builds them from files.
    public init(
        name: String, outbound: Outbound? = nil, inbound: Inbound? = nil,
        media: MediaSettings = MediaSettings(), sip: SIPSettings = SIPSettings(), source: String = ""
    ) {
        self.name = name
        self.outbound = outbound
        self.inbound = inbound
        self.media = media
        self.sip = sip
        self.source = source
    }

    /// Outbound calls through the trunk: where to send INVITEs, how to authenticate, how to
    /// write numbers, and the toll-fraud limits.
    public struct Outbound: Sendable, Equatable {
        /// Proxies, tried in order; the next one on 503 or timeout. Required, at least one.
        public var proxies: [ProxyAddress]
        /// The host part of the From URI. Default: the first proxy's host.
        public var fromDomain: String
        /// Digest credentials for 401/407 challenges (and REGISTER). Default: none.
        public var auth: Auth?
        /// Registration with the first proxy. Default: disabled.
        public var register: Register
        /// How numbers are written in the Request-URI. Default: `.e164`.
        public var numberFormat: NumberFormat
        /// The country calling code (1-3 digits) given to national numbers. Default: "1".
        public var defaultCountryCode: String
        /// The national trunk prefix stripped from national numbers and added back for
        /// `.national` dialling; may be empty (as in Italy). Default: "1" when
        /// `defaultCountryCode` is "1", "8" when it is "7", else "0".
        public var nationalPrefix: String
        /// The international access code written before foreign numbers in `.national`
        /// dialling, and read as "+" in input ("00" is always read as "+"). Default: "011"
        /// when `defaultCountryCode` is "1", else "00".
        public var internationalPrefix: String
        /// Toll-fraud guard: a normalised number must start with one of these, or the call is
        /// refused (-417) before any INVITE. Default when the key is absent:
        /// `["+" + defaultCountryCode]`, home-country numbers only, so that a profile
        /// without the key never dials international destinations. Give `["+"]` to allow
        /// every E.164 number. An empty list is refused when loading.
        public var allowedPrefixes: [String]
        /// At most this many outbound calls at once. Default: 100.
        public var maxConcurrentCalls: Int
        /// At most this many new outbound calls per second. Default: 10.
        public var callsPerSecond: Int
        /// Seconds from a target's first provisional response (100 Trying included) before
        /// the gateway CANCELs (ended `no-answer`). Default: 60.
        public var ringTimeoutSec: Int
        /// Milliseconds an INVITE waits for any response from a target before it is
        /// abandoned (no CANCEL: RFC 3261 §9.1) and the next target or proxy is tried; the
        /// last target left waits for Timer B (32 s). 0: Timer B for every target. Default:
        /// 4000 (the INVITE and its UDP retransmissions at 0.5, 1.5 and 3.5 s).
        public var failoverTimeoutMs: Int
        /// The number (and default name) the caller presents, and which numbers an app may
        /// ask for. Default: the app's `sourceTN`, any number.
        public var callerId = CallerID()
        /// Whether the caller's identity goes in P-Asserted-Identity or P-Preferred-Identity
        /// (RFC 3325). Default: `.none`.
        public var assertedIdentity = AssertedIdentity.none
        /// `;user=phone` on the Request-URI, To, From and asserted identity (RFC 3261
        /// §19.1.1: the user part is a telephone number). Default: false.
        public var userPhone = false
        /// Digits written before the dialled user part (a carrier's routing or billing
        /// prefix), 0 to 16 digits. Default: "" (none).
        public var techPrefix = ""
        /// Headers every INVITE of the trunk carries, in order. Default: none.
        public var headers: [SIPHeader] = []
        /// Header names an app may send in `createWithTN`'s `headers` besides `X-` ones.
        /// Default: none.
        public var appHeaders: [String] = []

        /// Builds the outbound part in code; defaults as documented on each property.
        public init(
            proxies: [ProxyAddress], fromDomain: String? = nil, auth: Auth? = nil,
            register: Register = Register(), numberFormat: NumberFormat = .e164,
            defaultCountryCode: String = "1", nationalPrefix: String? = nil,
            internationalPrefix: String? = nil, allowedPrefixes: [String]? = nil,
            maxConcurrentCalls: Int = 100, callsPerSecond: Int = 10, ringTimeoutSec: Int = 60,
            failoverTimeoutMs: Int = 4000
        ) {
            self.proxies = proxies
            self.fromDomain = fromDomain ?? proxies.first?.hostReference ?? ""
            self.auth = auth
            self.register = register
            self.numberFormat = numberFormat
            self.defaultCountryCode = defaultCountryCode
            self.nationalPrefix = nationalPrefix ?? Outbound.defaultNationalPrefix(countryCode: defaultCountryCode)
            self.internationalPrefix =
                internationalPrefix
                ?? Outbound.defaultInternationalPrefix(countryCode: defaultCountryCode)
            self.allowedPrefixes = allowedPrefixes ?? ["+" + defaultCountryCode]
            self.maxConcurrentCalls = maxConcurrentCalls
            self.callsPerSecond = callsPerSecond
            self.ringTimeoutSec = ringTimeoutSec
            self.failoverTimeoutMs = failoverTimeoutMs
        }

        /// The default `nationalPrefix` for a country code.
        public static func defaultNationalPrefix(countryCode: String) -> String {
            switch countryCode {
            case "1": return "1"
            case "7": return "8"
            default: return "0"
            }
        }

        /// The default `internationalPrefix` for a country code.
        public static func defaultInternationalPrefix(countryCode: String) -> String {
            countryCode == "1" ? "011" : "00"
        }

        /// How the trunk wants numbers in the Request-URI user part.
        public enum NumberFormat: String, Sendable, Equatable, CaseIterable {
            /// `+15551234567`.
            case e164
            /// `nationalPrefix` + national number at home, `internationalPrefix` + digits abroad.
            case national
            /// The caller's digits, cleaned of separators but otherwise untouched.
            case raw
        }

        /// Digest credentials. The password is never in the file: `passwordEnv` names the
        /// environment variable that holds it.
        public struct Auth: Sendable, Equatable {
            /// The digest username. Required.
            public var username: String
            /// The name of the environment variable holding the password,
            /// `[A-Za-z_][A-Za-z0-9_]*`. Required.
            public var passwordEnv: String
            /// The profile file, for the error when the variable is unset.
            public var source: String

            /// Builds credentials in code.
            public init(username: String, passwordEnv: String, source: String = "") {
                self.username = username
                self.passwordEnv = passwordEnv
                self.source = source
            }

            /// The password from `environment`. Resolved at use, not at load, so a profile
            /// loads (and `make run` works) without the variable set.
            /// - Throws: `ProfileError` naming the file, `outbound.auth.passwordEnv` and the
            ///   variable when it is unset or empty.
            public func password(environment: [String: String]) throws(ProfileError) -> String {
                guard let value = environment[passwordEnv] else {
                    throw ProfileError(
                        file: source, keyPath: "outbound.auth.passwordEnv",
                        message: "environment variable \(passwordEnv) is not set")
                }
                guard !value.isEmpty else {
                    throw ProfileError(
                        file: source, keyPath: "outbound.auth.passwordEnv",
                        message: "environment variable \(passwordEnv) is empty")
                }
                return value
            }
        }

        /// REGISTER with the trunk (RFC 3261 section 10).
        public struct Register: Sendable, Equatable {
            /// Whether to register. Default: false.
            public var enabled: Bool
            /// The requested registration lifetime, 60...86400 seconds. Default: 3600.
            public var expiresSec: Int

            /// Builds the registration settings in code.
            public init(enabled: Bool = false, expiresSec: Int = 3600) {
                self.enabled = enabled
                self.expiresSec = expiresSec
            }
        }
    }

    /// Inbound calls from the trunk: who may send them and where they go.
    public struct Inbound: Sendable, Equatable {
        /// Networks INVITEs may come from. Requests from anywhere else (outside every
        /// trunk's list and every dialog of ours) get no answer at all, or 403 when the serve
        /// setting `sip.answerUnknownSources` is on. With `auth`, a source in the list must
        /// still authenticate. Default: `["127.0.0.1/32"]`; with `auth`, every address
        /// (`0.0.0.0/0`, `::/0`): the credentials alone identify the trunk.
        public var allowFrom: [CIDR]
        /// Digest credentials the trunk's INVITEs must carry (docs/sip-profiles.md,
        /// "Authenticated inbound trunks"). Default: none (the source address is enough).
        public var auth: Auth?
        /// DID to routing id. Required, at least one; each `did` at most once.
        public var routes: [Route]
        /// Seconds to wait for `join` before answering 480 (ended `no-answer`). Default: 45.
        public var ringTimeoutSec: Int
        /// Incoming calls from this trunk at once; more get 503 with Retry-After. Separate
        /// from `outbound.maxConcurrentCalls`, so a flood in cannot starve calls out.
        /// Default: 100.
        public var maxConcurrentCalls: Int
        /// New incoming calls per second from this trunk; more get 503. Default: 10.
        public var callsPerSecond: Int

        /// Builds the inbound part in code; defaults as documented on each property.
        public init(
            allowFrom: [CIDR]? = nil, routes: [Route], ringTimeoutSec: Int = 45,
            maxConcurrentCalls: Int = 100, callsPerSecond: Int = 10, auth: Auth? = nil
        ) {
            // The literals are valid, so the fallback never applies.
            let defaults = auth == nil ? ["127.0.0.1/32"] : ["0.0.0.0/0", "::/0"]
            self.allowFrom = allowFrom ?? defaults.compactMap { try? CIDR(parsing: $0) }
            self.auth = auth
            self.routes = routes
            self.ringTimeoutSec = ringTimeoutSec
            self.maxConcurrentCalls = maxConcurrentCalls
            self.callsPerSecond = callsPerSecond
        }

        /// One inbound route: calls to `did` notify subscribers of `routingId`.
        public struct Route: Sendable, Equatable {
            /// An E.164 number (`+15550001000`) or `*` for any other number. Required.
            public var did: String
            /// The routing id whose subscribers get the `onNotification`. Required.
            public var routingId: String

            /// Builds a route in code.
            public init(did: String, routingId: String) {
                self.did = did
                self.routingId = routingId
            }
        }

        /// The route for a called number: the exact `did`, else the `*` route, else nil (404).
        public func route(forDID did: String) -> Route? {
            routes.first { $0.did == did } ?? routes.first { $0.did == "*" }
        }

        /// Whether an INVITE from `address` is accepted (some `allowFrom` network contains it).
        public func allows(source address: String) -> Bool {
            allowFrom.contains { $0.contains(address) }
        }
    }

    /// Media on the trunk leg.
    public struct MediaSettings: Sendable, Equatable {
        /// Codecs offered and accepted, in order of preference; no repeats. Default: `[.pcmu, .pcma]`.
        public var codecs: [Codec]
        /// How DTMF is sent and received. Default: `.rfc4733`.
        public var dtmf: DTMFMode
        /// Seconds without RTP before the call is ended with BYE (`media-timeout`); 0 disables.
        /// Default: 30.
        public var rtpTimeoutSec: Int
        /// The numeric address written into this trunk's SDP (`c=`, `o=`) instead of the RTP
        /// bind address or the serve setting `rtpAdvertise`: the public side of a NAT this
        /// trunk is reached through. Default nil.
        public var advertise: String?
        /// SRTP on this trunk (SDES keys, RFC 4568). Default: `.none`.
        public var encryption: Encryption
        /// The SRTP suites offered and accepted, in order of preference; no repeats.
        /// Default: all of `SRTPSuite` (AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32,
        /// AEAD_AES_128_GCM).
        public var srtpSuites: [SRTPSuite]
        /// SDES keys travel in the SDP, so they are offered and taken only over TLS (sips: or
        /// transport=tls). false allows them over UDP and TCP (a private link, a test). Default: true.
        public var sdesRequiresTLS: Bool
        /// `media.opus`: the platform leg's Opus settings for calls on this trunk, over the
        /// gateway-wide ones (`GatewayConfiguration.opus`); a session's `opus` goes over
        /// these (`opusSettings(default:session:)`). Default: none given (the gateway's).
        public var opus: AudioCodec.OpusOverrides
        /// `media.opusTrunk`: the `a=fmtp` of Opus on this trunk (RFC 7587), what we ask the
        /// carrier to send us. Default `defaultOpusTrunk`.
        public var opusTrunk: OpusFormatParameters

        /// Our Opus fmtp toward a trunk unless the profile says otherwise: audio up to 16 kHz
        /// (the widest a call runs at), mono, in-band FEC welcome, no DTX.
        public static let defaultOpusTrunk = OpusFormatParameters(
            maxPlaybackRate: 16_000, maxCaptureRate: 16_000, stereo: false, spropStereo: false, useInbandFEC: true,
            useDTX: false)

        /// Builds the media settings in code.
        public init(
            codecs: [Codec] = [.pcmu, .pcma], dtmf: DTMFMode = .rfc4733, rtpTimeoutSec: Int = 30,
            advertise: String? = nil,
            encryption: Encryption = .none, srtpSuites: [SRTPSuite] = SRTPSuite.allCases, sdesRequiresTLS: Bool = true,
            opus: AudioCodec.OpusOverrides = .init(), opusTrunk: OpusFormatParameters = defaultOpusTrunk
        ) {
            self.codecs = codecs
            self.dtmf = dtmf
            self.rtpTimeoutSec = rtpTimeoutSec
            self.advertise = advertise
            self.encryption = encryption
            self.srtpSuites = srtpSuites
            self.sdesRequiresTLS = sdesRequiresTLS
            self.opus = opus
            self.opusTrunk = opusTrunk
        }

        /// `media.encryption`: whether the trunk leg's RTP is SRTP.
        public enum Encryption: String, Sendable, Equatable, CaseIterable {
            /// Plain RTP; an offer of RTP/SAVP is refused with 488.
            case none
            /// SRTP when the carrier takes or offers it, plain RTP otherwise (our offers are
            /// RTP/AVP with `a=crypto`).
            case optional
            /// SRTP or no call (our offers are RTP/SAVP; an answer or offer without usable
            /// keys ends the call or gets 488).
            case required
        }

        /// A trunk codec; raw values are the profile spellings.
        public enum Codec: String, Sendable, Equatable, CaseIterable {
            /// G.711 mu-law, payload type 0.
            case pcmu = "PCMU"
            /// G.711 A-law, payload type 8.
            case pcma = "PCMA"
            /// G.722 wideband, payload type 9 (HD).
            case g722 = "G722"
            /// Opus (RFC 7587), `opus/48000/2` on dynamic payload type 111 in our offers (HD).
            case opus
        }

        /// DTMF transport.
        public enum DTMFMode: String, Sendable, Equatable, CaseIterable {
            /// RTP telephone-event packets (RFC 4733).
            case rfc4733
            /// Tones in the audio.
            case inband
            /// SIP INFO requests.
            case info
        }
    }

    /// SIP signalling settings.
    public struct SIPSettings: Sendable, Equatable {
        /// The transport for proxies whose URI names none. Default: `.udp`.
        public var transport: ProxyAddress.Transport
        /// Reliable provisional responses (RFC 3262). Default: `.supported`.
        public var prack: PRACKMode
        /// Session-Expires for session timers (RFC 4028); 0 disables, otherwise 90...86400.
        /// Default: 1800.
        public var sessionTimerSec: Int
        /// Seconds between OPTIONS keepalives to the proxies; 0 disables, otherwise 5...3600.
        /// Default: 30.
        public var optionsPingSec: Int
        /// The address (and port) we name ourselves by toward this trunk, in Via and Contact,
        /// instead of the listener's or the serve setting `sipAdvertise`. It applies to
        /// requests to the trunk's numeric proxies and from its `allowFrom` networks. Default nil.
        public var advertise: SIPAdvertisedAddress?
        /// How the trunk's TLS servers are checked and what we show them (`sip.tls`).
        public var tls: TLSSettings

        /// Builds the SIP settings in code.
        public init(
            transport: ProxyAddress.Transport = .udp, prack: PRACKMode = .supported,
            sessionTimerSec: Int = 1800, optionsPingSec: Int = 30, advertise: SIPAdvertisedAddress? = nil,
            tls: TLSSettings = TLSSettings()
        ) {
            self.transport = transport
            self.prack = prack
            self.sessionTimerSec = sessionTimerSec
            self.optionsPingSec = optionsPingSec
            self.advertise = advertise
            self.tls = tls
        }

        /// `sip.tls`: TLS toward the trunk's `sips:` and `transport=tls` proxies.
        public struct TLSSettings: Sendable, Equatable {
            /// PEM file of the CAs that may issue the trunk's certificates; nil: the system
            /// trust store.
            public var caFile: String?
            /// The name the trunk's certificate must carry (and the SNI); nil: each proxy's
            /// host as written in `proxies` (RFC 5922 §4). Needed for a numeric proxy whose
            /// certificate names a host.
            public var serverName: String?
            /// Our client certificate (PEM) for a trunk that demands one (mutual TLS).
            public var certificateFile: String?
            /// The client certificate's private key (PEM); given with `certificateFile`.
            public var keyFile: String?
            /// Accept a wildcard certificate (`*.carrier.example`, one label, RFC 6125);
            /// RFC 5922 forbids it for SIP domains, so the default is false.
            public var allowWildcardCertificates: Bool

            public init(
                caFile: String? = nil, serverName: String? = nil, certificateFile: String? = nil,
                keyFile: String? = nil,
                allowWildcardCertificates: Bool = false
            ) {
                self.caFile = caFile
                self.serverName = serverName
                self.certificateFile = certificateFile
                self.keyFile = keyFile
                self.allowWildcardCertificates = allowWildcardCertificates
            }

            /// The SIP layer's client settings.
            public var client: SIPTLSClientSettings {
                SIPTLSClientSettings(
                    caFile: caFile, certificateFile: certificateFile, keyFile: keyFile,
                    allowWildcardCertificates: allowWildcardCertificates)
            }
        }

        /// How 100rel is used.
        public enum PRACKMode: String, Sendable, Equatable, CaseIterable {
            /// Neither offered nor accepted.
            case disabled
            /// `Supported: 100rel`.
            case supported
            /// `Require: 100rel`.
            case required
        }
    }
}

/// A profile that cannot be loaded or used: the file, the key path inside it, and why.
public struct ProfileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The profile file (or directory) as given to the loader.
    public var file: String
    /// Dot and bracket path to the offending key (`outbound.proxies[1]`); "" when the problem
    /// is the whole file.
    public var keyPath: String
    /// What is wrong.
    public var message: String
    /// Line of a JSON5 syntax error (1-based); nil otherwise.
    public var line: Int?
    /// Column of a JSON5 syntax error (1-based); nil otherwise.
    public var column: Int?

    /// Builds an error.
    public init(file: String, keyPath: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.keyPath = keyPath
        self.message = message
        self.line = line
        self.column = column
    }

    /// `<file>: <keyPath>: <message>`, or `<file>: <message>` when there is no key path.
    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
