import Cluster
import Foundation
import IrisAPI
import Synchronization
import TestSupport
import Testing

/// `ClusterNode` against a real `redis-server`: membership, a dead member taken over by one
/// survivor, trunk limits across nodes, locks, events, write-back after Redis lost
/// everything, and the shared secrets. Nodes run with short intervals (0.2 s heartbeat,
/// 1 s TTL) so deaths are seen quickly; every wait polls a condition.
@Suite(.serialized) struct ClusterNodeTests {
    /// Records what the cluster asks of a gateway.
    final class Delegate: ClusterNodeDelegate {
        struct State {
            var takeovers: [DeadMemberSessions] = []
            var lost = 0
            var events: [SessionEvent] = []
            var held: [HeldSession] = []
            var dialogs: [String: String] = [:]
        }
        let state = Mutex(State())
        func clusterLoad() -> (sessions: Int, mediaLoad: Double) { (state.withLock { $0.held.count }, 0.1) }
        func takeOver(_ dead: DeadMemberSessions, done: @escaping @Sendable () -> Void) {
            state.withLock { $0.takeovers.append(dead) }
            done()
        }
        func lostMembership() { state.withLock { $0.lost += 1 } }
        func heldNow() -> (sessions: [HeldSession], dialogs: [String: String]) {
            state.withLock { ($0.held, $0.dialogs) }
        }
        func remoteEvent(_ event: SessionEvent, routingId: String?) { state.withLock { $0.events.append(event) } }
    }

    static func node(_ id: String, _ redis: RedisServer, prefix: String) throws -> ClusterNode {
        var s = ClusterSettings(redis: redis.url, nodeId: id)
        s.heartbeatInterval = 0.2
        s.reapInterval = 0.2
        s.nodeTTL = 1
        s.keyPrefix = prefix
        return try ClusterNode(settings: s)
    }

    /// `node(...)` started with `delegate`.
    static func started(
        _ id: String, _ redis: RedisServer, prefix: String, _ delegate: Delegate = Delegate()
    ) throws -> ClusterNode {
        let n = try node(id, redis, prefix: prefix)
        n.start(delegate: delegate, api: "http://127.0.0.1:1")
        return n
    }

    /// Whether `node` finds `room` held by another node (not merely unanswered).
    static func heldElsewhere(_ node: ClusterNode, _ room: String) async -> Bool {
        if case .node = await holder(node, room) { return true }
        return false
    }

    static func joined(_ nodes: ClusterNode...) async -> Bool {
        await eventually(timeout: 10) {
            for n in nodes {
                let status = await n.status
                if status.phase != .member || status.liveNodes < nodes.count { return false }
            }
            return true
        }
    }

    static func session(_ room: String, counted: String? = nil) -> HeldSession {
        HeldSession(
            roomId: room, traceId: "t-\(room)", routingId: "alice", direction: "outbound", profile: "trunk",
            startedAt: 1, countedIn: counted)
    }

    static func holder(_ node: ClusterNode, _ room: String) async -> ClusterNode.Holder {
        await withCheckedContinuation { c in node.holder(of: room) { c.resume(returning: $0) } }
    }

    static func acquire(
        _ node: ClusterNode, _ room: String, max: Int = 4, cps: Int = 100, trunk: String = "trunk"
    ) async -> TrunkLimitDecision {
        await withCheckedContinuation { c in
            node.acquire(trunk: trunk, direction: "outbound", roomId: room, maxConcurrent: max, perSecond: cps) {
                c.resume(returning: $0)
            }
        }
    }

    static func counted(_ node: ClusterNode) async -> Int? {
        await withCheckedContinuation { c in
            node.countedCalls(trunk: "trunk", direction: "outbound") { c.resume(returning: $0) }
        }
    }

