import Cluster
import Crypto
import Foundation
import IOCore
import IrisAPI
import Media
import SIP
import Synchronization

/// The gateway: trunk profiles, the SIP user agent, the media engine, sessions, events and
/// call records, composed. Its public methods are the Iris verbs; each is safe from any
/// thread (the control API's), hops to the SIP loop for the session's state and returns
/// the result or a `GatewayError` that changed nothing.
public final class Gateway: Sendable {
    /// The settings in force: those it started with, and the live ones the last reload
    /// changed (Gateway+Reload.swift). Read it once per use: a reload may change it between reads.
    public var configuration: GatewayConfiguration { settings.withLock { $0 } }
    let settings: Mutex<GatewayConfiguration>
    /// The trunk profiles in force, by name. A session holds the profile it started with.
    public var profiles: [String: TrunkProfile] { trunks.withLock { $0.profiles } }
    /// The profiles and the default one's name, replaced together by a reload.
    let trunks: Mutex<TrunkSet>
    public let ua: SIPUserAgent
    public let media: MediaEngine
    public let events: EventHub
    public let records: CallRecordStore
    public let tokens: RoomTokenSigner
    public let metrics = GatewayMetrics()
    /// Recordings whose files are being completed on their writers' threads (shutdown waits).
    let recordingsFinishing = Atomic<Int>(0)
    /// Deletes recordings past `recordings.retentionDays`; nil when they are kept.
    let recordingRetention = Mutex<RecordingRetention?>(nil)
    /// This node in its cluster (`configuration.cluster`); nil for a gateway on its own.
    public let cluster: ClusterNode?
    /// What the cluster keeps of this node's sessions (Gateway+Cluster.swift).
    let clusterHeld = Mutex(ClusterHeld())
    /// Copies of SIP and RTCP to a HEP collector (`configuration.hep`); nil without one.
    let hep: HEPSender?
    /// The profile a create uses when it names none (`configuration.defaultProfile`, else
    /// the first outbound profile by name).
    public var defaultProfileName: String? { trunks.withLock { $0.defaultName } }

    /// What only the SIP loop touches, checked on every access in debug builds (the
    /// properties below reach it).
    struct LoopState {
        var sessions: [String: GatewaySession] = [:]
        /// Ended sessions' last snapshots, for `GET` after the end (EndedSnapshots.swift).
        var endedSnapshots: EndedSnapshots
        /// Sessions' SIP traces and captures, by room and by Call-ID (Capture/SessionCaptures.swift).
        var captures: SessionCaptures
        var admissions: [String: Admission] = [:]
        /// Creates admitted and not yet in `sessions`, by routing id: counted by a routing id's
        /// quota (Gateway+Outbound.swift), so racing creates cannot pass it together.
        var creating: [String: Int] = [:]
        /// Per-trunk budgets for calls in, apart from the outbound ones.
        var inboundAdmissions: [String: Admission] = [:]
        /// The SIP sockets are open: `/healthz` says ok from then on.
        var started = false
        /// Threads waiting in `waitUntilNoSessions`, signalled when the last session ends.
        var idleWaiters: [DispatchSemaphore] = []
        var draining = false
        /// Registrations and OPTIONS keepalives with the profile each serves.
        var registrations: [(trunk: String, client: RegistrationClient)] = []
        /// The trunks this node registers for its cluster (it holds their locks), by profile.
        var clusterRegistrations: [String: RegistrationClient] = [:]
        var keepalives: [(trunk: String, client: KeepaliveClient)] = []
        /// Registrations a reload ended, kept until their unregister is answered (a challenge
        /// to it needs the client to answer).
        var retiredRegistrations: [RegistrationClient] = []
        /// Bumped when a reload changes or removes a profile: its upkeep still under way
        /// (a DNS answer, a retry, the cluster's lock loop) sees it is stale and stops.
        var trunkGenerations: [String: Int] = [:]
        /// Addresses DNS gave for the trunks' named proxies, by profile, and all of them:
        /// trusted like numeric proxies.
        var locatedByTrunk: [String: Set<String>] = [:]
        var locatedProxyHosts = Set<String>()
        /// TLS targets by the address they were located at, for in-dialog requests there.
        var tlsTargets: [SocketAddress: SIPTLSTarget] = [:]
        /// Log lines left this minute for TLS failures peers cause.
        var tlsLogBudget = TLSLogBudget()
    }
    let loopState: LoopBoundBox<LoopState>
    /// What all live captures may hold together (`captures.liveBudget`, for any thread).
    let captureBudget: CaptureBudget

