/// A server transaction: where to send the responses of one received request.
public struct ServerTransaction: Hashable, Sendable {
    let id: Int32
    public let peer: SIPPeer
}

/// A client transaction we started; cancel or terminate it through the layer.
public struct ClientTransaction: Hashable, Sendable {
    let id: Int32
}

/// What a client transaction reports to its owner.
public enum ClientTransactionEvent: Sendable {
    case response(SIPMessage)
    /// Timer B or F fired: no final response (RFC 3261 §17.1.1.2, §17.1.2.2).
    case timeout
    case transportError
}

/// The RFC 3261 §17 transactions of one user agent, on the SIP event loop.
///
/// Messages with an RFC 3261 branch (everything a current peer sends, and every request we
/// send) run on plain-value machines: `InviteClientTransaction`,
/// `NonInviteClientTransaction`, `InviteServerTransaction` (with RFC 6026's Accepted state)
/// and `NonInviteServerTransactions`. Each message is parsed once (by `SIPMessage.parse`),
/// found through one dictionary lookup by its RFC 3261 key, and each timer is a loop timer
/// armed for that transaction alone, with the configured T1, T2 and T4.
///
/// Requests without an RFC 3261 branch (RFC 2543 peers) are matched by RFC 3261 §17.2.3's
/// older rules, which libosip2 implements: `OSIPTransactions` runs those.
final class TransactionLayer {
    /// A request that opened a server transaction (not ACK, not a retransmission).
    var onRequest: ((SIPMessage, ServerTransaction) -> Void)?
    /// A message that matched no transaction, or that the transaction hands to the TU
    /// as-is: an ACK for a 2xx, a retransmitted 2xx, a stray response, or a request osip's
    /// parser refused. Return true for a request when it has been dealt with and must not
    /// open a server transaction.
    var onUnmatched: ((SIPMessage, SIPPeer) -> Bool)?
    /// A valid request osip's own parser refused (branchless requests only).
    var onUnparsable: ((SIPMessage, SIPPeer) -> Void)? {
        get { legacy.onUnparsable }
        set { legacy.onUnparsable = newValue }
    }
    /// Sends bytes to a peer (the transports).
    var send: (([UInt8], SIPPeer) -> Void)? {
        didSet { legacy.send = send }
    }

    let timers: TransactionTimers
    private let loop: EventLoop
    private var entries: [Int32: Entry] = [:]
    /// Transactions by RFC 3261 matching key (§17.1.3, §17.2.3).
    private var index: [String: Int32] = [:]
    private var nextID: Int32 = 1
    /// Non-INVITE server transactions: a table with one expiry queue (they are most of the
    /// traffic under a flood, and each lives 64*T1 on UDP after its answer).
    private var nonInvite: NonInviteServerTransactions
    private var nonInviteTimer: EventLoop.Timer?
    private var nonInviteDeadline: Double?
    /// Branchless requests' server transactions, run by osip; our id to osip's.
    private let legacy: OSIPTransactions
    private var legacyIDs: [Int32: Int32] = [:]
    private var legacyByOsipID: [Int32: Int32] = [:]

    init(timers: TransactionTimers, loop: EventLoop) throws {
        self.timers = timers
        self.loop = loop
        nonInvite = NonInviteServerTransactions(t1: timers.t1)
        legacy = try OSIPTransactions(loop: loop)
        legacy.onRequest = { [unowned self] message, osipID, peer in
            let id = allocateID()
            legacyIDs[id] = osipID
            legacyByOsipID[osipID] = id
            onRequest?(message, ServerTransaction(id: id, peer: peer))
        }
        legacy.onEnded = { [unowned self] osipID in
            if let id = legacyByOsipID.removeValue(forKey: osipID) { legacyIDs[id] = nil }
        }
        legacy.onUnmatched = { [unowned self] m, peer in onUnmatched?(m, peer) ?? false }
    }

    /// Transactions alive now.
    var count: Int { entries.count + nonInvite.count + legacy.count }
    /// Server transactions alive now (requests we received), Accepted INVITE server
    /// transactions left out: they hold a key and a peer for 64*T1 and answer nothing.
    var serverCount: Int { liveServerCount + nonInvite.count + legacy.count }
    private var liveServerCount = 0

    /// One line per live transaction (kind, state and matching key), for diagnostics: the
    /// sequence fuzzer prints them when transactions outlive every call.
    var liveSummary: [String] {
        entries.keys.sorted().map { id in
            let e = entries[id]!
            return "\(e.machine.summary) \(e.key)"
        } + legacy.liveSummary
    }

