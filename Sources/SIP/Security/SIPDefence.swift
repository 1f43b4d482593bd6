/// How a `SIPUserAgent` treats traffic from the open internet, in the manner of Kamailio's
/// pike and secfilter modules. Every field has a documented default; each drop is counted in
/// `SIPUserAgent.refusals` (and `/metrics`).
public struct SIPDefence: Sendable, Equatable {
    /// Requests per second an IP address the agent does not trust may send, over a
    /// one-second window; going over bans it for `banSeconds`. Default 50.
    public var requestsPerSecond: Int
    /// Requests per second a trusted source (a trunk, a dialog of ours) may send; the excess
    /// is dropped, never banned, so its calls in progress go on. Default 2000 (a 300-cps
    /// trunk sends about 1000: INVITE, ACK, BYE, OPTIONS).
    public var trustedRequestsPerSecond: Int
    /// Seconds a banned source's datagrams and connections are dropped unread. Default 60.
    public var banSeconds: Double
    /// Answer requests from sources the agent does not trust (outside every trunk's
    /// `allowFrom`, not in a dialog of ours). Default false: such requests get no answer at
    /// all, so a scanner learns nothing, not even that a SIP server is here.
    public var answerUnknownSources: Bool
    /// User-Agent (or From display-name) substrings of SIP scanners, matched without case;
    /// their requests are dropped and the source banned. Default: friendly-scanner, sipvicious,
    /// sipcli, sip-scan, sipsak, iWar, VaxSIPUserAgent, sundayddr, pplsip, SIPBruteForce.
    public var scannerUserAgents: [String]
    /// Server transactions open at once. A new request beyond it gets a stateless 503 with
    /// Retry-After (from a trusted source) or nothing, and opens no transaction. Default 5000.
    public var maxServerTransactions: Int
    /// Sources tracked for rate limiting; the oldest are forgotten beyond it, so a flood
    /// from spoofed addresses cannot grow the table without end. Default 65,536.
    public var maxTrackedSources: Int
    /// Failed digest authentications (wrong credentials, not a missing or stale one) an
    /// untrusted source may make within `authFailureWindowSeconds`; one more bans it for
    /// `banSeconds` (dropped unread, like a flood). Default 5.
    public var maxAuthFailures: Int = 5
    /// The window over which `maxAuthFailures` is counted, in seconds. Default 60.
    public var authFailureWindowSeconds: Double = 60
    /// Hand every message read to the wire tap (traces, pcaps, HEP) before any check, the
    /// banned, unknown, rate-limited and shed ones too: for debugging. Default false: the
    /// tap sees only what the defence lets through (`SIPUserAgent.wireTap`).
    public var tapUnfiltered = false

    public static let knownScanners = [
        "friendly-scanner", "sipvicious", "sipcli", "sip-scan", "sipsak", "iwar",
        "vaxsipuseragent", "sundayddr", "pplsip", "sipbruteforce"
    ]

    public init(
        requestsPerSecond: Int = 50, trustedRequestsPerSecond: Int = 2000, banSeconds: Double = 60,
        answerUnknownSources: Bool = false,
        scannerUserAgents: [String] = SIPDefence.knownScanners, maxServerTransactions: Int = 5000,
        maxTrackedSources: Int = 65_536
    ) {
        self.requestsPerSecond = requestsPerSecond
        self.trustedRequestsPerSecond = trustedRequestsPerSecond
        self.banSeconds = banSeconds
        self.answerUnknownSources = answerUnknownSources
        self.scannerUserAgents = scannerUserAgents
        self.maxServerTransactions = maxServerTransactions
        self.maxTrackedSources = maxTrackedSources
    }

    /// For test peers (the carrier simulator, `irisgw sip-endpoint`, benchmarks' callees):
    /// no rate limit and room for any load; scanners are still dropped.
    public static let testPeer = SIPDefence(
        requestsPerSecond: 1_000_000, trustedRequestsPerSecond: 1_000_000,
        maxServerTransactions: 1_000_000)

    /// True when `message` names a known scanner in User-Agent or in From's display name.
    func isScanner(_ message: SIPMessage) -> Bool {
        let fields = [message[.userAgent], message.from?.displayName].compactMap { $0?.lowercased() }
        return fields.contains { field in scannerUserAgents.contains { field.contains($0.lowercased()) } }
    }
}

/// Why the agent dropped or refused a request; the `what` label in `/metrics`.
public enum SIPRefusal: String, Sendable, CaseIterable {
    case banned = "sip_banned"
    case rateLimited = "sip_rate_limited"
    case scanner = "sip_scanner"
    case unknownSource = "sip_unknown_source"
    case transactionsFull = "sip_transactions_full"
    case malformedFromUnknown = "sip_malformed_unknown_source"
    /// A request that starts work (INVITE, OPTIONS, REGISTER ...) shed unparsed while the
    /// loop was behind its UDP socket.
    case overloaded = "sip_overload_shed"
    /// An INVITE without credentials from a source that must authenticate: 401.
    case authRequired = "sip_auth_required"
    /// An INVITE whose credentials were wrong (or for an unknown user): 401 again.
    case authFailed = "sip_auth_failed"
    /// A source banned for `maxAuthFailures` failures (counted once, at the ban).
    case authBanned = "sip_auth_banned"
}
