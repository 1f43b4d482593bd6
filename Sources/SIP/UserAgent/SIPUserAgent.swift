import CLinux
import Crypto
import Glibc
import SDP

/// Receives new calls and out-of-dialog events from a `SIPUserAgent`, on the SIP loop.
public protocol SIPUserAgentDelegate: AnyObject {
    /// A new INVITE passed validation; 100 Trying has been sent. Set `call.delegate` and ring,
    /// answer or reject it.
    func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall)

    /// Test peers only (the carrier simulator's `slow-trying` number): false withholds the
    /// automatic 100 Trying for this INVITE (its UDP retransmissions are absorbed by the
    /// server transaction); `SIPCall.ring(status: 100)` sends it later. Default true.
    func userAgent(_ ua: SIPUserAgent, sendsTryingFor invite: SIPMessage) -> Bool
}

extension SIPUserAgentDelegate {
    public func userAgent(_ ua: SIPUserAgent, sendsTryingFor invite: SIPMessage) -> Bool { true }
}

/// A SIP user agent: transports, transactions (osip), request validation (RFC 3261 §8.2),
/// dialogs and INVITE sessions. Knows nothing of media: SDP goes in and out as values.
///
/// Loop-confined: call its methods on `loop` (use `loop.execute` from other threads);
/// delegates are called there too. Its mutable state is in `loopState`, checked on every
/// access in debug builds; hooks are set before `start`, while the caller owns the loop.
public final class SIPUserAgent: Sendable {
    public let loop: SIPEventLoop
    public let configuration: SIPUserAgentConfiguration
    /// What only the loop touches (SIPUserAgent+LoopState.swift; the properties reach it).
    let loopState: LoopBoundBox<LoopState>

