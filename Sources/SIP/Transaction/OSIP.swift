import COSIP

// The only file that touches libosip2. Everything above it sees `SIPMessage` values and
// `TransactionLayer` handles, never an osip pointer.

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

/// The four RFC 3261 transactions (ICT, NICT, IST, NIST), run by osip on the SIP event loop.
///
/// osip ends the client INVITE transaction at the first 2xx and the server INVITE
/// transaction when it sends a 2xx (it predates RFC 6026), so the layer above sends the ACK
/// for a 2xx, absorbs 2xx retransmissions and retransmits its own 2xx until the ACK.
final class TransactionLayer {
    /// A request that opened a server transaction (not ACK, not a retransmission).
    var onRequest: ((SIPMessage, ServerTransaction) -> Void)?
    /// A message that matched no transaction: an ACK for a 2xx, a retransmitted 2xx, a
    /// stray response, or a request osip's parser refused. Return true for a request when it
    /// has been dealt with and must not open a server transaction.
    var onUnmatched: ((SIPMessage, SIPPeer) -> Bool)?
    /// A valid request osip's own parser refused (it is stricter than RFC 4475 §3.1.1.2):
    /// the layer above answers it without a transaction.
    var onUnparsable: ((SIPMessage, SIPPeer) -> Void)?
    /// Sends bytes to a peer (the transports).
    var send: (([UInt8], SIPPeer) -> Void)?

    private let osip: UnsafeMutablePointer<osip_t>
    private final class Context {
        let peer: SIPPeer
        let handler: ((ClientTransactionEvent) -> Void)?
        var messages: [UnsafeMutableRawPointer] = []
        var key: String?
        /// Loop clock at its start: a connection that failed before it never carried it.
        let started = SIPEventLoop.now()
        init(peer: SIPPeer, handler: ((ClientTransactionEvent) -> Void)?) {
            self.peer = peer
            self.handler = handler
        }
    }
    private var contexts: [Int32: Context] = [:]
    private var transactions: [Int32: UnsafeMutablePointer<osip_transaction_t>] = [:]
    /// Bytes we serialised for an osip message, sent as-is (osip re-serialising would
    /// reorder our headers).
    private var outgoing: [UnsafeMutableRawPointer: [UInt8]] = [:]
    /// The parsed value of the osip message being processed now.
    private var incoming: [UnsafeMutableRawPointer: SIPMessage] = [:]
    private var dead: [Int32] = []
    /// Transactions by RFC 3261 matching key (§17.1.3, §17.2.3), so a message finds its
    /// transaction in O(1) and is run by it alone. osip's own search and `osip_*_execute`
    /// walk every live transaction, and non-INVITE server transactions live 32 s on UDP:
    /// per message that made the cost grow with the call rate.
    private var index: [String: Int32] = [:]

    /// `t1`: RFC 3261 T1, for the non-INVITE server transactions' Timer J (osip's own use its
    /// built-in 500 ms).
    init(t1: Double = 0.5) throws {
        nonInvite = NonInviteServerTransactions(t1: t1)
        COSIP_silence_trace()
        var o: UnsafeMutablePointer<osip_t>? = nil
        guard osip_init(&o) == 0, let o else { throw SocketError("osip_init", code: 12) }
        osip = o
        osip_set_application_context(osip, Unmanaged.passUnretained(self).toOpaque())
        osip_set_cb_send_message(osip, osipSendCallback)
        for t in 0..<Int32(OSIP_MESSAGE_CALLBACK_COUNT.rawValue) {
            osip_set_message_callback(osip, t, osipMessageCallback)
        }
        for t in 0..<Int32(OSIP_KILL_CALLBACK_COUNT.rawValue) {
            osip_set_kill_transaction_callback(osip, t, osipKillCallback)
        }
        for t in 0..<Int32(OSIP_TRANSPORT_ERROR_CALLBACK_COUNT.rawValue) {
            osip_set_transport_error_callback(osip, t, osipTransportErrorCallback)
        }
    }

    deinit {
        for (_, tr) in transactions {
            osip_remove_transaction(osip, tr)
            osip_transaction_free(tr)
        }
        osip_release(osip)
    }