    @Test func aDeadMembersSessionsAreTakenOverByOneSurvivor() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let (da, db, dc) = (Delegate(), Delegate(), Delegate())
        let a = try Self.started("a", redis, prefix: "t1", da), b = try Self.started("b", redis, prefix: "t1", db)
        let c = try Self.started("c", redis, prefix: "t1", dc)
        #expect(await Self.joined(a, b, c))
        for i in 0..<3 {
            #expect(await Self.acquire(a, "r\(i)") == .counted)
            a.sessionStarted(Self.session("r\(i)", counted: "outbound"))
            a.dialogAnswered(roomId: "r\(i)", dialog: "{\"dialog\":\(i)}")
        }
        #expect(await eventually(timeout: 5) { await Self.holder(b, "r2") != .none })
        guard case .node(let record) = await Self.holder(b, "r0") else {
            Issue.record("b does not find a's session")
            for n in [a, b, c] { await n.stop(callsUp: 0) }
            return
        }
        #expect(record.id == "a")
        #expect(await Self.counted(b) == 3)
        // a dies: it stops heartbeating without leaving (calls up).
        await a.stop(callsUp: 3)
        #expect(
            await eventually(timeout: 10) {
                (db.state.withLock { $0.takeovers.count } + dc.state.withLock { $0.takeovers.count }) == 1
            })
        let took = (db.state.withLock { $0.takeovers } + dc.state.withLock { $0.takeovers })[0]
        #expect(took.member.id == "a")
        #expect(Set(took.sessions.map(\.roomId)) == ["r0", "r1", "r2"])
        #expect(took.dialogs["r1"] == "{\"dialog\":1}")
        #expect(took.lastSeen != nil)
        // Released: the leases and the directory entries are gone, and nobody takes it over again.
        #expect(await eventually(timeout: 5) { await Self.counted(b) == 0 })
        #expect(await Self.holder(c, "r0") == .none)
        #expect(await eventually(timeout: 5) { await b.status.liveNodes == 2 })
        // Longer than the TTL: a second claim would show.
        #expect(
            !(await eventually(timeout: 1.5) {
                (db.state.withLock { $0.takeovers.count } + dc.state.withLock { $0.takeovers.count }) > 1
            }))
        await b.stop(callsUp: 0)
        await c.stop(callsUp: 0)
    }

    @Test func anEndedSessionStaysWithItsHolderWhileItKeepsIt() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let a = try Self.started("a", redis, prefix: "t5"), b = try Self.started("b", redis, prefix: "t5")
        #expect(await Self.joined(a, b))
        for room in ["kept", "gone"] { a.sessionStarted(Self.session(room)) }
        #expect(await eventually(timeout: 5) { await Self.holder(b, "gone") != .none })
        a.sessionEnded(Self.session("kept"), keptFor: 60)
        a.sessionEnded(Self.session("gone"))
        // Kept: a still answers for it (its ended snapshot); not kept: nobody does.
        #expect(await eventually(timeout: 5) { await Self.holder(b, "gone") == .none })
        guard case .node(let record) = await Self.holder(b, "kept") else {
            Issue.record("b does not find the ended session's node")
            for n in [a, b] { await n.stop(callsUp: 0) }
            return
        }
        #expect(record.id == "a")
        #expect(await Self.holder(a, "kept") == .here)
        for n in [a, b] { await n.stop(callsUp: 0) }
    }

    @Test func trunkLimitsHoldAcrossNodes() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let nodes = try ["a", "b", "c"].map { try Self.started($0, redis, prefix: "t2") }
        #expect(await Self.joined(nodes[0], nodes[1], nodes[2]))
        var decisions: [TrunkLimitDecision] = []
        for i in 0..<6 { decisions.append(await Self.acquire(nodes[i % 3], "call\(i)")) }
        #expect(decisions.filter { $0 == .counted }.count == 4)
        #expect(decisions.filter { $0 == .atConcurrentLimit }.count == 2)
        #expect(await Self.acquire(nodes[0], "call0") == .counted, "a call counted twice is one call")
        nodes[0].release(trunk: "trunk", direction: "outbound", roomId: "call0")
        #expect(await eventually(timeout: 5) { await Self.counted(nodes[1]) == 3 })
        #expect(await Self.acquire(nodes[2], "call9") == .counted)
        // The rate: 2 per second across the cluster.
        let rates = [
            await Self.acquire(nodes[0], "x1", max: 100, cps: 2, trunk: "rated"),
            await Self.acquire(nodes[1], "x2", max: 100, cps: 2, trunk: "rated"),
            await Self.acquire(nodes[2], "x3", max: 100, cps: 2, trunk: "rated")
        ]
        // A second boundary may fall between the three: at least one refusal unless it did.
        #expect(rates.filter { $0 == .counted }.count >= 2)
        #expect(rates.contains(.atRateLimit) || rates.filter { $0 == .counted }.count == 3)
        for n in nodes { await n.stop(callsUp: 0) }
    }

    @Test func oneHolderOfALockTakenOverWhenItStopsRenewing() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let a = try Self.started("a", redis, prefix: "t3"), b = try Self.started("b", redis, prefix: "t3")
        #expect(await Self.joined(a, b))
        func hold(_ n: ClusterNode) async -> Bool? {
            await withCheckedContinuation { c in n.hold(lock: "trunk", ttl: 0.6) { c.resume(returning: $0) } }
        }
        #expect(await hold(a) == true)
        #expect(await hold(b) == false)
        #expect(await hold(a) == true, "renewed by its holder")
        await a.stop(callsUp: 1)
        #expect(await eventually(timeout: 5) { await hold(b) == true })
        await b.stop(callsUp: 0)
    }

    @Test func eventsReachTheOtherNodesOnlyInOrder() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let da = Delegate(), db = Delegate()
        let a = try Self.started("a", redis, prefix: "t4", da), b = try Self.started("b", redis, prefix: "t4", db)
        #expect(await Self.joined(a, b))
        for seq in 1...20 {
            var e = SessionEvent(event: .onSessionSIPStatus, roomId: "r", traceId: "t")
            e.seq = seq
            a.publish(e, routingId: "alice")
        }
        #expect(await eventually(timeout: 5) { db.state.withLock { $0.events.count } == 20 })
        #expect(db.state.withLock { $0.events.map(\.seq) } == Array(1...20))
        #expect(da.state.withLock { $0.events.isEmpty }, "a node does not read its own events back")
        // A node that joins later reads what came before (for `since`).
        let dc = Delegate()
        let c = try Self.started("c", redis, prefix: "t4", dc)
        #expect(await eventually(timeout: 5) { dc.state.withLock { $0.events.count } == 20 })
        for n in [a, b, c] { await n.stop(callsUp: 0) }
    }

    /// A room's holder learned from the event stream is found without Redis: with Redis
    /// paused (nothing answers), the holder of a room whose events came is still named.
    @Test func theHolderOfARoomSeenOnTheStreamNeedsNoRoundTrip() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let db = Delegate()
        let a = try Self.started("a", redis, prefix: "t7"), b = try Self.started("b", redis, prefix: "t7", db)
        #expect(await Self.joined(a, b))
        var e = SessionEvent(event: .onSessionCreated, roomId: "seen", traceId: "t")
        e.seq = 1
        a.publish(e, routingId: nil)
        #expect(await eventually(timeout: 5) { db.state.withLock { $0.events.count } == 1 })
        redis.pause()
        guard case .node(let record) = await Self.holder(b, "seen") else {
            Issue.record("the holder was not found without Redis")
            redis.resume()
            return
        }
        #expect(record.id == "a")
        #expect(await Self.holder(b, "never-seen") == .unavailable, "a room not seen asks Redis")
        redis.resume()
        await a.stop(callsUp: 0)
        await b.stop(callsUp: 0)
    }

    @Test func aNodeWritesBackWhatItHoldsAfterRedisLostEverything() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let da = Delegate()
        let a = try Self.started("a", redis, prefix: "t5", da), b = try Self.started("b", redis, prefix: "t5")
        #expect(await Self.joined(a, b))
        let held = Self.session("kept", counted: "outbound")
        da.state.withLock {
            $0.held = [held]
            $0.dialogs = ["kept": "{}"]
        }
        a.sessionStarted(held)
        #expect(
            await eventually(timeout: 5) { await Self.heldElsewhere(b, "kept") })
        try await redis.restart()  // no persistence: Redis comes back empty
        #expect(
            await eventually(timeout: 15) { await Self.heldElsewhere(b, "kept") })
        #expect(await Self.counted(b) == 1)
        #expect(await Self.joined(a, b))
        #expect(await a.status.statistics.republished >= 1)
        await a.stop(callsUp: 0)
        await b.stop(callsUp: 0)
    }

    /// Something done once in the cluster (an inbound call's webhook, keyed by its Call-ID):
    /// the first node to ask does it, the other does not.
    @Test func onceIsOnceAcrossNodes() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let a = try Self.started("a", redis, prefix: "t8"), b = try Self.started("b", redis, prefix: "t8")
        func once(_ n: ClusterNode, _ key: String) async -> Bool {
            await withCheckedContinuation { c in n.once(key, ttl: 60) { c.resume(returning: $0) } }
        }
        #expect(await once(a, "webhook:call-1"))
        #expect(!(await once(b, "webhook:call-1")))
        #expect(!(await once(a, "webhook:call-1")))
        #expect(await once(b, "webhook:call-2"))
        await a.stop(callsUp: 0)
        await b.stop(callsUp: 0)
    }

    @Test func theFirstNodesSecretsAreEveryNodes() async throws {
        let redis = try await RedisServer()
        defer { redis.stop() }
        let a = try Self.node("a", redis, prefix: "t6"), b = try Self.node("b", redis, prefix: "t6")
        let first = try await offThePool(throwing: { () throws(ClusterStartError) in
            try a.sharedSecretsWaiting(["apiKey": "key-a", "roomTokenSecret": "secret-a"])
        })
        let second = try await offThePool(throwing: { () throws(ClusterStartError) in
            try b.sharedSecretsWaiting(["apiKey": "key-b", "roomTokenSecret": "secret-b"])
        })
        #expect(first == ["apiKey": "key-a", "roomTokenSecret": "secret-a"])
        #expect(second == first)
        await a.stop(callsUp: 0)
        await b.stop(callsUp: 0)
    }
}
