import COSIP

// The only file that touches libosip2. Everything above it sees `SIPMessage` values and
// transaction ids, never an osip pointer.

/// Server transactions for requests without an RFC 3261 branch (RFC 2543 peers), run by
/// osip on the SIP event loop.
///
/// Such requests cannot be matched by a key; RFC 3261 §17.2.3 matches them by Request-URI,
/// tags, Call-ID, CSeq and top Via, which osip implements, so they keep osip's search and
/// state machines (IST and NIST). Every message with a branch runs on our own machines
/// (`TransactionLayer`). osip's timers are run by one loop timer, armed for the earliest
/// deadline osip reports (`osip_timers_gettimeout`) while any of these transactions lives.
final class OSIPTransactions {
    /// A request that opened a server transaction: the message, osip's id, the peer.
    var onRequest: ((SIPMessage, Int32, SIPPeer) -> Void)?
    /// A transaction osip ended (its id is free to forget).
    var onEnded: ((Int32) -> Void)?
    /// A message that matched no transaction (an ACK for a 2xx, ...). Return true for a
    /// request when it has been dealt with and must not open a server transaction.
    var onUnmatched: ((SIPMessage, SIPPeer) -> Bool)?
    /// A valid request osip's own parser refused (it is stricter than RFC 4475 §3.1.1.2):
    /// the layer above answers it without a transaction.
    var onUnparsable: ((SIPMessage, SIPPeer) -> Void)?
    /// Sends bytes to a peer (the transports).
    var send: (([UInt8], SIPPeer) -> Void)?

    private let osip: UnsafeMutablePointer<osip_t>
    private let loop: EventLoop
    private final class Context {
        let peer: SIPPeer
        var messages: [UnsafeMutableRawPointer] = []
        init(peer: SIPPeer) { self.peer = peer }
    }
    private var contexts: [Int32: Context] = [:]
    private var transactions: [Int32: UnsafeMutablePointer<osip_transaction_t>] = [:]
    /// Bytes we serialised for an osip message, sent as-is (osip re-serialising would
    /// reorder our headers).
    private var outgoing: [UnsafeMutableRawPointer: [UInt8]] = [:]
    /// The parsed value of the osip message being processed now.
    private var incoming: [UnsafeMutableRawPointer: SIPMessage] = [:]
    private var dead: [Int32] = []
    private var timer: EventLoop.Timer?

    init(loop: EventLoop) throws {
        self.loop = loop
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
        loop.cancel(timer)
        for (_, tr) in transactions {
            osip_remove_transaction(osip, tr)
            osip_transaction_free(tr)
        }
        osip_release(osip)
    }

    /// Transactions alive now.
    var count: Int { transactions.count }

    /// One line per live transaction (osip state), for diagnostics.
    var liveSummary: [String] {
        let names = [
            "ICT pre-calling", "ICT calling", "ICT proceeding", "ICT completed", "ICT terminated",
            "IST pre-proceeding", "IST proceeding", "IST completed", "IST confirmed", "IST terminated",
            "NICT pre-trying", "NICT trying", "NICT proceeding", "NICT completed", "NICT terminated",
            "NIST pre-trying", "NIST trying", "NIST proceeding", "NIST completed", "NIST terminated"
        ]
        return transactions.keys.sorted().map { id in
            let state = Int(transactions[id]!.pointee.state.rawValue)
            return "osip \(state < names.count ? names[state] : "state \(state)") (no branch)"
        }
    }

    /// Feeds one received, already validated branchless request into osip.
    func receive(_ message: SIPMessage, bytes: [UInt8], from peer: SIPPeer) {
        guard
            let evt = bytes.withUnsafeBufferPointer({ buf in
                buf.withMemoryRebound(to: CChar.self) { osip_parse($0.baseAddress, $0.count) }
            }), let sip = evt.pointee.sip
        else {
            onUnparsable?(message, peer)
            return
        }
        let pointer = UnsafeMutableRawPointer(sip)
        incoming[pointer] = message
        defer { incoming.removeAll(keepingCapacity: true) }
        if osip_find_transaction_and_add_event(osip, evt) == 0 {
            runOsip()
            return
        }
        // No transaction: a new request, or something the layer above must judge.
        let handled = onUnmatched?(message, peer) ?? false
        if handled || message.method == "ACK" {
            osip_event_free(evt)
            return
        }
        guard let tr = osip_create_transaction(osip, evt) else {
            osip_event_free(evt)
            return
        }
        let id = tr.pointee.transactionid
        transactions[id] = tr
        contexts[id] = Context(peer: peer)
        osip_transaction_execute(tr, evt)
        drain()
    }

    /// Sends a response in transaction `id` (osip retransmits it as the RFC says).
    func respond(_ response: SIPMessage, bytes: [UInt8], in id: Int32) {
        guard let tr = transactions[id], let ctx = contexts[id], let msg = osipMessage(bytes) else { return }
        ctx.messages.append(UnsafeMutableRawPointer(msg))
        outgoing[UnsafeMutableRawPointer(msg)] = bytes
        let evt = osip_new_outgoing_sipmessage(msg)!
        evt.pointee.transactionid = id
        osip_transaction_execute(tr, evt)
        drain()
    }

