/// Where a new session goes: the node itself while it has room, else the live node with
/// the lowest load. Pure, so the choice is tested without a cluster.
public enum Placement {
    /// A node counts as having room below this media load.
    public static let roomBelow = 0.8

    /// The node a new session should be placed on, or nil when none takes sessions.
    /// - Parameters:
    ///   - me: this node's record now.
    ///   - peers: the other live members' records.
    public static func choose(me: NodeRecord, peers: [NodeRecord]) -> NodeRecord? {
        if me.takesSessions, me.mediaLoad < roomBelow { return me }
        let candidates = ([me] + peers.filter { $0.id != me.id }).filter(\.takesSessions)
        return candidates.min { a, b in
            (a.mediaLoad, a.sessions, a.id != me.id ? 1 : 0, a.id) < (
                b.mediaLoad, b.sessions, b.id != me.id ? 1 : 0, b.id
            )
        }
    }
}
