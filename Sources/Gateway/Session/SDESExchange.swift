import Media
import SDP
import SIP

/// SRTP on the trunk leg keyed by SDP Security Descriptions (RFC 4568): the `a=crypto`
/// lines we offer or answer, the carrier's lines we accept, and the SRTP keys that result.
///
/// A plain value the session keeps for its trunk leg and feeds every SDP it sends or gets;
/// tested as tables of SDP with no socket and no clock. It never falls back in silence:
/// under `required` an SDP without usable keys is an error, and a `RTP/SAVP` stream is never
/// answered as plain RTP (RFC 3264 §6).
///
/// - Offers: `required` offers `RTP/SAVP`; `optional` offers `RTP/AVP` with the same
///   `a=crypto` lines (best-effort SRTP, as most SBCs and softphones do: a peer without SRTP
///   ignores the lines and answers plain RTP). Keys are offered only when `keysAllowed`
///   (the signalling goes over TLS, or the profile allows SDES in clear).
/// - Answers to the carrier's offers take its first usable line, in its order, with the same
///   tag and suite and our own key. A re-offer that keeps the tag and suite in force keeps
///   our key (the rebuilt leg sends with a new SSRC, so no keystream repeats); a new tag or
///   suite gets a new key.
struct SDESExchange: Sendable, Equatable {
    struct Policy: Sendable, Equatable {
        var encryption: TrunkProfile.MediaSettings.Encryption
        /// In order of preference.
        var suites: [SRTPSuite]
        /// Keys may be written into this SDP: the signalling is TLS or the profile allows clear.
        var keysAllowed: Bool
    }

    let policy: Policy
    /// The lines of our pending offer (what an answer's tag must match).
    private(set) var offered: [SDESCrypto] = []
    /// The transport profile of the exchange: what our offers and answers say.
    private(set) var proto = "RTP/AVP"
    /// Our line in force, written into later offers and answers.
    private(set) var local: SDESCrypto?
    /// The SRTP the last exchange set up; nil: plain RTP.
    private(set) var srtp: SRTPConfiguration?
    /// Whether an exchange has completed (then re-offers repeat its outcome).
    private(set) var settled = false

    init(policy: Policy) {
        self.policy = policy
    }

    /// The trunk's policy (`media.encryption`, `media.srtpSuites`, `media.sdesRequiresTLS`)
    /// for SIP that goes over TLS or not.
    init(media: TrunkProfile.MediaSettings, overTLS: Bool) {
        self.init(
            policy: Policy(
                encryption: media.encryption, suites: media.srtpSuites,
                keysAllowed: overTLS || !media.sdesRequiresTLS))
    }

    /// SRTP could be used at all: asked for, and keys may cross this transport.
    var enabled: Bool { policy.encryption != .none && policy.keysAllowed && !policy.suites.isEmpty }

    /// Why no call can be made under this policy, before anything is sent.
    var refusal: String? {
        guard policy.encryption == .required, !enabled else { return nil }
        if policy.suites.isEmpty { return "media.encryption is required but media.srtpSuites is empty" }
        return
            "media.encryption is required but SDES keys may only be sent over TLS (the proxy is not sips: or transport=tls; media.sdesRequiresTLS: false allows it)"
    }

    // MARK: Our offers

    /// The profile and lines of an offer we send: fresh keys for the first offer, the line
    /// in force for a re-offer.
    mutating func offer() -> (proto: String, cryptos: [SDESCrypto]) {
        if settled {
            offered = local.map { [$0] } ?? []
            return (proto, offered)
        }
        guard enabled else {
            offered = []
            proto = "RTP/AVP"
            return (proto, [])
        }
        proto = policy.encryption == .required ? "RTP/SAVP" : "RTP/AVP"
        offered = policy.suites.enumerated().map { i, suite in
            SDESCrypto(tag: UInt32(i + 1), suite: suite.rawValue, keySalt: SRTPConfiguration.randomKey(for: suite))
        }
        return (proto, offered)
    }

