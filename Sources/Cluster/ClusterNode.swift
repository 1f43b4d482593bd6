import Crypto
import Foundation
import IOCore
import Logging
import Redis
import Synchronization

/// This node in the cluster: its membership (`ClusterNodeMachine`, driven over Redis on a
/// loop of its own) and the shared state the gateway reads and writes through it: trunk
/// limits, the session directory, dialogs for the survivors, events, locks, secrets.
///
/// Every public method may be called from any thread and never blocks, except the few
/// named `...Waiting`, which are for threads that are not event loops (the control API's
/// workers). When Redis cannot be reached, calls say so (`.unavailable`, nil) at once; the
/// gateway keeps serving what it holds.
public final class ClusterNode: Sendable {
    public let settings: ClusterSettings
    public let keys: ClusterKeys
    /// The loop the Redis clients and the machine live on.
    public let loop: EventLoop
    let redis: RedisClient
    /// A second connection for the blocking read of the event stream.
    let reader: RedisClient
    let state: LoopBoundBox<State>
    /// This process's incarnation: random at start, kept when the node joins again after
    /// the cluster counted it dead (what it writes elsewhere, call records, keeps its name).
    public let incarnation: String
    private let nodesSeen = Atomic<Int>(1)

    /// Live members as of the last heartbeat, this node included (at least 1); from any
    /// thread. The gateway's share of a trunk's limits while Redis is away divides by it.
    public var liveNodesSeen: Int { max(1, nodesSeen.load(ordering: .relaxed)) }

    struct State {
        var machine: ClusterNodeMachine
        weak var delegate: (any ClusterNodeDelegate)?
        var ticker: EventLoop.Timer?
        /// The other live members' records, as of the last heartbeat.
        var peers: [NodeRecord] = []
        /// Which member holds a room, learned from the event stream (whose entries name their
        /// member): a forwarded request finds its holder without asking Redis.
        var holders = HolderCache()
        /// The event stream entry read last.
        var lastEventID = "$"
        var stopped = false
        var statistics = ClusterStatistics()
        /// This node's control API base URL, as other nodes reach it.
        var api = ""
    }

    /// Makes the node (connects nothing yet). Throws when `settings.redis` is not a usable URL.
    public init(settings: ClusterSettings) throws(RedisURLError) {
        let endpoint = try RedisEndpoint.parse(settings.redis)
        let loop: EventLoop
        do { loop = try EventLoop() } catch { fatalError("cannot make the cluster's event loop: \(error)") }
        self.settings = settings
        self.keys = ClusterKeys(prefix: settings.keyPrefix)
        self.loop = loop
        incarnation = Self.newIncarnation()
        redis = RedisClient(endpoint: endpoint, loop: loop)
        reader = RedisClient(endpoint: endpoint, loop: loop)
        state = LoopBoundBox(State(machine: ClusterNodeMachine(settings: settings)), loop: loop)
    }

    /// Joins the cluster and starts the heartbeat, the dead-member checks and the event
    /// reader. `api`: this node's control API base URL, as other nodes reach it.
    public func start(delegate: any ClusterNodeDelegate, api: String) {
        loop.start(name: "irisgw-cluster")
        loop.execute { [self] in
            state.value.delegate = delegate
            state.value.api = api
            redis.onStateChange = { [unowned self] change in
                let now = EventLoop.now()
                feed(change == .connected ? .redisUp(now: now) : .redisDown(now: now))
            }
            redis.start()
            reader.start()
            feed(.start(incarnation: incarnation, now: EventLoop.now()))
            scheduleTick()
            readEvents()
        }
    }

    /// Marks the node draining: no new session is placed on it.
    public func drain() {
        loop.execute { [self] in feed(.drain) }
    }

    /// Leaves the cluster (its record removed when `callsUp` is 0, else left to expire so a
    /// survivor ends those calls), closes the connections and stops the loop; waits at most
    /// `timeout` for Redis. For a thread that is not an event loop (the gateway's shutdown).
    public func stopWaiting(callsUp: Int, timeout: Double = 2) {
        precondition(!EventLoop.isOnAnyLoop, "a loop never waits on another loop")
        let box = WaitBox<Bool>()
        stop(callsUp: callsUp, timeout: timeout) { box.put(true) }
        _ = box.take(within: timeout + 2)
    }

