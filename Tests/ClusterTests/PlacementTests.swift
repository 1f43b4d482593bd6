import Cluster
import Testing

/// `Placement.choose`: where a new session goes.
@Suite struct PlacementTests {
    static func node(_ id: String, load: Double, sessions: Int = 0, draining: Bool = false) -> NodeRecord {
        NodeRecord(
            id: id, incarnation: "i", api: "http://\(id)", sessions: sessions, mediaLoad: load, draining: draining)
    }

    struct Row: Sendable, CustomStringConvertible {
        var description: String
        var me: NodeRecord
        var peers: [NodeRecord]
        var chosen: String?
    }

    static let rows: [Row] = [
        Row(
            description: "itself while it has room", me: node("a", load: 0.5), peers: [node("b", load: 0)], chosen: "a"),
        Row(
            description: "the least loaded when it is busy", me: node("a", load: 0.9),
            peers: [node("b", load: 0.4), node("c", load: 0.2)], chosen: "c"),
        Row(
            description: "never a draining node", me: node("a", load: 0.95),
            peers: [node("b", load: 0.1, draining: true), node("c", load: 0.5)], chosen: "c"),
        Row(
            description: "a draining node places elsewhere", me: node("a", load: 0, draining: true),
            peers: [node("b", load: 0.7)], chosen: "b"),
        Row(
            description: "equal load: fewer sessions", me: node("a", load: 0.9, sessions: 9),
            peers: [node("b", load: 0.3, sessions: 5), node("c", load: 0.3, sessions: 2)], chosen: "c"),
        Row(
            description: "busy but the least loaded: itself", me: node("a", load: 0.85),
            peers: [node("b", load: 0.9)], chosen: "a"),
        Row(
            description: "nobody takes sessions", me: node("a", load: 1),
            peers: [node("b", load: 1), node("c", load: 0, draining: true)], chosen: nil)
    ]

    @Test(arguments: rows)
    func choice(_ row: Row) {
        #expect(Placement.choose(me: row.me, peers: row.peers)?.id == row.chosen)
    }
}