    // The SIP loop's state by name (in place: the tap mutates `captures` for every message).
    var sessions: [String: GatewaySession] {
        get { loopState.value.sessions }
        _modify { yield &loopState.value.sessions }
    }
    var endedSnapshots: EndedSnapshots {
        get { loopState.value.endedSnapshots }
        _modify { yield &loopState.value.endedSnapshots }
    }
    var captures: SessionCaptures {
        get { loopState.value.captures }
        _modify { yield &loopState.value.captures }
    }
    var admissions: [String: Admission] {
        get { loopState.value.admissions }
        _modify { yield &loopState.value.admissions }
    }
    var creating: [String: Int] {
        get { loopState.value.creating }
        _modify { yield &loopState.value.creating }
    }
    var inboundAdmissions: [String: Admission] {
        get { loopState.value.inboundAdmissions }
        _modify { yield &loopState.value.inboundAdmissions }
    }
    /// Inbound sessions alive, against `configuration.inboundSessionLimit`: what the trunks'
    /// inbound budgets hold (every inbound session is admitted by its trunk's).
    var inboundSessionCount: Int { inboundAdmissions.values.reduce(0) { $0 + $1.active } }
    var started: Bool {
        get { loopState.value.started }
        set { loopState.value.started = newValue }
    }
    var idleWaiters: [DispatchSemaphore] {
        get { loopState.value.idleWaiters }
        _modify { yield &loopState.value.idleWaiters }
    }
    var draining: Bool {
        get { loopState.value.draining }
        set { loopState.value.draining = newValue }
    }
    var registrations: [(trunk: String, client: RegistrationClient)] {
        get { loopState.value.registrations }
        _modify { yield &loopState.value.registrations }
    }
    var clusterRegistrations: [String: RegistrationClient] {
        get { loopState.value.clusterRegistrations }
        _modify { yield &loopState.value.clusterRegistrations }
    }
    var keepalives: [(trunk: String, client: KeepaliveClient)] {
        get { loopState.value.keepalives }
        _modify { yield &loopState.value.keepalives }
    }
    var retiredRegistrations: [RegistrationClient] {
        get { loopState.value.retiredRegistrations }
        _modify { yield &loopState.value.retiredRegistrations }
    }
    var trunkGenerations: [String: Int] {
        get { loopState.value.trunkGenerations }
        _modify { yield &loopState.value.trunkGenerations }
    }
    var locatedByTrunk: [String: Set<String>] {
        get { loopState.value.locatedByTrunk }
        _modify { yield &loopState.value.locatedByTrunk }
    }
    var locatedProxyHosts: Set<String> {
        get { loopState.value.locatedProxyHosts }
        _modify { yield &loopState.value.locatedProxyHosts }
    }
    var tlsTargets: [SocketAddress: SIPTLSTarget] {
        get { loopState.value.tlsTargets }
        _modify { yield &loopState.value.tlsTargets }
    }
    var tlsLogBudget: TLSLogBudget {
        get { loopState.value.tlsLogBudget }
        _modify { yield &loopState.value.tlsLogBudget }
    }

    /// Called (on the SIP loop) with every inbound `onNotification` (notify), for the
    /// webhook. Must not block. Set before `start`.
    public var notifier: (@Sendable (SessionEvent) -> Void)? {
        get { notifierSlot.withLock { $0 } }
        set { notifierSlot.withLock { $0 = newValue } }
    }
    private let notifierSlot = Mutex<(@Sendable (SessionEvent) -> Void)?>(nil)