    /// True when `message` belongs to a live transaction (a retransmission, an ACK or
    /// response for one), judged by the RFC 3261 key alone.
    func hasTransaction(for message: SIPMessage) -> Bool {
        guard let key = Self.key(message) else { return false }
        return nonInvite.contains(key: key) || index[key] != nil
    }

    /// The matching key of a message: server side (requests) by branch, sent-by and method
    /// (an ACK belongs to its INVITE); client side (responses) by branch and CSeq method.
    /// Nil without an RFC 3261 branch.
    static func key(_ m: SIPMessage) -> String? {
        guard let via = m.topVia, via.hasRFC3261Branch, let branch = via.branch else { return nil }
        if m.isRequest {
            let method = m.method == "ACK" ? "INVITE" : m.method
            return "s|" + branch + "|" + via.host + ":" + String(via.port ?? 0) + "|" + method
        }
        return "c|" + branch + "|" + m.method
    }

    // MARK: Incoming

    /// Feeds one received, already parsed and validated message into the transactions.
    func receive(_ message: SIPMessage, bytes: [UInt8], from peer: SIPPeer) {
        guard let key = Self.key(message) else {
            // Responses always carry our branch; a branchless one matches nothing of ours.
            if message.isRequest {
                legacy.receive(message, bytes: bytes, from: peer)
            } else {
                _ = onUnmatched?(message, peer)
            }
            return
        }
        if message.isRequest, message.method != "INVITE", message.method != "ACK" {
            receiveNonInviteRequest(message, key: key, from: peer)
            return
        }
        if let id = index[key], let entry = entries[id] {
            switch (entry.machine, message.isRequest) {
            case (.inviteServer, true):
                run(
                    entry, message.method == "ACK" ? .serverEvent(.ack) : .serverEvent(.retransmission),
                    message: message)
            case (.inviteClient, false), (.nonInviteClient, false):
                run(entry, .response(message), message: message)
            default:
                _ = onUnmatched?(message, peer)
            }
            return
        }
        // No transaction: a new INVITE, or something the layer above must judge (an ACK
        // after Accepted ended, a stray response).
        if onUnmatched?(message, peer) == true || !message.isRequest || message.method == "ACK" { return }
        let entry = Entry(
            id: allocateID(), key: key, peer: peer,
            machine: .inviteServer(InviteServerTransaction(reliable: peer.transport.isReliable, timers: timers)))
        entry.countsAsServer = true
        insert(entry)
        liveServerCount += 1
        onRequest?(message, ServerTransaction(id: entry.id, peer: peer))
    }

    private func receiveNonInviteRequest(_ message: SIPMessage, key: String, from peer: SIPPeer) {
        switch nonInvite.received(key: key, from: peer, now: EventLoop.now()) {
        case .retransmission(let resend, let to):
            if let resend { send?(resend, to) }
        case .new(let id):
            // The layer above may still claim it (it never does for these today).
            if onUnmatched?(message, peer) == true { return }
            armNonInviteExpiry()
            onRequest?(message, ServerTransaction(id: id, peer: peer))
        }
    }

    // MARK: Outgoing

    /// Starts a client transaction for `request` toward `peer`.
    @discardableResult
    func start(
        _ request: SIPMessage, to peer: SIPPeer, handler: @escaping (ClientTransactionEvent) -> Void
    ) -> ClientTransaction? {
        guard let branch = request.topVia?.branch else { return nil }
        let reliable = peer.transport.isReliable
        let machine: Machine =
            request.method == "INVITE"
            ? .inviteClient(InviteClientTransaction(reliable: reliable, timers: timers))
            : .nonInviteClient(NonInviteClientTransaction(reliable: reliable, timers: timers))
        let entry = Entry(id: allocateID(), key: "c|" + branch + "|" + request.method, peer: peer, machine: machine)
        entry.handler = handler
        entry.request = request
        entry.requestBytes = request.serialize()
        insert(entry)
        run(entry, .start, message: nil)
        return ClientTransaction(id: entry.id)
    }

    /// Sends a response in a server transaction (the transaction retransmits it as the RFC says).
    func respond(_ response: SIPMessage, in transaction: ServerTransaction) {
        let bytes = response.serialize()
        if transaction.id < 0 {
            if let to = nonInvite.respond(
                id: transaction.id, status: response.statusCode ?? 500, bytes: bytes, now: EventLoop.now())
            {
                send?(bytes, to)
                armNonInviteExpiry()
            }
            return
        }
        if let osipID = legacyIDs[transaction.id] {
            legacy.respond(response, bytes: bytes, in: osipID)
            return
        }
        guard let entry = entries[transaction.id], case .inviteServer = entry.machine else {
            // The transaction is gone (e.g. Accepted ended): send directly.
            send?(bytes, transaction.peer)
            return
        }
        entry.pendingResponse = bytes
        run(entry, .serverEvent(.respond(status: response.statusCode ?? 500)), message: nil)
    }

