import IrisAPI

/// Ended sessions' last snapshots, for `GET /v1/sessions/{id}` after the end: each kept as
/// long as the session's event history (`retention` seconds), and at most `capacity`. A plain
/// value; time comes in.
///
/// Kept by count alone (the last 10,000), they grew with every call until the cap: a soak's
/// RSS stepped up with each doubling of the table, long after the event history had levelled.
struct EndedSnapshots {
    let retention: Double
    let capacity: Int
    private var snapshots: [String: SessionSnapshot] = [:]
    /// Oldest first, with when each ended.
    private var order: [(roomId: String, at: Double)] = []
    private var head = 0

    init(retention: Double, capacity: Int = 10_000) {
        self.retention = retention
        self.capacity = max(1, capacity)
    }

    subscript(roomId: String) -> SessionSnapshot? { snapshots[roomId] }

    var count: Int { snapshots.count }

    /// Keeps `snapshot` and forgets those that ended more than `retention` seconds before
    /// `now`, or beyond `capacity`.
    mutating func keep(_ snapshot: SessionSnapshot, of roomId: String, now: Double) {
        snapshots[roomId] = snapshot
        order.append((roomId, now))
        while head < order.count, order.count - head > capacity || now - order[head].at > retention {
            snapshots[order[head].roomId] = nil
            head += 1
        }
        // Compact now and then rather than shifting the array on every end.
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