    /// `cluster`: the node made already (serve makes it first, for the cluster's secrets);
    /// nil makes one from `configuration.cluster` when that is set.
    public init(configuration: GatewayConfiguration, profiles: [TrunkProfile], cluster: ClusterNode? = nil) throws {
        settings = Mutex(configuration)
        let trunkSet = TrunkSet(profiles, defaultProfile: configuration.defaultProfile)
        trunks = Mutex(trunkSet)
        var sip = configuration.sip
        sip.listen = configuration.sipListen
        // A trunk whose TLS files cannot be used stops the start, naming its profile.
        try Self.checkTLS(profiles)
        // One user agent serves every trunk. Outbound calls carry their own trunk's PRACK and
        // session-timer policy; inbound ones (matched to a trunk only after the INVITE is
        // read) use the default profile's (docs/sip-profiles.md).
        if let p = trunkSet.inboundPolicyProfile {
            let policy = Self.callPolicy(p)
            sip.prack = policy.prack
            sip.sessionTimer = policy.sessionTimer
        }
        // An INVITE with Replaces takes the place of a session's trunk leg (Gateway+Replaces).
        sip.handlesReplaces = true
        ua = try SIPUserAgent(configuration: sip)
        var state = LoopState(
            endedSnapshots: EndedSnapshots(retention: configuration.eventRetention),
            captures: SessionCaptures(
                retention: configuration.eventRetention, maxEndedMediaBytes: configuration.capture.maxEndedBytes,
                maxLiveMediaBytes: configuration.capture.maxLiveBytes))
        for p in profiles {
            if let o = p.outbound {
                state.admissions[p.name] = Admission(maxConcurrent: o.maxConcurrentCalls, perSecond: o.callsPerSecond)
            }
            if let i = p.inbound {
                state.inboundAdmissions[p.name] = Admission(
                    maxConcurrent: i.maxConcurrentCalls, perSecond: i.callsPerSecond)
            }
        }
        captureBudget = state.captures.liveBudget
        // Built before the SIP loop runs: the loop owns it from `start` on.
        loopState = LoopBoundBox(state, loop: ua.loop)
        hep = try configuration.hep.map { try HEPSender($0) }
        media = try MediaEngine(
            configuration: .init(
                threads: configuration.mediaThreads, host: configuration.rtpHost,
                portRange: configuration.rtpPorts,
                realtimePriority: configuration.mediaRealtimePriority.map { Int32($0) }, io: configuration.mediaIO))
        if let why = media.realtimeError {
            Log.media.warning("media threads keep normal scheduling: \(why) (needs CAP_SYS_NICE or RLIMIT_RTPRIO)")
        }
        events = EventHub(retention: configuration.eventRetention)
        try PrivateFiles.prepareDirectory(configuration.dataDir)
        let node = try cluster ?? configuration.cluster.map { settings throws in try ClusterNode(settings: settings) }
        self.cluster = node
        // A shared PostgreSQL table names each row's node (its incarnation), so a survivor
        // closes the rows of the one that died; a node's own SQLite file needs no name.
        var nodeId = configuration.nodeId
        if let node, case .postgres = configuration.callRecords { nodeId = node.memberName }
        records = try CallRecordStore.open(
            configuration.callRecords, nodeId: nodeId, retention: configuration.callRecordRetention)
        tokens = try RoomTokenSigner.loadOrCreate(dataDir: configuration.dataDir)
        ua.delegate = self
        installTrustAndAddresses(profiles, configuration)
        // Called on the SIP loop, where `tlsTargets` lives.
        ua.tlsTarget = { [unowned self] address in tlsTargets[address] }
        ua.onConnectionFailure = { [unowned self] report in logConnectionFailure(report) }
        // Called on the SIP loop, where `draining` lives: a balancer's OPTIONS probe sees 503.
        ua.outOfServiceRetryAfter = { [unowned self] in draining ? Self.drainingRetryAfter : nil }
        if let hep {
            ua.wireTap = { [unowned self] message in
                captures.sip(message)
                hep.sip(message)
            }
        } else {
            ua.wireTap = { [unowned self] message in captures.sip(message) }
        }
    }

    /// Opens the SIP sockets and starts registrations and keepalives; returns the SIP addresses.
    @discardableResult
    public func start() throws -> [SIPPeer] {
        let bound = try ua.start()
        ua.loop.sync { [self] in
            byeAbandonedDialogs()
            startTrunkMaintenance()
            started = true
        }
        if let cluster {
            events.setOutlet { [cluster] event, routingId in cluster.publish(event, routingId: routingId) }
            cluster.start(delegate: self, api: configuration.publicURL)
        }
        if let days = configuration.recordings.retentionDays {
            let retention = RecordingRetention(directory: configuration.recordingsDirectory, days: days)
            recordingRetention.withLock { $0 = retention }
        }
        return bound
    }