    public weak var delegate: SIPUserAgentDelegate? {
        get { loopState.value.delegate }
        set { loopState.value.delegate = newValue }
    }
    /// Counts of what arrived and what we answered, for `/metrics` and tests.
    public internal(set) var counters: Counters {
        get { loopState.value.counters }
        _modify { yield &loopState.value.counters }
    }
    var transports: SIPTransports { loopState.value.transports }
    var transactions: TransactionLayer { loopState.value.transactions }
    public internal(set) var localAddresses: [SIPPeer] {
        get { loopState.value.localAddresses }
        set { loopState.value.localAddresses = newValue }
    }
    /// Which callers must authenticate, per source (SIPUserAgent+Authentication.swift); nil
    /// (the default) leaves it to `configuration.inboundAuthentication`. Set before `start`,
    /// or on the loop (a reload): with the same realm, the nonces already sent stay valid.
    public var inboundDigest: InboundDigestPolicy? {
        get { loopState.value.inboundDigest }
        set {
            loopState.value.inboundDigest = newValue
            let realm = digestPolicy?.realm
            guard digestServer?.realm != realm else { return }
            digestServer = realm.map { DigestServer(realm: $0, secret: Crypto.randomBytes(count: 32)) }
        }
    }
    /// Requests dropped or refused by `configuration.defence`, by reason.
    public internal(set) var refusals: [SIPRefusal: Int] {
        get { loopState.value.refusals }
        _modify { yield &loopState.value.refusals }
    }
    /// Stream peers refused or cut by `configuration.transportLimits`, by reason.
    public var transportRefusals: [SIPTransportRefusal: Int] { transports.refusals }
    /// Which sources are trunks (or other peers we serve). Requests from any other source
    /// are dropped unanswered unless they belong to a call of ours or
    /// `defence.answerUnknownSources` is set. nil (the default) trusts every source, as a
    /// test endpoint or simulator wants.
    public var isTrustedSource: ((SocketAddress) -> Bool)? {
        get { loopState.value.isTrustedSource }
        set { loopState.value.isTrustedSource = newValue }
    }
    /// The address to name ourselves by toward a peer (Via, Contact), when it is not the
    /// listener's: a public address in front of a NAT, per trunk. nil (the default) or a nil
    /// answer: the listener's address (`SIPUserAgent+Addresses.swift`).
    public var advertisedAddress: ((SIPPeer) -> SIPAdvertisedAddress?)? {
        get { loopState.value.advertisedAddress }
        set { loopState.value.advertisedAddress = newValue }
    }
    /// Told of every stream connection that failed or went down (TLS handshakes and
    /// certificates among them), on the loop, after the requests sent over it have failed.
    /// The gateway logs the TLS ones. Set before `start`.
    public var onConnectionFailure: ((SIPConnectionFailureReport) -> Void)? {
        get { loopState.value.onConnectionFailure }
        set { loopState.value.onConnectionFailure = newValue }
    }
    /// Asked on the loop before an out-of-dialog OPTIONS is answered: seconds for a
    /// `Retry-After` while the owner takes no new calls (a draining gateway), so that a load
    /// balancer's OPTIONS probe gets 503 and takes the node out of rotation. nil (the
    /// default) or a nil answer: 200 with Allow, Accept and Supported.
    public var outOfServiceRetryAfter: (() -> Int?)? {
        get { loopState.value.outOfServiceRetryAfter }
        set { loopState.value.outOfServiceRetryAfter = newValue }
    }
    /// Called on the loop with every SIP message sent, and every message read that the
    /// defence let through (session traces, capture files, HEP): what a banned or unknown
    /// source sends, and what a flood loses to the rate limits, is not tapped unless
    /// `defence.tapUnfiltered` asks for everything. Set it before `start()`. It must be
    /// quick: it runs for every message, trusted floods included.
    public var wireTap: ((SIPWireMessage) -> Void)? {
        get { transports.onWire }
        set { transports.onWire = newValue }
    }
    /// Times the heap was handed back to the system after a transaction flood (`/metrics`).
    public internal(set) var heapTrims: Int {
        get { loopState.value.heapTrims }
        set { loopState.value.heapTrims = newValue }
    }
    /// Transactions alive now, client and server (`/metrics`). On the loop.
    public var liveTransactions: Int {
        loop.assertInLoop()
        return transactions.count
    }

    public struct Counters: Sendable, Equatable {
        public var received = 0
        public var malformed = 0
        public var statelessResponses: [Int: Int] = [:]
    }

    public init(
        configuration: SIPUserAgentConfiguration = SIPUserAgentConfiguration(), loop: SIPEventLoop? = nil
    ) throws {
        self.configuration = configuration
        let loop = try loop ?? SIPEventLoop()
        self.loop = loop
        let transports = SIPTransports(loop: loop, limits: configuration.transportLimits)
        if let server = configuration.tlsServer { transports.tlsServerContext = try TLSContext(server: server) }
        // Built before the loop runs (or on it): the loop owns it from `start` on.
        loopState = LoopBoundBox(
            LoopState(
                transports: transports,
                transactions: try TransactionLayer(timers: configuration.timers, loop: loop),
                digestServer: configuration.inboundAuthentication.map {
                    DigestServer(realm: $0.realm, secret: Crypto.randomBytes(count: 32))
                },
                authFailures: AuthFailureCounter(
                    limit: configuration.defence.maxAuthFailures,
                    window: configuration.defence.authFailureWindowSeconds,
                    capacity: configuration.defence.maxTrackedSources),
                sources: SourceGuard(
                    requestsPerSecond: configuration.defence.requestsPerSecond,
                    trustedRequestsPerSecond: configuration.defence.trustedRequestsPerSecond,
                    banSeconds: configuration.defence.banSeconds,
                    capacity: configuration.defence.maxTrackedSources)),
            loop: loop)
        transports.onMessage = { [unowned self] bytes, peer, local in self.receive(bytes, from: peer, at: local) }
        transports.onDatagram = { [unowned self] bytes, peer, local in
            self.receive(datagram: bytes, from: peer, at: local)
        }
        transports.onConnectionFailure = { [unowned self] report in self.connectionFailed(report) }
        transactions.send = { [unowned self] bytes, peer in self.transports.send(bytes, to: peer) }
        transactions.onRequest = { [unowned self] m, tx in self.handleRequest(m, tx) }
        transactions.onUnmatched = { [unowned self] m, peer in self.handleUnmatched(m, peer) }
        transactions.onUnparsable = { [unowned self] m, peer in self.handleUnparsable(m, peer) }
        // Transactions run on their own loop timers; the tick only returns freed memory.
        self.loop.tick = { [unowned self] in
            if self.heapTrim.shouldTrim(liveTransactions: self.transactions.count) {
                trimHeap()
                self.heapTrims += 1
            }
            return nil
        }
    }

