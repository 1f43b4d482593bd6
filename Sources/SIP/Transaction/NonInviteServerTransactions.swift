/// Non-INVITE server transactions (RFC 3261 §17.2.2) without osip, as a plain value: the
/// time comes in, what to send goes out.
///
/// ```
///                |Request received  -> pass to TU
///                V
///          +-----------+ 1xx from TU (send)  +------------+
///          |  Trying   |-------------------->| Proceeding |<- request: send the 1xx again
///          +-----------+                     +------------+
///    200-699 from TU |          200-699 from TU |
///                    V                          V
///          +-----------+ request: send the final again
///          | Completed |
///          +-----------+  Timer J (64*T1 on UDP, 0 on TCP) -> Terminated
/// ```
///
/// osip's version keeps its own parsed copies of the request and of the last response, about
/// 15 KB a transaction; here one costs the response's bytes and a key. OPTIONS, REGISTER and
/// BYE floods land on these, and each lives 32 s on UDP after its answer.
struct NonInviteServerTransactions {
    private struct Entry {
        let id: Int32
        let peer: SIPPeer
        /// The last response sent (provisional or final); nil in Trying.
        var lastResponse: [UInt8]?
        var completed = false
        var deadline: Double
    }

    /// Timer J on an unreliable transport (64*T1).
    let timerJ: Double
    /// How long a transaction the TU never answers is kept.
    let unansweredLifetime: Double
    private var byKey: [String: Entry] = [:]
    private var keyByID: [Int32: String] = [:]
    /// Deadlines in the order they were set: every one is `now` + a constant, so the queue
    /// stays sorted and expiry pops from the front. Entries whose deadline moved on are skipped.
    private var expiries: [(deadline: Double, key: String)] = []
    private var expiryStart = 0
    private var nextID: Int32 = -1

    init(t1: Double = 0.5) {
        timerJ = 64 * t1
        unansweredLifetime = 64 * t1
    }

    var count: Int { byKey.count }

    /// When the earliest transaction may end (an entry whose deadline moved on may make it
    /// early: `expire` then finds nothing due and this moves on).
    var nextExpiry: Double? { expiryStart < expiries.count ? expiries[expiryStart].deadline : nil }

    func contains(key: String) -> Bool { byKey[key] != nil }

    func contains(id: Int32) -> Bool { keyByID[id] != nil }

    /// A request with `key` arrived. A new transaction gets an id (negative, apart from
    /// osip's) to hand to the TU; a retransmission gets what to send again (nothing in Trying).
    enum Arrival: Equatable {
        case new(id: Int32)
        case retransmission(resend: [UInt8]?, to: SIPPeer)
    }

    mutating func received(key: String, from peer: SIPPeer, now: Double) -> Arrival {
        if let entry = byKey[key] { return .retransmission(resend: entry.lastResponse, to: entry.peer) }
        let id = nextID
        nextID = nextID == Int32.min ? -1 : nextID - 1
        byKey[key] = Entry(id: id, peer: peer, deadline: now + unansweredLifetime)
        keyByID[id] = key
        expiries.append((now + unansweredLifetime, key))
        return .new(id: id)
    }

    /// The TU answers transaction `id`; returns where to send the bytes, or nil when the
    /// transaction is gone (or already completed: a second final response is not sent).
    mutating func respond(id: Int32, status: Int, bytes: [UInt8], now: Double) -> SIPPeer? {
        guard let key = keyByID[id], var entry = byKey[key], !entry.completed else { return nil }
        entry.lastResponse = bytes
        if status >= 200 {
            entry.completed = true
            if entry.peer.transport.isReliable {
                remove(key)
                return entry.peer
            }
            entry.deadline = now + timerJ
            expiries.append((entry.deadline, key))
        }
        byKey[key] = entry
        return entry.peer
    }

    /// Ends the transactions whose time is up; returns how many are left.
    @discardableResult
    mutating func expire(now: Double) -> Int {
        while expiryStart < expiries.count, expiries[expiryStart].deadline <= now {
            let key = expiries[expiryStart].key
            expiryStart += 1
            if let entry = byKey[key], entry.deadline <= now { remove(key) }
        }
        // Compact the queue now and then, so it does not grow with the traffic.
        if expiryStart > 1024, expiryStart * 2 > expiries.count {
            expiries.removeFirst(expiryStart)
            expiryStart = 0
        }
        return byKey.count
    }

    private mutating func remove(_ key: String) {
        if let entry = byKey.removeValue(forKey: key) { keyByID[entry.id] = nil }
    }
}