    /// Ends every session now (BYE or CANCEL), waits up to `timeout` for their endings, then
    /// stops SIP and media. Every session gets its final events and its record.
    public func shutdown(timeout: Double = 5) {
        ua.loop.sync { [self] in
            draining = true
            for s in sessions.values { s.handle(.close) }
        }
        _ = waitUntilNoSessions(timeout: timeout)
        // Whatever did not finish in time ends now, so no session is left without its end.
        ua.loop.sync { [self] in
            for s in sessions.values { s.handle(.sipFailure(nil)) }
            handOverRegistrations()
            for r in registrations { r.client.stop() }
            for k in keepalives { k.client.stop() }
        }
        // The endings just forced wait for their media threads; then the unregisters and
        // final BYEs must leave before the sockets close.
        _ = waitUntilNoSessions(timeout: 1)
        // Recordings complete their files on their own threads: give them a moment.
        for _ in 0..<300 where recordingsFinishing.load(ordering: .acquiring) > 0 { usleep(10_000) }
        recordingRetention.withLock { $0?.stop() }
        let sent = DispatchSemaphore(value: 0)
        ua.loop.execute { [ua] in ua.whenSent(timeout: 1) { sent.signal() } }
        sent.wait()
        cluster?.stopWaiting(callsUp: activeSessionCount)
        ua.shutdown()
        media.shutdown()
        records.flush()
        records.close()
    }

    /// Retry-After seconds on what a draining gateway refuses (new INVITEs, OPTIONS).
    static let drainingRetryAfter = 30

    /// Stops taking new sessions; existing ones go on (SIGTERM's first step). OPTIONS are
    /// answered 503 from then on.
    public func drain() {
        ua.loop.sync { [self] in draining = true }
        cluster?.drain()
    }

    /// Responses the SIP layer sent on its own (400, 403, 404, 481 ...), by code.
    public func sipResponseCounts() -> [Int: Int] { ua.loop.sync { [self] in ua.counters.statelessResponses } }

    /// SIP transactions alive now and heap trims so far (`/metrics`).
    public func sipLoad() -> (transactions: Int, heapTrims: Int) {
        ua.loop.sync { [self] in (ua.liveTransactions, ua.heapTrims) }
    }

    public var activeSessionCount: Int { ua.loop.sync { [self] in sessions.count } }

    /// Waits (not on an event loop) until no session is left, at most `timeout` seconds;
    /// true when none is. Woken by the last session's end, never polled.
    public func waitUntilNoSessions(timeout: Double) -> Bool {
        let idle = DispatchSemaphore(value: 0)
        let empty: Bool = ua.loop.sync { [self] in
            if sessions.isEmpty { return true }
            idleWaiters.append(idle)
            return false
        }
        return empty || idle.wait(timeout: .now() + timeout) == .success
    }

    /// A trunk's PRACK and session-timer settings as the SIP layer takes them.
    static func callPolicy(_ p: TrunkProfile) -> SIPCallPolicy {
        SIPCallPolicy(
            prack: SIPUserAgentConfiguration.PRACKPolicy(rawValue: p.sip.prack.rawValue) ?? .supported,
            sessionTimer: p.sip.sessionTimerSec > 0 ? SessionTimerPolicy(sessionExpires: p.sip.sessionTimerSec) : nil)
    }

    func profile(named name: String?) throws(GatewayError) -> TrunkProfile {
        // One read, so a reload in between cannot pair one set's default with another's profiles.
        let set = trunks.withLock { $0 }
        guard let n = name ?? set.defaultName else { throw .badRequest("no trunk profile is configured") }
        guard let p = set.profiles[n] else { throw .badRequest("unknown profile \"\(n)\"") }
        return p
    }

    func mediaConfiguration(
        trunk: NegotiatedLeg, platform: NegotiatedLeg, profile: TrunkProfile
    ) -> MediaCallConfiguration {
        var call = MediaCallConfiguration(
            trunk: trunk.configuration(inbandDTMF: profile.media.dtmf == .inband),
            platform: platform.configuration(),
            // Supervision starts at the answer (`armRTPTimeout`): ringing is silent.
            rtpTimeout: 0)
        call.platform.webrtc?.setupTimeout = configuration.webrtcSetupTimeout
        return call
    }