    /// Opens the configured sockets and starts the loop; returns the bound addresses.
    @discardableResult
    public func start() throws -> [SIPPeer] {
        loop.start(name: "irisgw-sip")
        let result: Result<[SIPPeer], SocketError> = loop.sync { [self] in
            do {
                var bound: [SIPPeer] = []
                for (t, a) in configuration.listen {
                    // Port 0 for both UDP and TCP on one host means one port the OS picks for
                    // both (the port a Via or Contact names serves either transport).
                    // TLS has a port of its own (TCP cannot share it).
                    let twin =
                        a.port == 0 && t != .tls
                        ? bound.first { $0.transport != t && $0.transport != .tls && $0.address.host == a.host } : nil
                    let local: SocketAddress
                    if let twin, let i = bound.firstIndex(of: twin) {
                        let (moved, mine) = try listenTwin(t, of: twin)
                        bound[i].address = moved
                        local = mine
                    } else {
                        local = try transports.listen(t, a)
                    }
                    bound.append(SIPPeer(transport: t, address: local))
                }
                localAddresses = bound
                _ = resolver  // c-ares reads resolv.conf now, not at the first call
                return .success(bound)
            } catch let e as SocketError {
                return .failure(e)
            } catch {
                return .failure(SocketError("listen", code: EINVAL))
            }
        }
        return try result.get()
    }

    /// Listens with `transport` on the port `twin` got from the OS. When another program
    /// holds that port for this transport, both move to a new pick (a few tries).
    private func listenTwin(
        _ transport: SIPTransportProtocol, of twin: SIPPeer
    ) throws -> (twin: SocketAddress, local: SocketAddress) {
        var twinAddress = twin.address
        for attempt in 0..<20 {
            do {
                return (twinAddress, try transports.listen(transport, twinAddress))
            } catch let error as SocketError where error.code == EADDRINUSE && attempt < 19 {
                transports.closeListener(twin.transport, twinAddress)
                twinAddress = try transports.listen(twin.transport, SocketAddress(host: twinAddress.host, port: 0))
            }
        }
        throw SocketError("bind \(twinAddress)", code: EADDRINUSE)
    }

    /// Calls `done` on the loop once what was sent before has left: a loop turn has passed
    /// (work queued on it has run) and no stream connection holds unsent bytes; after `timeout`
    /// seconds at the latest (a peer that stopped reading). On the loop.
    public func whenSent(timeout: Double, _ done: @escaping () -> Void) {
        loop.assertInLoop()
        let deadline = SIPEventLoop.now() + timeout
        func check() {
            let unsent = transports.connections.values.contains { $0.stream.queuedBytes > 0 }
            if !unsent || SIPEventLoop.now() >= deadline { return done() }
            // Writable sockets are flushed by the loop: look again soon.
            loop.schedule(after: 0.005) { check() }
        }
        loop.schedule(after: 0) { check() }
    }

    /// Closes sockets and stops the loop.
    public func shutdown() {
        loop.sync { [self] in
            transports.closeAll()
            dnsResolver?.close()
        }
        loop.stop()
    }