    /// Runs osip's timers and event queues, then re-arms the loop timer for the next deadline.
    private func runOsip() {
        osip_timers_ist_execute(osip)
        osip_timers_nist_execute(osip)
        osip_ist_execute(osip)
        osip_nist_execute(osip)
        drain()
    }

    private var draining = false
    private var deferred: [() -> Void] = []

    /// Runs the work osip's callbacks queued (osip calls us from inside its state machines,
    /// before it has moved the transaction to its next state; events added then would be
    /// lost), frees the transactions osip ended, and arms the timer for osip's next deadline.
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
        armTimer()
    }

    private func armTimer() {
        loop.cancel(timer)
        timer = nil
        guard !transactions.isEmpty else { return }
        var next = timeval(tv_sec: 1, tv_usec: 0)
        osip_timers_gettimeout(osip, &next)
        let delay = max(0.005, Double(next.tv_sec) + Double(next.tv_usec) / 1e6)
        timer = loop.schedule(after: delay) { [weak self] in
            self?.timer = nil
            self?.runOsip()
        }
    }

    private func free(_ id: Int32) {
        guard let tr = transactions.removeValue(forKey: id) else { return }
        if let ctx = contexts.removeValue(forKey: id) {
            for m in ctx.messages { outgoing[m] = nil }
        }
        osip_remove_transaction(osip, tr)
        osip_transaction_free(tr)
        onEnded?(id)
    }

    // MARK: Callbacks from osip

    fileprivate func sendCallback(
        _ tr: UnsafeMutablePointer<osip_transaction_t>, _ msg: UnsafeMutablePointer<osip_message_t>
    ) -> Int32 {
        guard let ctx = contexts[tr.pointee.transactionid], let bytes = outgoing[UnsafeMutableRawPointer(msg)] else {
            return -1
        }
        send?(bytes, ctx.peer)
        return 0
    }

    fileprivate func messageCallback(
        _ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>, _ msg: UnsafeMutablePointer<osip_message_t>?
    ) {
        let id = tr.pointee.transactionid
        guard let ctx = contexts[id] else { return }
        switch osip_message_callback_type_t(rawValue: UInt32(type)) {
        case OSIP_IST_INVITE_RECEIVED, OSIP_NIST_REGISTER_RECEIVED, OSIP_NIST_BYE_RECEIVED,
            OSIP_NIST_OPTIONS_RECEIVED, OSIP_NIST_INFO_RECEIVED, OSIP_NIST_CANCEL_RECEIVED,
            OSIP_NIST_NOTIFY_RECEIVED, OSIP_NIST_SUBSCRIBE_RECEIVED, OSIP_NIST_UNKNOWN_REQUEST_RECEIVED:
            if let msg, let m = incoming[UnsafeMutableRawPointer(msg)] {
                let peer = ctx.peer
                deferred.append { [unowned self] in self.onRequest?(m, id, peer) }
            }
        default:
            break
        }
    }

    fileprivate func killCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>) {
        dead.append(tr.pointee.transactionid)
    }

    fileprivate func transportErrorCallback(_ tr: UnsafeMutablePointer<osip_transaction_t>) {
        dead.append(tr.pointee.transactionid)
    }

    fileprivate static func from(_ tr: UnsafeMutablePointer<osip_transaction_t>?) -> OSIPTransactions? {
        guard let config = tr?.pointee.config,
            let ctx = osip_get_application_context(config.assumingMemoryBound(to: osip_t.self))
        else { return nil }
        return Unmanaged<OSIPTransactions>.fromOpaque(ctx).takeUnretainedValue()
    }
}

private func osipSendCallback(
    _ tr: UnsafeMutablePointer<osip_transaction_t>?, _ msg: UnsafeMutablePointer<osip_message_t>?,
    _ host: UnsafeMutablePointer<CChar>?, _ port: Int32, _ socket: Int32
) -> Int32 {
    guard let tr, let msg, let layer = OSIPTransactions.from(tr) else { return -1 }
    return layer.sendCallback(tr, msg)
}

private func osipMessageCallback(
    _ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?, _ msg: UnsafeMutablePointer<osip_message_t>?
) {
    guard let tr, let layer = OSIPTransactions.from(tr) else { return }
    layer.messageCallback(type, tr, msg)
}

private func osipKillCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?) {
    guard let tr, let layer = OSIPTransactions.from(tr) else { return }
    layer.killCallback(tr)
}

private func osipTransportErrorCallback(_ type: Int32, _ tr: UnsafeMutablePointer<osip_transaction_t>?, _ error: Int32)
{
    guard let tr, let layer = OSIPTransactions.from(tr) else { return }
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