    /// `stopWaiting` for a task.
    public func stop(callsUp: Int, timeout: Double = 2) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            stop(callsUp: callsUp, timeout: timeout) { c.resume() }
        }
    }

    private func stop(callsUp: Int, timeout: Double, then done: @escaping @Sendable () -> Void) {
        guard loop.isRunning else { return done() }
        let finish: @Sendable () -> Void = { [self] in
            loop.execute { [self] in
                redis.close()
                reader.close()
                loop.stop()
                done()
            }
        }
        loop.execute { [self] in
            guard !state.value.stopped else { return finish() }
            state.value.stopped = true
            loop.cancel(state.value.ticker)
            let actions = state.value.machine.handle(.stop(callsUp: callsUp))
            guard actions.contains(.leave), let member = state.value.machine.member else { return finish() }
            let once = Mutex(false)
            let end: @Sendable () -> Void = {
                if once.withLock({ was in
                    defer { was = true }; return !was
                }) {
                    finish()
                }
            }
            let timer = loop.schedule(after: timeout) { end() }
            release(member) { [self] in
                loop.cancel(timer)
                end()
            }
        }
    }

    /// Where the membership stands (for `/health` and tests). On any thread.
    public var status: ClusterStatus {
        get async {
            await loop.run { [self] in currentStatus() }
        }
    }

    /// `status` for a thread that is not an event loop (`/metrics`); nil when the cluster's
    /// loop does not answer within a second.
    public func statusWaiting() -> ClusterStatus? {
        waiting { done in
            loop.execute { [self] in done(currentStatus()) }
        }
    }

    /// The status now. On the loop.
    private func currentStatus() -> ClusterStatus {
        let s = state.value
        return ClusterStatus(
            member: s.machine.member, phase: s.machine.phase, draining: s.machine.draining,
            liveNodes: s.peers.count + (s.machine.phase == .member ? 1 : 0), statistics: s.statistics)
    }

    /// This incarnation's member name (`id#incarnation`), which names its call records.
    public var memberName: String { NodeMember(id: settings.nodeId, incarnation: incarnation).name }

    static func newIncarnation() -> String {
        Crypto.hex(Crypto.randomBytes(count: 6))
    }

    // MARK: The machine

    /// Feeds the machine and carries out its actions. On the loop.
    func feed(_ event: ClusterNodeMachine.Event) {
        guard !state.value.stopped else { return }
        for action in state.value.machine.handle(event) { perform(action) }
    }

    private func scheduleTick() {
        let period = min(settings.heartbeatInterval, settings.reapInterval) / 4
        state.value.ticker = loop.schedule(after: period) { [unowned self] in
            guard !state.value.stopped else { return }
            feed(.tick(now: EventLoop.now()))
            scheduleTick()
        }
    }

    private func perform(_ action: ClusterNodeMachine.Action) {
        switch action {
        case .join: join()
        case .heartbeat: heartbeat()
        case .reap: reap()
        case .takeOver(let dead): takeOver(dead)
        case .finishTakeover(let dead): release(dead) {}
        case .republish: republish()
        case .lostMembership: lostMembership()
        case .leave: if let member = state.value.machine.member { release(member) {} }
        }
    }

    /// The node's record now.
    func record() -> NodeRecord? {
        guard let member = state.value.machine.member else { return nil }
        let load = state.value.delegate?.clusterLoad() ?? (sessions: 0, mediaLoad: 0)
        return NodeRecord(
            id: member.id, incarnation: member.incarnation, api: state.value.api, sessions: load.sessions,
            mediaLoad: load.mediaLoad, draining: state.value.machine.draining)
    }

    private var ttlMs: Int { Int(settings.nodeTTL * 1000) }
    private var takeoverMs: Int { Int(settings.takeoverTTL * 1000) }

    private func join() {
        guard let record = record() else { return }
        redis.eval(
            Self.joinScript, keys: [.init(keys.nodes), .init(keys.takeovers)],
            args: [
                .init(record.member), .init(record.id), .init(ttlMs), .init(Self.json(record)), .init(keys.prefix),
                .init(takeoverMs)
            ]
        ) { [unowned self] result in
            let now = EventLoop.now()
            guard case .success(let value) = result, value.array != nil else { return feed(.joinFailed(now: now)) }
            let previous = (value.array ?? []).compactMap { $0.string.flatMap(NodeMember.init(name:)) }
            feed(.joined(previous: previous, now: now))
            refreshPeers()
        }
    }

    private func heartbeat() {
        guard let record = record() else { return }
        redis.eval(
            Self.heartbeatScript, keys: [.init(keys.nodes), .init(keys.takeovers)],
            args: [.init(record.member), .init(ttlMs), .init(Self.json(record)), .init(keys.prefix)]
        ) { [unowned self] result in
            let now = EventLoop.now()
            switch result {
            case .success(let value):
                feed(.heartbeatDone(value.int == 1 ? .alive : .reaped, now: now))
                refreshPeers()
            case .failure:
                state.value.statistics.heartbeatFailures += 1
                feed(.heartbeatFailed(now: now))
            }
        }
    }

    private func reap() {
        redis.eval(
            Self.reapScript, keys: [.init(keys.nodes), .init(keys.takeovers)],
            args: [.init(takeoverMs), .init(keys.prefix), .init(ttlMs)]
        ) { [unowned self] result in
            let now = EventLoop.now()
            guard case .success(let value) = result else { return feed(.reapFailed(now: now)) }
            let claimed = (value.array ?? []).compactMap { $0.string.flatMap(NodeMember.init(name:)) }
            feed(.reapDone(claimed, now: now))
        }
    }

    /// Reads the live members' records (those whose record key has not expired).
    private func refreshPeers() {
        redis.send(["ZRANGE", .init(keys.nodes), 0, -1]) { [unowned self] result in
            guard case .success(let value) = result else { return }
            let members = (value.array ?? []).compactMap { $0.string.flatMap(NodeMember.init(name:)) }
                .filter { $0 != state.value.machine.member }
            guard !members.isEmpty else {
                state.value.peers = []
                nodesSeen.store(1, ordering: .relaxed)
                return
            }
            redis.send(["MGET"] + members.map { .init(keys.node($0)) }) { [unowned self] result in
                guard case .success(let value) = result else { return }
                state.value.peers = (value.array ?? []).compactMap { $0.bytes.flatMap(Self.decode) }
                nodesSeen.store(state.value.peers.count + 1, ordering: .relaxed)
            }
        }
    }

    private func takeOver(_ dead: NodeMember) {
        state.value.statistics.takeovers += 1
        let lastSeenKey = RedisArgument(keys.prefix + ":reaped:" + dead.name)
        redis.send(["HGETALL", .init(keys.held(dead))]) { [unowned self] held in
            redis.send(["HGETALL", .init(keys.dialogs(dead))]) { [unowned self] dialogs in
                redis.send(["GET", lastSeenKey]) { [unowned self] seen in
                    guard case .success(let heldValue) = held, case .success(let dialogValue) = dialogs else {
                        // Unreadable now: the claim runs out and the takeover is tried again.
                        return
                    }
                    let sessions = Self.pairs(heldValue).compactMap { Self.decode($0.1) as HeldSession? }
                    let dialogMap = Dictionary(
                        Self.pairs(dialogValue).map { ($0.0, String(decoding: $0.1, as: UTF8.self)) },
                        uniquingKeysWith: { a, _ in a })
                    let lastSeen = (try? seen.get().string).flatMap(Double.init).map { $0 / 1000 }
                    let work = DeadMemberSessions(
                        member: dead, sessions: sessions, dialogs: dialogMap, lastSeen: lastSeen)
                    guard let delegate = state.value.delegate else { return }
                    delegate.takeOver(work) { [self] in
                        loop.execute { [self] in feed(.takeoverDone(dead)) }
                    }
                }
            }
        }
    }

    /// Frees what `member` held (leases, directory entries, dialogs, record).
    func release(_ member: NodeMember, then done: @escaping () -> Void) {
        redis.eval(
            Self.releaseScript, keys: [.init(keys.nodes), .init(keys.takeovers), .init(keys.sessions)],
            args: [.init(member.name), .init(keys.prefix)]
        ) { _ in done() }
    }

    private func republish() {
        guard let member = state.value.machine.member, let delegate = state.value.delegate else { return }
        let held = delegate.heldNow()
        state.value.statistics.republished += 1
        for s in held.sessions {
            writeHeld(s, member: member)
            if let direction = s.countedIn {
                redis.send(["HSET", .init(keys.trunkCalls(s.profile, direction)), .init(s.roomId), .init(member.name)])
                {
                    _ in
                }
                redis.send([
                    "SADD", .init(keys.leases(member)), .init(keys.trunkCalls(s.profile, direction) + "\n" + s.roomId)
                ]) { _ in }
            }
        }
        for (room, dialog) in held.dialogs {
            redis.send(["HSET", .init(keys.dialogs(member)), .init(room), .init(dialog)]) { _ in }
        }
    }

    private func lostMembership() {
        state.value.statistics.lostMemberships += 1
        Logger(.cluster, textPrefix: "irisgw: cluster: ").warning(
            "this node was counted dead and its calls ended by another; joining again")
        state.value.delegate?.lostMembership()
        // Joined again under the same name once the survivor has finished with it (the join
        // is refused while the takeover is under way).
        feed(.start(incarnation: incarnation, now: EventLoop.now()))
    }

    // MARK: Helpers

    static let joinScript = RedisScript(source: ClusterScripts.join)
    static let heartbeatScript = RedisScript(source: ClusterScripts.heartbeat)
    static let reapScript = RedisScript(source: ClusterScripts.reap)
    static let releaseScript = RedisScript(source: ClusterScripts.release)
    static let acquireScript = RedisScript(source: ClusterScripts.acquire)
    static let releaseCallScript = RedisScript(source: ClusterScripts.releaseCall)
    static let lockScript = RedisScript(source: ClusterScripts.lock)
    static let unlockScript = RedisScript(source: ClusterScripts.unlock)

    static func json<T: Encodable>(_ value: T) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ bytes: [UInt8]) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// A flat HGETALL reply as (field, value) pairs.
    static func pairs(_ value: RedisValue) -> [(String, [UInt8])] {
        let items = value.array ?? []
        return stride(from: 0, to: items.count - 1, by: 2).compactMap { i in
            guard let field = items[i].string, let bytes = items[i + 1].bytes else { return nil }
            return (field, bytes)
        }
    }
}