    /// Opens media for a session, with events hopping to the SIP loop.
    /// Opens a session's media; with `admitting`, refused (503 / -503 with Retry-After,
    /// counted) when the media threads would pass `mediaLoadBudget`.
    func openMedia(
        trunk: NegotiatedLeg, platform: NegotiatedLeg, profile: TrunkProfile, roomId: String,
        capture: SessionCapture?, admitting: Bool = false
    ) throws(GatewayError) -> MediaCall {
        do {
            let loop = ua.loop
            var call = mediaConfiguration(trunk: trunk, platform: platform, profile: profile)
            if let capture, capture.needsMediaTap { call.trunkTap = capture }
            return try media.openCall(
                call,
                loadBudget: admitting ? configuration.mediaLoadBudget : nil
            ) { [weak self] event in
                guard let gateway = self else { return }
                loop.execute { gateway.sessions[roomId]?.mediaEvent(event) }
            }
        } catch let overload as MediaOverloadError {
            metrics.mediaRefused(.outbound)
            throw GatewayError(
                IrisCode.serviceUnavailable, .unavailable, "the gateway is at its media capacity (\(overload))",
                retryAfter: overload.retryAfter)
        } catch {
            throw .unavailable("no media ports available: \(error)")
        }
    }

    static func mergeError(_ s: GatewaySession, _ why: String) -> SessionEvent {
        var e = SessionEvent(event: .onSessionError, roomId: s.roomId, traceId: s.traceId)
        e.code = IrisCode.incorrectState
        e.message = "merge failed: " + why
        return e
    }

    static func newRoomId() -> String { Crypto.hex(Crypto.randomBytes(count: 12)) }
    static func newTraceId() -> String { UUID().uuidString.lowercased() }

    // MARK: Session ends

    /// Called by a session's `finish`: completes the record, frees limits, keeps a snapshot.
    func sessionEnded(_ s: GatewaySession, reason: EndReason, sip: SIPDetails?, stats: [MediaLeg: MediaLegStatistics]?)
    {
        let endedAt = Date().timeIntervalSince1970
        let trunk = stats?[.trunk]
        s.logEnded(reason, sip)
        records.finished(roomId: s.roomId) { r in
            r.endedAt = endedAt
            r.endReason = reason.rawValue
            r.sipCode = sip?.code
            r.sipReason = sip?.reason
            r.q850Cause = sip?.cause
            r.packetsLost = trunk?.packetsLost
            r.jitterMs = trunk?.jitterMs
            r.roundTripMs = trunk?.roundTripMs
        }
        clusterSessionEnded(s)
        if s.machine.direction == .outbound {
            admissions[s.profile.name]?.release()
        } else {
            inboundAdmissions[s.profile.name]?.release()
        }
        metrics.ended(reason)
        if let st = stats { metrics.media(st) }
        sessions[s.roomId] = nil
        if sessions.isEmpty {
            for waiter in idleWaiters { waiter.signal() }
            idleWaiters.removeAll()
        }
        endedSnapshots.keep(s.snapshot(stats: stats), of: s.roomId, now: EventLoop.now())
        captures.ended(roomId: s.roomId, now: EventLoop.now())
        events.prune()
        s.endTransfers()
        // Merged partners go with the active session; a partner that ends leaves the host.
        for other in s.merged where !other.machine.isEnded { other.handle(.close) }
        s.mergedInto?.merged.removeAll { $0 === s }
        if let host = s.mergePending {
            s.mergePending = nil
            host.handle(.forward(Self.mergeError(host, "the held session ended")))
        }
    }

    /// Runs `work` on the SIP loop with the live session, or throws not-found / ended.
    func withSession<T: Sendable>(
        _ roomId: String, _ work: @escaping @Sendable (GatewaySession) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        let result: Result<T, GatewayError> = ua.loop.sync { [self] in
            guard let s = sessions[roomId] else {
                return .failure(endedSnapshots[roomId] != nil ? .ended(roomId) : .notFound(roomId))
            }
            do throws(GatewayError) { return .success(try work(s)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