    /// The carrier's answer to our offer: the line it picked (by tag) and its key.
    mutating func receiveAnswer(_ m: MediaDescription) throws(NegotiationError) {
        if offered.isEmpty {
            // We offered plain RTP; an answer may not switch to SRTP.
            guard !m.isSecureRTP else {
                throw NegotiationError("the answer is \(m.proto) to a plain RTP offer", secure: true)
            }
            srtp = nil
            local = nil
            settled = true
            return
        }
        for line in m.cryptos {
            guard let ours = offered.first(where: { $0.tag == line.tag && $0.suite == line.suite }),
                let suite = SRTPSuite(rawValue: line.suite), let key = Self.usableKey(line, suite: suite)
            else { continue }
            local = ours
            srtp = SRTPConfiguration(suite: suite, sendKey: ours.keys[0].keySalt, receiveKey: key)
            settled = true
            return
        }
        if policy.encryption == .required || m.isSecureRTP || proto != "RTP/AVP" {
            throw NegotiationError(
                "the answer has no usable SRTP key for our offer (media.encryption is \(policy.encryption.rawValue))",
                secure: true)
        }
        // Best effort: the carrier does not do SRTP.
        proto = "RTP/AVP"
        local = nil
        srtp = nil
        settled = true
    }

    // MARK: The carrier's offers

    /// Our answer's profile and line for the carrier's offer, and the SRTP it sets up.
    mutating func answer(_ m: MediaDescription) throws(NegotiationError) -> (proto: String, crypto: SDESCrypto?) {
        offered = []
        let suites = policy.suites
        let usable =
            enabled
            ? m.cryptos.lazy.compactMap { line -> (SDESCrypto, SRTPSuite, [UInt8])? in
                guard let suite = SRTPSuite(rawValue: line.suite), suites.contains(suite),
                    let key = SDESExchange.usableKey(line, suite: suite)
                else { return nil }
                return (line, suite, key)
            }.first : nil
        guard let (line, suite, theirs) = usable else {
            if m.isSecureRTP {
                let why =
                    enabled
                    ? "no a=crypto line with a suite and key we take"
                    : policy.encryption == .none ? "media.encryption is none" : "SDES keys are only taken over TLS"
                throw NegotiationError("the offer asks for SRTP (\(m.proto)) but \(why)", secure: true)
            }
            if policy.encryption == .required {
                throw NegotiationError(
                    "media.encryption is required but the offer has no usable SRTP key", secure: true)
            }
            proto = m.proto
            local = nil
            srtp = nil
            settled = true
            return (proto, nil)
        }
        let keep = local.flatMap { $0.tag == line.tag && $0.suite == line.suite ? $0.keys.first?.keySalt : nil }
        let ours = keep ?? SRTPConfiguration.randomKey(for: suite)
        proto = m.proto
        local = SDESCrypto(tag: line.tag, suite: line.suite, keySalt: ours)
        srtp = SRTPConfiguration(suite: suite, sendKey: ours, receiveKey: theirs)
        settled = true
        return (proto, local)
    }

    /// The key of a line we can key libsrtp with: one inline key of the suite's length, no
    /// MKI, no session parameter that changes the packet format.
    static func usableKey(_ line: SDESCrypto, suite: SRTPSuite) -> [UInt8]? {
        guard line.keys.count == 1, let key = line.keys.first, key.mki == nil,
            key.keySalt.count == suite.keyMaterialLength
        else { return nil }
        // WSH (a window size hint) and FEC_ORDER change nothing we do; UNENCRYPTED_*,
        // UNAUTHENTICATED_SRTP, KDR and anything unknown would (RFC 4568 §6.3: unknown
        // session parameters make the line unusable).
        for parameter in line.sessionParameters {
            let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? parameter
            guard name == "WSH" || name == "FEC_ORDER" else { return nil }
        }
        return key.keySalt
    }
}
