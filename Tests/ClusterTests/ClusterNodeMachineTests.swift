import Cluster
import Testing

/// `ClusterNodeMachine`: a node's membership, fed events with no Redis and no clock. The
/// races of the machine's table are rows here: events in, the actions and phase expected out.
@Suite struct ClusterNodeMachineTests {
    typealias E = ClusterNodeMachine.Event
    typealias A = ClusterNodeMachine.Action

    static let me = NodeMember(id: "gw1", incarnation: "b")
    static let old = NodeMember(id: "gw1", incarnation: "a")
    static let dead = NodeMember(id: "gw2", incarnation: "x")

    static func machine() -> ClusterNodeMachine {
        var s = ClusterSettings(redis: "redis://127.0.0.1:6379", nodeId: "gw1")
        s.heartbeatInterval = 1
        s.reapInterval = 1
        return ClusterNodeMachine(settings: s)
    }

    /// A member after start and join at t = 0, with its first tick's heartbeat and reap answered.
    static func member() -> ClusterNodeMachine {
        var m = machine()
        _ = m.handle(.start(incarnation: "b", now: 0))
        _ = m.handle(.joined(previous: [], now: 0))
        return m
    }

    struct Row: Sendable, CustomStringConvertible {
        var description: String
        var member = true
        var events: [E]
        /// The actions of the last event.
        var actions: [A]
        var phase: ClusterNodeMachine.Phase
    }

    static let rows: [Row] = [
        Row(
            description: "start joins", member: false, events: [.start(incarnation: "b", now: 0)],
            actions: [.join], phase: .joining),
        Row(
            description: "a restart under the same id takes over its older incarnation", member: false,
            events: [.start(incarnation: "b", now: 0), .joined(previous: [old], now: 0)],
            actions: [.takeOver(old)], phase: .member),
        Row(
            description: "a failed join is tried again after the heartbeat interval", member: false,
            events: [.start(incarnation: "b", now: 0), .joinFailed(now: 0.1), .tick(now: 0.5), .tick(now: 1.2)],
            actions: [.join], phase: .joining),
        Row(
            description: "a member's tick heartbeats and reaps", events: [.tick(now: 1)],
            actions: [.heartbeat, .reap], phase: .member),
        Row(
            description: "no second heartbeat while one is unanswered (a slow Redis)",
            events: [.tick(now: 1), .reapDone([], now: 1.1), .tick(now: 2.5)], actions: [.reap], phase: .member),
        Row(
            description: "a dead member claimed is taken over",
            events: [.tick(now: 1), .reapDone([dead], now: 1.1)], actions: [.takeOver(dead)], phase: .member),
        Row(
            description: "a takeover claimed again (its claim ran out while still under way) is not started twice",
            events: [.tick(now: 1), .reapDone([dead], now: 1.1), .tick(now: 2.2), .reapDone([dead], now: 2.3)],
            actions: [], phase: .member),
        Row(
            description: "a finished takeover is released",
            events: [.tick(now: 1), .reapDone([dead], now: 1.1), .takeoverDone(dead)],
            actions: [.finishTakeover(dead)], phase: .member),
        Row(
            description: "a takeover finished twice is released once",
            events: [.tick(now: 1), .reapDone([dead], now: 1.1), .takeoverDone(dead), .takeoverDone(dead)],
            actions: [], phase: .member),
        Row(
            description: "paused past the TTL and taken over: the heartbeat says so and the node ends its calls",
            events: [.tick(now: 1), .heartbeatDone(.reaped, now: 9)], actions: [.lostMembership], phase: .idle),
        Row(
            description: "the node's own reap claims itself (it was late): lost, not a takeover of itself",
            events: [.tick(now: 1), .reapDone([me, dead], now: 8)], actions: [.lostMembership], phase: .idle),
        Row(
            description: "a heartbeat answer after Redis went down is ignored",
            events: [.tick(now: 1), .redisDown(now: 1.5), .heartbeatDone(.alive, now: 1.6)], actions: [],
            phase: .disconnected),
        Row(
            description: "while Redis is down nothing is sent", events: [.redisDown(now: 0.5), .tick(now: 3)],
            actions: [], phase: .disconnected),
        Row(
            description: "Redis back (maybe empty): heartbeat at once and write back what the node holds",
            events: [.redisDown(now: 0.5), .redisUp(now: 4)], actions: [.heartbeat, .republish], phase: .member),
        Row(
            description: "Redis back, but the cluster took the node over meanwhile",
            events: [.redisDown(now: 0.5), .redisUp(now: 9), .heartbeatDone(.reaped, now: 9.1)],
            actions: [.lostMembership], phase: .idle),
        Row(
            description: "drain heartbeats at once with the draining record", events: [.drain], actions: [.heartbeat],
            phase: .member),
        Row(
            description: "drain while a heartbeat is out: the next tick sends the draining record",
            events: [.tick(now: 1), .drain, .heartbeatDone(.alive, now: 1.1), .tick(now: 1.2)],
            actions: [.heartbeat], phase: .member),
        Row(description: "a clean stop leaves", events: [.stop(callsUp: 0)], actions: [.leave], phase: .left),
        Row(
            description: "a stop with calls up does not leave: a survivor ends them after the TTL",
            events: [.stop(callsUp: 3)], actions: [], phase: .left),
        Row(
            description: "a stopped node sends nothing", events: [.stop(callsUp: 0), .tick(now: 5)], actions: [],
            phase: .left)
    ]

    @Test(arguments: rows)
    func race(_ row: Row) {
        var m = row.member ? Self.member() : Self.machine()
        var last: [A] = []
        for e in row.events { last = m.handle(e) }
        #expect(last == row.actions)
        #expect(m.phase == row.phase)
    }

    @Test func lostNodeJoinsAgainUnderANewIncarnation() {
        var m = Self.member()
        _ = m.handle(.tick(now: 1))
        #expect(m.handle(.heartbeatDone(.reaped, now: 9)) == [.lostMembership])
        #expect(m.member == nil)
        #expect(m.handle(.start(incarnation: "c", now: 9)) == [.join])
        #expect(m.handle(.joined(previous: [], now: 9.1)) == [])
        #expect(m.member == NodeMember(id: "gw1", incarnation: "c"))
        #expect(m.phase == .member)
    }

    @Test(arguments: [
        ("gw1#abc", NodeMember(id: "gw1", incarnation: "abc")), ("a.b#c#d", NodeMember(id: "a.b#c", incarnation: "d"))
    ])
    func memberNames(_ name: String, _ member: NodeMember) {
        #expect(NodeMember(name: name) == member)
        #expect(NodeMember(name: name)?.name == name)
    }

    @Test(arguments: ["gw1", "#x", "gw1#", ""])
    func badMemberNames(_ name: String) {
        #expect(NodeMember(name: name) == nil)
    }

    @Test(arguments: [
        ("gw-1.eu_west", nil), ("", "is empty"), ("gw#1", "may hold only letters, digits, '-', '_' and '.'")
    ])
    func nodeIds(_ id: String, _ problem: String?) {
        #expect(ClusterSettings.nodeIdProblem(id) == problem)
    }
}
