/// What a `SIPUserAgent` listens on and how it behaves. Every field has a documented default.
public struct SIPUserAgentConfiguration: Sendable {
    /// Sockets to open. Default: UDP on 127.0.0.1 with an OS-chosen port.
    public var listen: [(transport: SIPTransportProtocol, address: SocketAddress)]
    /// `User-Agent` / `Server` header value. Default `irisgw`: no version, which would tell
    /// a scanner which flaws to try.
    public var userAgent: String
    /// User part of our Contact URI. Default `irisgw`.
    public var contactUser: String
    /// Reliable provisional responses (RFC 3262). Default `.supported`.
    public var prack: PRACKPolicy
    /// Session timers (RFC 4028); nil disables them. Default: 1800 s asked, Min-SE 90 s.
    public var sessionTimer: SessionTimerPolicy?
    /// Peers that must authenticate to us (RFC 3261 §22.2): a new INVITE without valid
    /// digest credentials gets 401 with a challenge. Default nil (no authentication).
    public var inboundAuthentication: InboundAuthentication?
    /// RFC 3261 T1 in seconds (retransmission base, and 64*T1 the transaction timeouts).
    /// Default 0.5. Every transaction's timers and the 2xx and reliable-provisional
    /// retransmissions use it (osip's, for branchless RFC 2543 requests only, keep 500 ms).
    public var t1: Double
    /// RFC 3261 T2 in seconds: the longest interval between retransmissions of a non-INVITE
    /// request and of an INVITE's final response. Default 4.
    public var t2: Double = 4
    /// RFC 3261 T4 in seconds: how long a message may stay in the network (Timers I and K on
    /// UDP). Default 5.
    public var t4: Double = 5
    /// Bounds on stream (TCP) peers: connection caps, timeouts, queued bytes.
    /// Default `SIPTransportLimits()`.
    public var transportLimits = SIPTransportLimits()
    /// Flood, scanner and unknown-source defence. Default `SIPDefence()`.
    public var defence = SIPDefence()
    /// DNS for proxies and targets named by host name (RFC 3263). Default: the system's
    /// servers (/etc/resolv.conf), 1.5 s per try, 2 tries, failures cached 30 s.
    public var dns = DNSResolverConfiguration()
    /// The TLS listeners' certificate, key and client verification; required when `listen`
    /// has a TLS entry. Default nil (no TLS listener; TLS toward servers needs none).
    public var tlsServer: SIPTLSServerSettings?
    /// Whether an INVITE with a `Replaces` header (RFC 3891) is handled, and so whether
    /// `Supported: replaces` is advertised (OPTIONS, INVITE, 2xx). Default false: nothing
    /// handles Replaces yet, and advertising it invites transfers that would fail; a Replaces
    /// implementation sets it. A request that requires it gets 420 meanwhile.
    public var handlesReplaces = false
    /// The edge proxy (a SIP URI, `sip:10.0.0.5:5060`) every request the agent originates
    /// outside a dialog goes through (INVITE, CANCEL, REGISTER, OPTIONS): sent to it with a
    /// `Route: <uri;lr>` on top and the Request-URI still naming the target; REGISTER's
    /// Contact names it. In-dialog requests follow the dialog's route set. Default nil.
    public var edgeProxy: SIPURI?

    /// Digest authentication we demand of callers.
    public struct InboundAuthentication: Sendable {
        public var realm: String
        /// Username to password. Passwords come from the environment, never from files.
        public var users: [String: String]
        /// Challenges offered, in order of preference (RFC 8760: SHA-256 first). Default
        /// SHA-256 then MD5; some peers (SIPp) answer only MD5.
        public var algorithms: [DigestAlgorithm]
        public init(realm: String, users: [String: String], algorithms: [DigestAlgorithm] = [.sha256, .md5]) {
            self.realm = realm
            self.users = users
            self.algorithms = algorithms
        }
    }

    public enum PRACKPolicy: String, Sendable {
        /// Never send or ask for reliable provisionals; a `Require: 100rel` INVITE gets 420.
        case disabled
        /// Offer `Supported: 100rel`; send reliable provisionals when the peer requires them.
        case supported
        /// Send every provisional with a body reliably when the peer supports it.
        case required
    }

    public init(
        listen: [(transport: SIPTransportProtocol, address: SocketAddress)] = [
            (.udp, SocketAddress(host: "127.0.0.1", port: 0))
        ],
        userAgent: String = "irisgw", contactUser: String = "irisgw", prack: PRACKPolicy = .supported,
        sessionTimer: SessionTimerPolicy? = SessionTimerPolicy(), t1: Double = 0.5
    ) {
        self.listen = listen
        self.userAgent = userAgent
        self.contactUser = contactUser
        self.prack = prack
        self.sessionTimer = sessionTimer
        self.t1 = t1
    }

    /// The transaction timers' base values.
    public var timers: TransactionTimers { TransactionTimers(t1: t1, t2: t2, t4: t4) }

    /// This agent's reliable-provisional and session-timer policy, as one value a call can
    /// carry (and a call placed for another trunk can override).
    public var callPolicy: SIPCallPolicy {
        SIPCallPolicy(prack: prack, sessionTimer: sessionTimer, replaces: handlesReplaces)
    }

    /// Methods we handle; others known to SIP get 405, unknown ones 501 (RFC 3261 §8.2.1).
    /// REFER and NOTIFY are taken inside a dialog (transfers, RFC 3515); outside one, 481.
    public static let allowedMethods = [
        "INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "PRACK", "UPDATE", "INFO", "REFER", "NOTIFY"
    ]
    static let knownMethods: Set<String> = ["REGISTER", "SUBSCRIBE", "MESSAGE", "PUBLISH"]
}

/// The per-call part of the agent's behaviour: PRACK and session timers. Outgoing calls may
/// take their own (a gateway's trunks differ); incoming calls use the agent's.
public struct SIPCallPolicy: Sendable, Equatable {
    public var prack: SIPUserAgentConfiguration.PRACKPolicy
    /// Session timers (RFC 4028); nil disables them for the call.
    public var sessionTimer: SessionTimerPolicy?
    /// Outgoing calls: seconds the INVITE waits for any response (100 Trying included)
    /// before it is abandoned and the call ends `.noProvisional`, so the caller can try the
    /// next target long before Timer B (64*T1, 32 s). No CANCEL goes to a target that sent
    /// nothing (RFC 3261 §9.1). nil (the default): Timer B alone.
    public var failoverTimeout: Double?
    /// Advertise `replaces` (`SIPUserAgentConfiguration.handlesReplaces`). Default false.
    public var replaces: Bool

    public init(
        prack: SIPUserAgentConfiguration.PRACKPolicy, sessionTimer: SessionTimerPolicy?, failoverTimeout: Double? = nil,
        replaces: Bool = false
    ) {
        self.prack = prack
        self.sessionTimer = sessionTimer
        self.failoverTimeout = failoverTimeout
        self.replaces = replaces
    }

    /// The `Supported` option tags this policy offers.
    var supportedOptionTags: [String] {
        var tags: [String] = replaces ? ["replaces"] : []
        if prack != .disabled { tags.append("100rel") }
        if sessionTimer != nil { tags.append("timer") }
        return tags
    }
}
