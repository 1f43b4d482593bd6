import SIP

/// Every session's capture, found by room id (the API) and by Call-ID (the SIP tap). SIP
/// loop only: the tap runs there and the API hops there.
///
/// A message can cross the wire before its session knows its Call-ID (an inbound INVITE
/// and our 100 Trying come before the session exists; an outbound INVITE is sent as the
/// call is made), so the last few messages of unknown calls wait in `pending` and go to the
/// session that claims their Call-ID, if they came from (or went to) its peer. Live
/// sessions' media shares `liveBudget`; ended sessions' captures stay as long as their
/// history (`retention`, at most `capacity`); their media records share `maxEndedMediaBytes`,
/// the oldest freed first.
struct SessionCaptures {
    let retention: Double
    let capacity: Int
    let maxEndedMediaBytes: Int
    /// What live captures' media may hold together (`capture.maxLiveMiB`).
    let liveBudget: CaptureBudget
    private var byRoom: [String: SessionCapture] = [:]
    private var byCallID: [String: SessionCapture] = [:]
    private var callIDs: [String: [String]] = [:]
    /// The last `pendingLimit` unclaimed messages, a ring (`pendingNext` is the oldest once full).
    /// Each with the Call-ID the tap already scanned for, so claiming them scans nothing again.
    private var pending: [(callID: String, message: SIPWireMessage)] = []
    private var pendingNext = 0
    private var ended: [(roomId: String, at: Double)] = []
    private var head = 0
    private var endedMediaBytes = 0
    static let pendingLimit = 32

    init(
        retention: Double, capacity: Int = 10_000, maxEndedMediaBytes: Int = 256 << 20,
        maxLiveMediaBytes: Int = 256 << 20
    ) {
        self.retention = retention
        self.capacity = max(1, capacity)
        self.maxEndedMediaBytes = maxEndedMediaBytes
        liveBudget = CaptureBudget(limit: maxLiveMediaBytes)
    }

    subscript(roomId: String) -> SessionCapture? { byRoom[roomId] }

    var count: Int { byRoom.count }

    mutating func open(_ capture: SessionCapture) { byRoom[capture.roomId] = capture }

    /// `capture` owns the messages of `callID` from now on, and takes those already seen
    /// that its peers sent or were sent: `peer`, where its INVITE came from (inbound), and
    /// wherever it sends requests (`SessionCapture.sip`).
    mutating func bind(callID: String, to capture: SessionCapture, peer: String? = nil) {
        if let peer { capture.addPeer(peer) }
        byCallID[callID] = capture
        capture.callID = callID
        callIDs[capture.roomId, default: []].append(callID)
        guard pending.contains(where: { $0.callID == callID }) else { return }
        // Oldest first: the ring from its next slot round to the one before it.
        let ordered =
            pending.count < Self.pendingLimit ? pending : Array(pending[pendingNext...] + pending[..<pendingNext])
        for m in ordered where m.callID == callID { capture.sip(m.message) }
        pending = ordered.filter { $0.callID != callID }
        pendingNext = 0
    }

    /// The SIP tap: to the session of the message's Call-ID, else into `pending`.
    mutating func sip(_ m: SIPWireMessage) {
        guard let id = m.callID else { return }
        if let c = byCallID[id] {
            c.sip(m)
            return
        }
        if pending.count < Self.pendingLimit {
            pending.append((id, m))
        } else {
            pending[pendingNext] = (id, m)
            pendingNext = (pendingNext + 1) % Self.pendingLimit
        }
    }

    /// The session ended at `now`: keep its capture for `retention` seconds (messages of its
    /// Call-IDs still land: the last ACK, a retransmitted BYE), and forget those past it.
    mutating func ended(roomId: String, now: Double) {
        guard let c = byRoom[roomId] else { return }
        ended.append((roomId, now))
        endedMediaBytes += c.close()
        var i = head
        while endedMediaBytes > maxEndedMediaBytes, i < ended.count {
            if let old = byRoom[ended[i].roomId] {
                endedMediaBytes -= old.mediaBytes
                old.dropMedia()
            }
            i += 1
        }
        while head < ended.count, ended.count - head > capacity || now - ended[head].at > retention {
            forget(ended[head].roomId)
            head += 1
        }
        if head > 1024, head * 2 > ended.count {
            ended.removeFirst(head)
            head = 0
        }
    }

    private mutating func forget(_ roomId: String) {
        if let c = byRoom.removeValue(forKey: roomId) { endedMediaBytes -= c.mediaBytes }
        for id in callIDs.removeValue(forKey: roomId) ?? [] { byCallID[id] = nil }
    }
}