    // MARK: Incoming

    /// A framed stream message (or the sequence fuzzer's): the defence, then parse and the
    /// transaction layer.
    func receive(_ bytes: [UInt8], from peer: SIPPeer, at local: SocketAddress) {
        guard let screened = bytes.withUnsafeBytes({ screen($0, from: peer, at: local) }) else { return }
        receive(bytes, screened, from: peer, at: local)
    }

    /// A UDP datagram still in the transport's read batch: copied only once the checks before
    /// parsing have let it through, so a flood refused unparsed costs no allocation.
    func receive(datagram bytes: UnsafeRawBufferPointer, from peer: SIPPeer, at local: SocketAddress) {
        guard let screened = screen(bytes, from: peer, at: local) else { return }
        receive(Array(bytes), screened, from: peer, at: local)
    }

    /// What the checks before parsing learnt about a message they let through.
    struct Screened {
        var now: Double
        var trusted: Bool
        var isACK: Bool
    }

    /// The defence before parsing: a banned source, a trusted source over its rate, new work
    /// while behind the socket. nil: refused (and counted).
    private func screen(_ bytes: UnsafeRawBufferPointer, from peer: SIPPeer, at local: SocketAddress) -> Screened? {
        counters.received += 1
        let now = SIPEventLoop.now()
        if defence.tapUnfiltered { tap(Array(bytes), from: peer, at: local) }
        // A banned source costs one dictionary lookup: not even parsed.
        // A trusted proxy is judged by the source it names, once the request is parsed.
        let proxy = isProxy(peer.address)
        if !proxy, sources.isBanned(peer.address.host, now: now) {
            refuse(.banned)
            return nil
        }
        let trusted = proxy || isTrusted(peer.address)
        // A trusted source's requests are counted before they are parsed, so a flood over
        // its rate costs a lookup, not a parse, and the loop keeps the socket drained for the
        // responses our own calls wait for. Responses are never counted.
        let isRequest = !bytes.starts(with: SIPWireMessage.responsePrefix)
        let isACK = isRequest && bytes.starts(with: Self.ackPrefix)
        if isRequest, trusted, !proxy, admitTrusted(peer.address.host, ack: isACK, now: now) != .admit {
            refuse(.rateLimited)
            return nil
        }
        // Behind the socket: shed new work unparsed and keep what finishes work in progress
        // (responses, ACK, BYE, CANCEL, PRACK), so the queue drains and nothing we started
        // is lost in it (SIPUserAgent+Defence.swift).
        if isRequest, peer.transport == .udp, transports.udpBacklogged, !Self.finishesWork(bytes) {
            refuse(.overloaded)
            return nil
        }
        return Screened(now: now, trusted: trusted, isACK: isACK)
    }

    /// A message the checks before parsing let through: parsed, the defence that needs its
    /// headers, then the transaction layer.
    private func receive(_ bytes: [UInt8], _ screened: Screened, from peer: SIPPeer, at local: SocketAddress) {
        let now = screened.now, isACK = screened.isACK, tapAll = defence.tapUnfiltered
        var trusted = screened.trusted
        var message: SIPMessage
        do {
            message = try SIPMessage.parse(bytes, framing: peer.transport == .udp ? .datagram : .stream)
        } catch {
            counters.malformed += 1
            guard trusted else {
                refuse(.malformedFromUnknown)
                return
            }
            if !tapAll { tap(bytes, from: peer, at: local) }
            // A request we can read enough of gets the error status; responses are dropped (§18).
            if let partial = error.partial, partial.isRequest, partial.method != "ACK",
                partial[.via] != nil, partial[.callID] != nil, partial[.cseq] != nil, partial[.from] != nil,
                partial[.to] != nil
            {
                var r = SIPMessage.response(
                    to: partial, status: error.status,
                    reason: error.status == 400 ? "Bad Request (\(error.description))" : nil)
                r.addHeader(.server, configuration.userAgent)
                sendStateless(r, to: peer)
            }
            return
        }
        if message.isRequest {
            let source = claimSource(&message, from: peer)
            if source != peer {
                // Through a trusted proxy: the carrier behind it is banned and counted.
                if sources.isBanned(source.address.host, now: now) {
                    refuse(.banned)
                    return
                }
                trusted = isTrusted(source.address)
                if trusted, admitTrusted(source.address.host, ack: isACK, now: now) != .admit {
                    refuse(.rateLimited)
                    return
                }
            }
            guard admit(message, from: peer, source: source, trusted: trusted, now: now) else { return }
            stampReceived(&message, peer)
            if !tapAll { tap(bytes, from: peer, at: local) }
        } else if !tapAll,
            trusted || message.callID.map({ calls[$0] != nil }) == true || transactions.hasTransaction(for: message)
        {
            // A response from outside the trunks is tapped only when it answers something of ours.
            tap(bytes, from: peer, at: local)
        }
        transactions.receive(message, bytes: bytes, from: peer)
    }

