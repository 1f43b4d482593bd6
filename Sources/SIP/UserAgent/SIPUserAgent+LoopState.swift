/// The user agent's mutable state: what only its loop touches, in one `LoopBoundBox` so
/// that the agent is checked `Sendable` and every access is checked in debug builds.
extension SIPUserAgent {
    struct LoopState {
        weak var delegate: SIPUserAgentDelegate?
        var counters = Counters()
        let transports: SIPTransports
        let transactions: TransactionLayer
        var calls: [String: [SIPCall]] = [:]
        var mergedRequests = MergedRequests()
        var localAddresses: [SIPPeer] = []
        var inboundDigest: InboundDigestPolicy?
        var digestServer: DigestServer?
        var authFailures: AuthFailureCounter
        var refusals: [SIPRefusal: Int] = [:]
        var isTrustedSource: ((SocketAddress) -> Bool)?
        var isTrustedProxy: ((SocketAddress) -> Bool)?
        var advertisedAddress: ((SIPPeer) -> SIPAdvertisedAddress?)?
        var onConnectionFailure: ((SIPConnectionFailureReport) -> Void)?
        var outOfServiceRetryAfter: (() -> Int?)?
        var recentConnectionFailures: [SIPTransports.StreamKey: SIPConnectionFailureReport] = [:]
        var sources: SourceGuard
        var heapTrim = HeapTrimPolicy()
        var dnsResolver: DNSResolver?
        var heapTrims = 0
        /// What a reload set in place of `configuration.defence` and the incoming calls'
        /// policy (SIPUserAgent+LiveSettings.swift); nil: the configuration's.
        var defenceOverride: SIPDefence?
        var inboundCallPolicyOverride: SIPCallPolicy?

        init(
            transports: SIPTransports, transactions: TransactionLayer, digestServer: DigestServer?,
            authFailures: AuthFailureCounter, sources: SourceGuard
        ) {
            self.transports = transports
            self.transactions = transactions
            self.digestServer = digestServer
            self.authFailures = authFailures
            self.sources = sources
        }
    }

    // The loop's state by name (in place: the receive path mutates some for every message).

    /// Calls by Call-ID.
    var calls: [String: [SIPCall]] {
        get { loopState.value.calls }
        _modify { yield &loopState.value.calls }
    }
    /// Merged-request detection (§8.2.2.2).
    var mergedRequests: MergedRequests {
        get { loopState.value.mergedRequests }
        _modify { yield &loopState.value.mergedRequests }
    }
    var digestServer: DigestServer? {
        get { loopState.value.digestServer }
        set { loopState.value.digestServer = newValue }
    }
    /// Failed authentications per source, toward a ban (`defence.maxAuthFailures`).
    var authFailures: AuthFailureCounter {
        get { loopState.value.authFailures }
        _modify { yield &loopState.value.authFailures }
    }
    /// The last connection failure toward each stream peer, so a call that failed over it
    /// can say why (`connectionFailure(toward:)`). Bounded.
    var recentConnectionFailures: [SIPTransports.StreamKey: SIPConnectionFailureReport] {
        get { loopState.value.recentConnectionFailures }
        _modify { yield &loopState.value.recentConnectionFailures }
    }
    var sources: SourceGuard {
        get { loopState.value.sources }
        _modify { yield &loopState.value.sources }
    }
    var heapTrim: HeapTrimPolicy {
        get { loopState.value.heapTrim }
        _modify { yield &loopState.value.heapTrim }
    }
    /// DNS for names in proxies, routes and targets (`resolver`, `locate`).
    var dnsResolver: DNSResolver? {
        get { loopState.value.dnsResolver }
        set { loopState.value.dnsResolver = newValue }
    }
}