    /// Transactions alive now.
    var count: Int { transactions.count + nonInvite.count }
    /// Server transactions alive now (requests we received).
    var serverCount: Int { osipServerCount + nonInvite.count }
    private var osipServerCount = 0
    /// Non-INVITE server transactions, kept by us rather than osip (far smaller).
    private var nonInvite: NonInviteServerTransactions

    /// One line per live transaction (osip state and matching key), for diagnostics: the
    /// sequence fuzzer prints them when transactions outlive every call.
    var liveSummary: [String] {
        let names = ["ICT pre-calling", "ICT calling", "ICT proceeding", "ICT completed", "ICT terminated",
                     "IST pre-proceeding", "IST proceeding", "IST completed", "IST confirmed", "IST terminated",
                     "NICT pre-trying", "NICT trying", "NICT proceeding", "NICT completed", "NICT terminated",
                     "NIST pre-trying", "NIST trying", "NIST proceeding", "NIST completed", "NIST terminated"]
        return transactions.keys.sorted().map { id in
            let state = Int(transactions[id]!.pointee.state.rawValue)
            return "\(state < names.count ? names[state] : "state \(state)") \(contexts[id]?.key ?? "(no key)")"
        }
    }

    /// True when `message` belongs to a live transaction (a retransmission, an ACK or
    /// response for one), judged by the RFC 3261 key alone.
    func hasTransaction(for message: SIPMessage) -> Bool {
        guard let key = Self.key(message) else { return false }
        if nonInvite.contains(key: key) { return true }
        guard let id = index[key] else { return false }
        return transactions[id] != nil
    }

    // MARK: Incoming