    /// A message read, to the wire tap (once it has passed the defence, unless
    /// `defence.tapUnfiltered`).
    private func tap(_ bytes: [UInt8], from peer: SIPPeer, at local: SocketAddress) {
        guard let onWire = transports.onWire else { return }
        onWire(
            SIPWireMessage(
                time: SIPWireMessage.now(), direction: .received, transport: peer.transport, local: local,
                remote: peer.address, bytes: bytes))
    }

    /// RFC 3261 §18.2.1 `received` and RFC 3581 `rport` on the top Via, so responses built
    /// from the request carry where it really came from.
    private func stampReceived(_ m: inout SIPMessage, _ peer: SIPPeer) {
        guard let i = m.headers.firstIndex(where: { $0.name == .via }) else { return }
        var values = SIPScanner.splitList(m.headers[i].value)
        guard var via = try? Via.parse(values[0]) else { return }
        if via.rport != nil {
            via.setRport(peer.address.port)
            via.received = peer.address.host
        } else if via.host != peer.address.host {
            via.received = peer.address.host
        } else {
            return
        }
        values[0] = via.serialize()
        m.headers[i].value = values.joined(separator: ", ")
    }

    func sendStateless(_ response: SIPMessage, to peer: SIPPeer) {
        if let code = response.statusCode { counters.statelessResponses[code, default: 0] += 1 }
        transports.send(response.serialize(), to: peer)
    }

    /// Answers `request` in its server transaction, adding our Server header.
    func respond(
        _ request: SIPMessage, _ tx: ServerTransaction, _ status: Int, reason: String? = nil, toTag: String? = nil,
        headers: [SIPHeader] = [], sdp: SessionDescription? = nil
    ) {
        var r = SIPMessage.response(to: request, status: status, reason: reason, toTag: toTag)
        r.headers.append(contentsOf: headers)
        r.addHeader(.server, configuration.userAgent)
        if let sdp { r.setSDP(sdp) }
        transactions.respond(r, in: tx)
    }

