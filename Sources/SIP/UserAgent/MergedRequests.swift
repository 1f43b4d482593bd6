/// RFC 3261 §8.2.2.2 merged requests: a request with no To tag whose From tag, Call-ID and
/// CSeq match one received within the last 32 s through another branch (a proxy forked it
/// and both copies reached us) is answered 482 (Loop Detected). A plain value, time passed in.
///
/// What it remembers expires in arrival order from a queue, so a request costs O(1) however
/// many are remembered: the first version swept the whole table on every request once it
/// held 4,096, and a trusted flood (32 s of INVITEs) made each request cost a walk of tens of
/// thousands of entries (`BENCH sip-transactions`).
struct MergedRequests {
    /// How long a request is remembered: 64*T1 with the default T1, the longest a server
    /// transaction lives.
    let window: Double
    /// At most this many are remembered; beyond it the oldest go first.
    let capacity: Int
    private var seen: [String: (branch: String, at: Double)] = [:]
    /// Keys in the order they were recorded, with when (an entry recorded again is found
    /// newer in `seen` and left alone when its old queue slot expires).
    private var order: [(key: String, at: Double)] = []
    private var head = 0

    init(window: Double = 32, capacity: Int = 131_072) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    /// Requests remembered now.
    var count: Int { seen.count }

    /// Records a request that opens a server transaction and says whether it merges with
    /// one seen before: the same `key` (From tag, Call-ID, CSeq) through another `branch`.
    mutating func isMerged(key: String, branch: String, now: Double) -> Bool {
        expire(now: now)
        if let earlier = seen[key], earlier.branch != branch, now - earlier.at < window { return true }
        seen[key] = (branch, now)
        order.append((key, now))
        return false
    }

    private mutating func expire(now: Double) {
        while head < order.count, now - order[head].at >= window || seen.count > capacity {
            let (key, at) = order[head]
            if seen[key]?.at == at { seen[key] = nil }
            head += 1
        }
        // Reclaim the consumed front once it is most of the queue (amortised O(1)).
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