    /// Fails, as a transport error, every client transaction still waiting for its final
    /// response over a stream connection that went down: toward `peer`'s transport and
    /// address (for TLS, the same name), on that connection or on none in particular, and
    /// started before `failedAt`. Reliable transports do not retransmit, so without this
    /// they would wait for Timer B (32 s) before failing over.
    func failClientTransactions(toward peer: SIPPeer, failedAt: Double) {
        let failing = entries.values.filter { e in
            e.handler != nil && e.machine.awaitsFinalResponse && e.started <= failedAt
                && e.peer.transport == peer.transport
                && e.peer.address == peer.address && (e.peer.connection == nil || e.peer.connection == peer.connection)
                && (e.peer.tls == nil || peer.tls == nil || e.peer.tls == peer.tls)
        }
        for e in failing.sorted(by: { $0.id < $1.id }) { run(e, .transportError, message: nil) }
    }

    /// Ends a client transaction without waiting for its timers (RFC 3261 §9.1: no final
    /// response 64*T1 after a CANCEL was answered).
    func terminate(_ transaction: ClientTransaction) {
        if let entry = entries[transaction.id] { remove(entry) }
    }

    // MARK: Running the machines

    private enum Input {
        case start
        case response(SIPMessage)
        case timer(TransactionTimer)
        case transportError
        case serverEvent(InviteServerTransaction.Event)
    }

    /// Feeds `input` to the entry's machine and carries out what it says.
    private func run(_ entry: Entry, _ input: Input, message: SIPMessage?) {
        switch entry.machine {
        case .inviteClient, .nonInviteClient:
            let event: ClientTransactionInput
            switch input {
            case .start: event = .start
            case .response(let r): event = .response(status: r.statusCode ?? 0)
            case .timer(let t): event = .timer(t)
            case .transportError: event = .transportError
            case .serverEvent: return
            }
            let actions: [ClientTransactionAction]
            switch entry.machine {
            case .inviteClient(var m):
                actions = m.handle(event)
                entry.machine = .inviteClient(m)
            case .nonInviteClient(var m):
                actions = m.handle(event)
                entry.machine = .nonInviteClient(m)
            case .inviteServer:
                return
            }
            for action in actions {
                switch action {
                case .sendRequest: send(entry.requestBytes, entry)
                case .sendACK:
                    if case .response(let r) = input, let request = entry.request {
                        if entry.ack == nil { entry.ack = Self.ack(for: request, response: r).serialize() }
                        send(entry.ack, entry)
                    }
                case .passResponse(let retransmission):
                    guard case .response(let r) = input else { break }
                    if retransmission { _ = onUnmatched?(r, entry.peer) } else { entry.handler?(.response(r)) }
                case .timeout: entry.handler?(.timeout)
                case .transportError: entry.handler?(.transportError)
                case .schedule(let t, let after): schedule(t, after: after, for: entry)
                case .cancel(let t): cancel(t, for: entry)
                case .terminated: remove(entry)
                }
            }
        case .inviteServer(var m):
            let event: InviteServerTransaction.Event
            switch input {
            case .serverEvent(let e): event = e
            case .timer(let t): event = .timer(t)
            case .transportError: event = .transportError
            case .start, .response: return
            }
            let actions = m.handle(event)
            entry.machine = .inviteServer(m)
            if m.state == .accepted, entry.countsAsServer {
                entry.countsAsServer = false
                liveServerCount -= 1
            }
            for action in actions {
                switch action {
                case .sendResponse:
                    if let bytes = entry.pendingResponse {
                        entry.lastResponse = bytes
                        send(bytes, entry)
                    }
                case .resendLastResponse: send(entry.lastResponse, entry)
                case .passACK: if let message { _ = onUnmatched?(message, entry.peer) }
                case .schedule(let t, let after): schedule(t, after: after, for: entry)
                case .cancel(let t): cancel(t, for: entry)
                case .terminated: remove(entry)
                }
            }
            entry.pendingResponse = nil
        }
    }

    private func send(_ bytes: [UInt8]?, _ entry: Entry) {
        if let bytes { send?(bytes, entry.peer) }
    }