    private func handleUnparsable(_ m: SIPMessage, _ peer: SIPPeer) {
        guard m.method != "ACK" else { return }
        let status = validationFailure(m)?.status ?? 501
        var r = SIPMessage.response(to: m, status: status, toTag: SIPIdentifiers.tag())
        r.addHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", "))
        sendStateless(r, to: peer)
    }

    private func handleUnmatched(_ m: SIPMessage, _ peer: SIPPeer) -> Bool {
        guard let callID = m.callID else { return true }
        if !m.isRequest {
            // A 2xx retransmission after osip ended the ICT: the call re-sends its ACK.
            for call in calls[callID] ?? [] where call.handleStrayResponse(m) { return true }
            return true
        }
        if m.method == "ACK" {
            for call in calls[callID] ?? [] where call.handleACK(m) { return true }
            return true
        }
        // An INVITE retransmitted after we answered it (the IST is gone): answer it again.
        // Matched on its branch (§17.2.3), so a copy that has picked up our To tag still
        // counts; it is not a re-INVITE.
        if m.method == "INVITE" {
            for call in calls[callID] ?? [] where call.handleRetransmission(m) { return true }
        }
        return false
    }

    /// What RFC 3261 §8.2 says to answer before any processing, or nil when the request passes.
    func validationFailure(_ m: SIPMessage) -> (status: Int, headers: [SIPHeader])? {
        let method = m.method
        guard let uri = m.requestURI, ["sip", "sips", "tel"].contains(uri.scheme) else { return (416, []) }
        if !SIPUserAgentConfiguration.allowedMethods.contains(method) {
            let allow = SIPHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", "))
            return (SIPUserAgentConfiguration.knownMethods.contains(method) ? 405 : 501, [allow])
        }
        if method != "CANCEL" && method != "ACK" {
            let supported = supportedOptionTags
            let unsupported = m.require.filter { tag in !supported.contains(where: { $0.caseInsensitiveCompare(tag) }) }
            if !unsupported.isEmpty { return (420, [SIPHeader(.unsupported, unsupported.joined(separator: ", "))]) }
        }
        if !m.body.isEmpty, ["INVITE", "UPDATE", "PRACK", "ACK"].contains(method) {
            let type =
                m.contentType?.lowercased().split(separator: ";").first.map { String($0).trimmingSIPWhitespace() } ?? ""
            if type != "application/sdp" { return (415, [SIPHeader(.accept, "application/sdp")]) }
            if let enc = m[.contentEncoding], !enc.isEmpty, enc.lowercased() != "identity" {
                return (415, [SIPHeader("Accept-Encoding", "identity")])
            }
        }
        if method == "INVITE", let accept = m[.accept] {
            let types = SIPScanner.splitList(accept).map {
                $0.split(separator: ";").first.map { String($0).trimmingSIPWhitespace().lowercased() } ?? ""
            }
            if !types.contains(where: { $0 == "application/sdp" || $0 == "application/*" || $0 == "*/*" }) {
                return (406, [SIPHeader(.accept, "application/sdp")])
            }
        }
        return nil
    }

    var supportedOptionTags: [String] { inboundCallPolicy.supportedOptionTags }

    private func handleRequest(_ m: SIPMessage, _ tx: ServerTransaction) {
        if let failure = validationFailure(m) {
            respond(m, tx, failure.status, toTag: SIPIdentifiers.tag(), headers: failure.headers)
            return
        }
        let method = m.method
        if method == "CANCEL" {
            handleCancel(m, tx)
            return
        }
        if m.to?.tag != nil {
            if let call = calls[m.callID ?? ""]?.first(where: { $0.dialogMatches(m) }) {
                call.handleInDialogRequest(m, tx)
            } else {
                respond(m, tx, 481)
            }
            return
        }
        if isMergedRequest(m) {
            respond(m, tx, 482, toTag: SIPIdentifiers.tag())
            return
        }
        var authenticated: String?
        if method == "INVITE" {
            // Sources trusted by address that must authenticate are challenged here, in the
            // transaction; others were challenged statelessly before (admitAuthenticating).
            let source = source(of: m, from: tx.peer).address
            let check = checkDigest(m, from: source, now: SIPEventLoop.now())
            guard account(check, host: source.host, trusted: isTrusted(source), now: SIPEventLoop.now()) else {
                return
            }
            if case .challenge(let challenges, _) = check {
                respond(m, tx, 401, toTag: SIPIdentifiers.tag(), headers: challenges)
                return
            }
            if case .authenticated(let user) = check { authenticated = user }
        }
        switch method {
        case "INVITE":
            let call = SIPCall(incoming: m, transaction: tx, ua: self)
            call.authenticatedUsername = authenticated
            if let delegate, !delegate.userAgent(self, sendsTryingFor: m) { call.misbehaviour.withholdsTrying = true }
            calls[call.callID, default: []].append(call)
            call.start()
        case "OPTIONS":
            if let seconds = outOfServiceRetryAfter?() {
                respond(
                    m, tx, 503, toTag: SIPIdentifiers.tag(), headers: [SIPHeader(.retryAfter, String(max(0, seconds)))])
            } else {
                respond(m, tx, 200, toTag: SIPIdentifiers.tag(), headers: capabilityHeaders)
            }
        default:
            // BYE, PRACK, UPDATE, INFO outside a dialog.
            respond(m, tx, 481, toTag: SIPIdentifiers.tag())
        }
    }

    /// Allow / Accept / Supported, as OPTIONS and INVITE answers advertise them.
    var capabilityHeaders: [SIPHeader] {
        [
            SIPHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", ")),
            SIPHeader(.accept, "application/sdp"),
            SIPHeader(.supported, supportedOptionTags.joined(separator: ", "))
        ]
    }

    private func isMergedRequest(_ m: SIPMessage) -> Bool {
        guard let fromTag = m.from?.tag, let callID = m.callID, let cseq = m[.cseq], let branch = m.topVia?.branch
        else { return false }
        return mergedRequests.isMerged(
            key: fromTag + "|" + callID + "|" + cseq, branch: branch, now: SIPEventLoop.now())
    }

    private func handleCancel(_ m: SIPMessage, _ tx: ServerTransaction) {
        let branch = m.topVia?.branch
        if let call = calls[m.callID ?? ""]?.first(where: { $0.isIncoming && $0.inviteBranch == branch }) {
            call.handleCancel(m, tx)
        } else {
            respond(m, tx, 481, toTag: SIPIdentifiers.tag())
        }
    }

    // MARK: Outgoing

    /// Sends an out-of-dialog or in-dialog request in a new client transaction, adding a
    /// Via (unless present) and our User-Agent.
    @discardableResult
    func send(
        _ request: SIPMessage, to target: SIPPeer, handler: @escaping (ClientTransactionEvent) -> Void
    ) -> (ClientTransaction?, SIPMessage) {
        var (r, peer) = viaEdgeProxy(request, to: target)
        if r[.via] == nil { r.prependHeader(.via, makeVia(toward: peer).serialize()) }
        if r[.maxForwards] == nil { r.addHeader(.maxForwards, "70") }
        if r[.userAgent] == nil { r.addHeader(.userAgent, configuration.userAgent) }
        return (transactions.start(r, to: peer, handler: handler), r)
    }

    /// Sends a request outside any dialog (OPTIONS ping, REGISTER) and reports its outcome.
    public func sendRequest(
        _ method: String, to uri: SIPURI, peer: SIPPeer, from: NameAddress, to: NameAddress? = nil,
        headers: [SIPHeader] = [], handler: @escaping (ClientTransactionEvent) -> Void
    ) {
        var m = SIPMessage.request(method, uri)
        var f = from
        if f.tag == nil { f.tag = SIPIdentifiers.tag() }
        m.addHeader(.from, f.serialize())
        m.addHeader(.to, (to ?? NameAddress(uri: uri)).serialize())
        m.addHeader(.callID, SIPIdentifiers.callID(host: localAddress(toward: peer).host))
        m.addHeader(.cseq, CSeq(1, method).serialize())
        m.headers.append(contentsOf: headers)
        send(m, to: peer, handler: handler)
    }

    func remove(_ call: SIPCall) {
        calls[call.callID]?.removeAll(where: { $0 === call })
        if calls[call.callID]?.isEmpty == true { calls[call.callID] = nil }
    }

    /// Calls alive now (any state).
    public var activeCallCount: Int { calls.values.reduce(0) { $0 + $1.count } }
}