    /// Feeds one received, already validated message into the transaction machines.
    func receive(_ message: SIPMessage, bytes: [UInt8], from peer: SIPPeer) {
        // A non-INVITE request with an RFC 3261 branch needs no osip at all.
        if message.isRequest, message.method != "INVITE", message.method != "ACK", let key = Self.key(message) {
            switch nonInvite.received(key: key, from: peer, now: SIPEventLoop.now()) {
            case .retransmission(let resend, let to):
                if let resend { send?(resend, to) }
            case .new(let id):
                // The layer above may still claim it (it never does for these today).
                if onUnmatched?(message, peer) == true { return }
                onRequest?(message, ServerTransaction(id: id, peer: peer))
            }
            return
        }
        guard let evt = bytes.withUnsafeBufferPointer({ buf in
            buf.withMemoryRebound(to: CChar.self) { osip_parse($0.baseAddress, $0.count) }
        }), let sip = evt.pointee.sip else {
            if message.isRequest { onUnparsable?(message, peer) } else { _ = onUnmatched?(message, peer) }
            return
        }
        let pointer = UnsafeMutableRawPointer(sip)
        incoming[pointer] = message
        defer { incoming.removeAll(keepingCapacity: true) }

        let key = Self.key(message)
        if let key, let id = index[key], let tr = transactions[id] {
            osip_transaction_execute(tr, evt)
            drain()
            return
        }
        // Without an RFC 3261 branch (RFC 2543 peers) osip's own matching decides.
        if key == nil, osip_find_transaction_and_add_event(osip, evt) == 0 {
            pump(force: true)
            return
        }
        // No transaction: a new request, or something the layer above must judge.
        let handled = onUnmatched?(message, peer) ?? false
        if handled || !message.isRequest || message.method == "ACK" {
            osip_event_free(evt)
            return
        }
        guard let tr = osip_create_transaction(osip, evt) else {
            osip_event_free(evt)
            return
        }
        let id = tr.pointee.transactionid
        transactions[id] = tr
        osipServerCount += 1
        let ctx = Context(peer: peer, handler: nil)
        ctx.key = key
        contexts[id] = ctx
        if let key { index[key] = id }
        osip_transaction_execute(tr, evt)
        drain()
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

    // MARK: Outgoing

    /// Starts a client transaction for `request` toward `peer`.
    @discardableResult
    func start(_ request: SIPMessage, to peer: SIPPeer, handler: @escaping (ClientTransactionEvent) -> Void) -> ClientTransaction? {
        let bytes = request.serialize()
        guard let msg = parseForOsip(bytes) else { return nil }
        var tr: UnsafeMutablePointer<osip_transaction_t>? = nil
        let type: osip_fsm_type_t = request.method == "INVITE" ? ICT : NICT
        guard osip_transaction_init(&tr, type, osip, msg) == 0, let tr else {
            osip_message_free(msg)
            return nil
        }
        let id = tr.pointee.transactionid
        let ctx = Context(peer: peer, handler: handler)
        ctx.messages.append(UnsafeMutableRawPointer(msg))
        if let branch = request.topVia?.branch {
            ctx.key = "c|" + branch + "|" + request.method
            index[ctx.key!] = id
        }
        contexts[id] = ctx
        transactions[id] = tr
        outgoing[UnsafeMutableRawPointer(msg)] = bytes
        let evt = osip_new_outgoing_sipmessage(msg)!
        evt.pointee.transactionid = id
        osip_transaction_execute(tr, evt)
        drain()
        return ClientTransaction(id: id)
    }

    /// Sends a response in a server transaction (osip retransmits it as the RFC says).
    func respond(_ response: SIPMessage, in transaction: ServerTransaction) {
        if transaction.id < 0 {
            let bytes = response.serialize()
            if let to = nonInvite.respond(id: transaction.id, status: response.statusCode ?? 500, bytes: bytes,
                                          now: SIPEventLoop.now()) {
                send?(bytes, to)
            }
            return
        }
        guard let tr = transactions[transaction.id], let ctx = contexts[transaction.id] else {
            // The transaction is gone (e.g. the IST ended at our 2xx): send directly.
            send?(response.serialize(), transaction.peer)
            return
        }
        let bytes = response.serialize()
        guard let msg = parseForOsip(bytes) else { return }
        ctx.messages.append(UnsafeMutableRawPointer(msg))
        outgoing[UnsafeMutableRawPointer(msg)] = bytes
        let evt = osip_new_outgoing_sipmessage(msg)!
        evt.pointee.transactionid = transaction.id
        osip_transaction_execute(tr, evt)
        drain()
    }

    /// Fails, as a transport error, every client transaction still waiting for its final
    /// response over a stream connection that went down: toward `peer`'s transport and
    /// address (for TLS, the same name), on that connection or on none in particular, and
    /// started before `failedAt`. Reliable transports do not retransmit, so without this
    /// they would wait for Timer B (32 s) before failing over.
    func failClientTransactions(toward peer: SIPPeer, failedAt: Double) {
        let pending: Set<UInt32> = [ICT_PRE_CALLING.rawValue, ICT_CALLING.rawValue, ICT_PROCEEDING.rawValue,
                                    NICT_PRE_TRYING.rawValue, NICT_TRYING.rawValue, NICT_PROCEEDING.rawValue]
        for (id, ctx) in contexts {
            guard let handler = ctx.handler, ctx.started <= failedAt, ctx.peer.transport == peer.transport,
                  ctx.peer.address == peer.address, ctx.peer.connection == nil || ctx.peer.connection == peer.connection,
                  ctx.peer.tls == nil || peer.tls == nil || ctx.peer.tls == peer.tls,
                  let tr = transactions[id], pending.contains(tr.pointee.state.rawValue) else { continue }
            deferred.append { handler(.transportError) }
            dead.append(id)
        }
        drain()
    }

    /// Ends a client transaction without waiting for osip's timers (RFC 3261 §9.1: no final
    /// response 64*T1 after a CANCEL was answered).
    func terminate(_ transaction: ClientTransaction) {
        guard transactions[transaction.id] != nil else { return }
        free(transaction.id)
    }

    /// Runs osip's timers over every transaction (on the loop's tick, not per message);
    /// returns how soon to run again.
    ///
    /// osip's timer and event walks visit every live transaction (each timer check reads the
    /// clock), and the loop ticks after every batch of I/O: under a flood of requests that
    /// was most of the SIP loop's time (5,000 transactions walked hundreds of times a
    /// second). The walks run at most every `walkInterval` seconds unless `force`d; SIP's
    /// timers count in hundreds of milliseconds (T1 = 500 ms), so nothing notices.
    ///
    /// osip calls us from inside its state machines, before it has moved the transaction to
    /// its next state; events added then would be lost. So callbacks only queue work, and
    /// `drain()` runs the queue after osip returns.
    @discardableResult
    func pump(force: Bool = false) -> Double? {
        guard !draining else { return nil }
        let now = SIPEventLoop.now()
        if force || now - lastWalk >= Self.walkInterval(transactions: transactions.count) {
            lastWalk = now
            osip_timers_ict_execute(osip)
            osip_timers_nict_execute(osip)
            osip_timers_ist_execute(osip)
            osip_timers_nist_execute(osip)
            osip_ict_execute(osip)
            osip_nict_execute(osip)
            osip_ist_execute(osip)
            osip_nist_execute(osip)
        }
        drain()
        let nonInviteLeft = nonInvite.expire(now: SIPEventLoop.now())
        return transactions.isEmpty && nonInviteLeft == 0 ? nil : 0.02
    }

    /// Seconds between two walks of osip's transaction lists (see `pump`): 5 ms, longer as
    /// the lists grow, up to 50 ms from 2,560 transactions. Each walk visits every live
    /// transaction (its timers, reading the clock for each, and its event queue): under an
    /// INVITE flood that held 5,000 transactions, walks every 5 ms were a quarter of the SIP
    /// loop's time. 50 ms is a tenth of T1, and what osip's timers fire late by at most.
    static func walkInterval(transactions: Int) -> Double {
        min(0.05, 0.005 * max(1, Double(transactions) / 256))
    }
    private var lastWalk = 0.0

    private var draining = false
    private var deferred: [() -> Void] = []

    /// Runs the work osip's callbacks queued (which may start or answer transactions and
    /// queue more), then frees the transactions osip ended.
    private func drain() {
        guard !draining else { return }
        draining = true
        while !deferred.isEmpty || !dead.isEmpty {
            let work = deferred
            deferred.removeAll(keepingCapacity: true)
            for w in work { w() }
            let ended = dead
            dead.removeAll(keepingCapacity: true)
            for id in ended { free(id) }
        }
        draining = false
    }

    private func free(_ id: Int32) {
        guard let tr = transactions.removeValue(forKey: id) else { return }
        if let ctx = contexts.removeValue(forKey: id) {
            if ctx.handler == nil { osipServerCount -= 1 }
            for m in ctx.messages { outgoing[m] = nil }
            if let key = ctx.key, index[key] == id { index[key] = nil }
        }
        osip_remove_transaction(osip, tr)
        osip_transaction_free(tr)
    }

    private func parseForOsip(_ bytes: [UInt8]) -> UnsafeMutablePointer<osip_message_t>? { osipMessage(bytes) }

    // MARK: Callbacks from osip

    fileprivate func sendCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>, _ msg: UnsafeMutablePointer<osip_message_t>) -> Int32 {
        guard let ctx = contexts[tr.pointee.transactionid] else { return -1 }
        var bytes = outgoing[UnsafeMutableRawPointer(msg)]
        if bytes == nil {
            // osip built this one itself (the ACK for a non-2xx final response).
            var text: UnsafeMutablePointer<CChar>? = nil
            var len = 0
            guard osip_message_to_str(msg, &text, &len) == 0, let text else { return -1 }
            bytes = Array(UnsafeRawBufferPointer(start: text, count: len))
            COSIP_free(text)
        }
        send?(bytes!, ctx.peer)
        return 0
    }