    private func schedule(_ timer: TransactionTimer, after: Double, for entry: Entry) {
        loop.cancel(entry.timers[timer])
        guard entries[entry.id] === entry else { return }  // the TU ended it meanwhile
        let id = entry.id
        entry.timers[timer] = loop.schedule(after: after) { [weak self, weak entry] in
            guard let self, let entry, entries[id] === entry else { return }
            entry.timers[timer] = nil
            run(entry, .timer(timer), message: nil)
        }
    }

    private func cancel(_ timer: TransactionTimer, for entry: Entry) {
        loop.cancel(entry.timers.removeValue(forKey: timer))
    }

    private func insert(_ entry: Entry) {
        entries[entry.id] = entry
        index[entry.key] = entry.id
    }

    private func remove(_ entry: Entry) {
        guard entries.removeValue(forKey: entry.id) != nil else { return }
        if index[entry.key] == entry.id { index[entry.key] = nil }
        for timer in entry.timers.values { loop.cancel(timer) }
        entry.timers.removeAll()
        if entry.countsAsServer {
            entry.countsAsServer = false
            liveServerCount -= 1
        }
    }

    private func allocateID() -> Int32 {
        let id = nextID
        nextID = nextID == Int32.max ? 1 : nextID + 1
        return id
    }

    /// One loop timer for the non-INVITE server table, at its next expiry.
    private func armNonInviteExpiry() {
        guard let next = nonInvite.nextExpiry else { return }
        if let armed = nonInviteDeadline, armed <= next { return }
        loop.cancel(nonInviteTimer)
        nonInviteDeadline = next
        nonInviteTimer = loop.schedule(after: next - EventLoop.now()) { [weak self] in
            guard let self else { return }
            nonInviteTimer = nil
            nonInviteDeadline = nil
            nonInvite.expire(now: EventLoop.now())
            armNonInviteExpiry()
        }
    }

    /// The ACK for a non-2xx final response (RFC 3261 §17.1.1.3): the INVITE's Request-URI,
    /// top Via, Route, From, Call-ID and CSeq number, the response's To.
    static func ack(for invite: SIPMessage, response: SIPMessage) -> SIPMessage {
        var ack = SIPMessage.request("ACK", invite.requestURI ?? SIPURI(host: "invalid"))
        if let via = invite.values(.via).first { ack.addHeader(.via, via) }
        for route in invite.values(.route) { ack.addHeader(.route, route) }
        ack.addHeader(.maxForwards, "70")
        if let from = invite[.from] { ack.addHeader(.from, from) }
        if let to = response[.to] { ack.addHeader(.to, to) }
        if let callID = invite[.callID] { ack.addHeader(.callID, callID) }
        ack.addHeader(.cseq, String(invite.cseq?.sequence ?? 1) + " ACK")
        return ack
    }
}

/// One transaction's machine and what its driver keeps beside it.
private final class Entry {
    let id: Int32
    let key: String
    let peer: SIPPeer
    /// Loop clock at its start: a connection that failed before it never carried it.
    let started = EventLoop.now()
    var machine: Machine
    var handler: ((ClientTransactionEvent) -> Void)?
    /// Client side: the request, and its bytes as sent (and retransmitted).
    var request: SIPMessage?
    var requestBytes: [UInt8]?
    /// INVITE client: the ACK for the non-2xx final response, resent on its retransmissions.
    var ack: [UInt8]?
    /// INVITE server: the last response sent, and the one being handed over now.
    var lastResponse: [UInt8]?
    var pendingResponse: [UInt8]?
    var timers: [TransactionTimer: EventLoop.Timer] = [:]
    /// An INVITE server transaction counted in `serverCount` (until Accepted or its end).
    var countsAsServer = false

    init(id: Int32, key: String, peer: SIPPeer, machine: Machine) {
        self.id = id
        self.key = key
        self.peer = peer
        self.machine = machine
    }
}

private enum Machine {
    case inviteClient(InviteClientTransaction)
    case nonInviteClient(NonInviteClientTransaction)
    case inviteServer(InviteServerTransaction)

    var awaitsFinalResponse: Bool {
        switch self {
        case .inviteClient(let m): m.state == .calling || m.state == .proceeding
        case .nonInviteClient(let m): m.state == .trying || m.state == .proceeding
        case .inviteServer: false
        }
    }

    var summary: String {
        switch self {
        case .inviteClient(let m): "ICT \(m.state)"
        case .nonInviteClient(let m): "NICT \(m.state)"
        case .inviteServer(let m): "IST \(m.state)"
        }
    }
}