    fileprivate func messageCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>, _ msg: UnsafeMutablePointer<osip_message_t>?) {
        let id = tr.pointee.transactionid
        guard let ctx = contexts[id] else { return }
        let kind = osip_message_callback_type_t(rawValue: UInt32(type))
        switch kind {
        case OSIP_ICT_STATUS_1XX_RECEIVED, OSIP_ICT_STATUS_2XX_RECEIVED, OSIP_ICT_STATUS_3XX_RECEIVED,
             OSIP_ICT_STATUS_4XX_RECEIVED, OSIP_ICT_STATUS_5XX_RECEIVED, OSIP_ICT_STATUS_6XX_RECEIVED,
             OSIP_NICT_STATUS_1XX_RECEIVED, OSIP_NICT_STATUS_2XX_RECEIVED, OSIP_NICT_STATUS_3XX_RECEIVED,
             OSIP_NICT_STATUS_4XX_RECEIVED, OSIP_NICT_STATUS_5XX_RECEIVED, OSIP_NICT_STATUS_6XX_RECEIVED:
            if let msg, let m = incoming[UnsafeMutableRawPointer(msg)], let handler = ctx.handler {
                deferred.append { handler(.response(m)) }
            }
        case OSIP_ICT_STATUS_TIMEOUT, OSIP_NICT_STATUS_TIMEOUT:
            if let handler = ctx.handler { deferred.append { handler(.timeout) } }
        case OSIP_IST_INVITE_RECEIVED, OSIP_NIST_REGISTER_RECEIVED, OSIP_NIST_BYE_RECEIVED,
             OSIP_NIST_OPTIONS_RECEIVED, OSIP_NIST_INFO_RECEIVED, OSIP_NIST_CANCEL_RECEIVED,
             OSIP_NIST_NOTIFY_RECEIVED, OSIP_NIST_SUBSCRIBE_RECEIVED, OSIP_NIST_UNKNOWN_REQUEST_RECEIVED:
            if let msg, let m = incoming[UnsafeMutableRawPointer(msg)] {
                let tx = ServerTransaction(id: id, peer: ctx.peer)
                deferred.append { [unowned self] in self.onRequest?(m, tx) }
            }
        default:
            break
        }
    }

    fileprivate func killCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>) {
        dead.append(tr.pointee.transactionid)
    }

    fileprivate func transportErrorCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>) {
        if let handler = contexts[tr.pointee.transactionid]?.handler { deferred.append { handler(.transportError) } }
        dead.append(tr.pointee.transactionid)
    }

    fileprivate static func from(_ tr: UnsafeMutablePointer<osip_transaction_t>?) -> TransactionLayer? {
        guard let config = tr?.pointee.config,
              let ctx = osip_get_application_context(config.assumingMemoryBound(to: osip_t.self)) else { return nil }
        return Unmanaged<TransactionLayer>.fromOpaque(ctx).takeUnretainedValue()
    }
}

private func osipSendCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>?, _ msg: UnsafeMutablePointer<osip_message_t>?,
                              _ host: UnsafeMutablePointer<CChar>?, _ port: Int32, _ socket: Int32) -> Int32 {
    guard let tr, let msg, let layer = TransactionLayer.from(tr) else { return -1 }
    return layer.sendCallback(tr, msg)
}

private func osipMessageCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?, _ msg: UnsafeMutablePointer<osip_message_t>?) {
    guard let tr, let layer = TransactionLayer.from(tr) else { return }
    layer.messageCallback(type, tr, msg)
}

private func osipKillCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?) {
    guard let tr, let layer = TransactionLayer.from(tr) else { return }
    layer.killCallback(tr)
}

private func osipTransportErrorCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?, _ error: Int32) {
    guard let tr, let layer = TransactionLayer.from(tr) else { return }
    layer.transportErrorCallback(tr)
}

/// A new osip message parsed from `bytes` (free it with `osip_message_free`), or nil.
private func osipMessage(_ bytes: [UInt8]) -> UnsafeMutablePointer<osip_message_t>? {
    var msg: UnsafeMutablePointer<osip_message_t>? = nil
    let rc = bytes.withUnsafeBufferPointer { buf in
        buf.withMemoryRebound(to: CChar.self) { COSIP_parse($0.baseAddress, $0.count, &msg) }
    }
    return rc == 0 ? msg : nil
}

/// Bare osip parsing, for `make bench`'s comparison of our parse path with osip's own.
public enum OSIPBaseline {
    /// Parses `bytes` with osip_message_parse and frees the result; true when osip accepted it.
    public static func parse(_ bytes: [UInt8]) -> Bool {
        guard let msg = osipMessage(bytes) else { return false }
        osip_message_free(msg)
        return true
    }

    /// Parses and serialises with osip (the osip equivalent of our parse+serialise path).
    public static func parseAndSerialize(_ bytes: [UInt8]) -> Int {
        guard let msg = osipMessage(bytes) else { return 0 }
        var text: UnsafeMutablePointer<CChar>? = nil
        var len = 0
        if osip_message_to_str(msg, &text, &len) == 0, let text { COSIP_free(text) }
        osip_message_free(msg)
        return len
    }
}
