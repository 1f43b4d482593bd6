// One accepted connection, driven by the event loop: reads and parses requests, hands each
// complete one to a worker, writes the answer, then reads the next (pipelined requests are
// answered in order because the next is read only after the previous answer is written).
// Each phase has one deadline (header, body, idle, write, linger, close grace), checked by
// the core's sweep. The WebSocket phase is in WebSocketServerFrames.swift.
//
// On an HTTPS listener a `TLSStream` sits between the socket and the parser (`tls`): bytes
// read are decrypted onto `input`, and `output` is sealed into `wire` on every flush; the
// phases, deadlines and bounds are the same for both (one server, one connection path).
//
// Loop-confined: every method runs on the server's event loop thread.

import Foundation
import Glibc
import IOCore
import IrisAPI
import TLS
import HTTP

final class HTTPConnection {
    enum Phase {
        /// Waiting for or reading a request head.
        case head
        /// Reading the body of `head`.
        case body
        /// The request is with a worker; reading paused.
        case handling
        /// Writing a response; then the next request, or lingering.
        case responding
        /// Upgraded (WebSocketServerFrames.swift).
        case webSocket
        /// Our side is done: input is read and dropped until EOF or the linger time.
        case lingering
        case closed
    }

    enum DeadlineKind {
        case none, header, body, idle, write, linger, closeGrace
        /// A WebSocket's credential runs out (`WebSocketExpiry`).
        case expiry
    }

    let id: Int
    let fd: Int32
    /// The client's address as handlers see it.
    let peer: SocketAddress
    /// What the per-source cap counts by.
    let source: String
    unowned let core: HTTPServerCore
    var configuration: HTTPServerConfiguration { core.configuration }

    private(set) var phase = Phase.head
    private(set) var deadline = Double.infinity
    private var deadlineKind = DeadlineKind.none

    var input = ByteBuffer()
    /// Plaintext for the client (HTTP heads, bodies, WebSocket frames).
    var output: [UInt8] = []
    private var sent = 0
    /// The response body still to be produced into `output` (a streamed pcap).
    private var bodyStream: (any HTTPBodyStream)?
    /// TLS between the socket and the parser (an HTTPS listener); nil for plain HTTP.
    var tls: TLSStream?
    /// Ciphertext for the socket (TLS only): `output` sealed, and the handshake's messages.
    private var wire: [UInt8] = []
    private var wireSent = 0
    var pendingOutput: Int { output.count - sent + wire.count - wireSent }
    private var watchingWritable = false
    private(set) var readingPaused = false
    /// Input is dropped (a refusal is being written, or lingering).
    private var discardInput = false

    // The request being read.
    private var head: HTTPRequestHead?
    private var headSearched = 0
    private var body: [UInt8] = []
    private var remaining = 0
    private var chunked: ChunkedBodyDecoder?
    private var closeAfterResponse = false
    private var processing = false

    // WebSocket (WebSocketServerFrames.swift).
    var pendingUpgrade: (request: HTTPRequest, key: String)?
    var webSocket: WebSocketConnection?
    /// When the WebSocket's credential runs out (the upgrade callback's `expiry`).
    var webSocketExpiry: WebSocketExpiry?
    var frames = WebSocketServerState(limit: 0)

    init(id: Int, fd: Int32, peer: SocketAddress, source: String, core: HTTPServerCore) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.source = source
        self.core = core
    }

    /// The first head must be complete within headerTimeout of the accept.
    func start(now: Double) {
        setDeadline(.header, configuration.headerTimeout)
    }

    // MARK: Reading

    func readable() {
        guard phase != .closed else { return }
        if readingPaused {
            checkHangUp()
            return
        }
        let n = recv(fd, core.scratch.baseAddress, core.scratch.count, 0)
        if n > 0 {
            guard !discardInput else { return }
            let bytes = UnsafeRawBufferPointer(rebasing: core.scratch[0..<n])
            if tls != nil {
                guard receiveTLS(bytes) else { return }
            } else {
                input.append(bytes)
            }
            switch phase {
            case .head, .body: processRequests()
            case .webSocket: processFrames()
            default: break
            }
        } else if n == 0 {
            endOfInput()
        } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            teardown()
        }
    }

    /// The client closed its side (a FIN, or TLS close_notify).
    private func endOfInput() {
        if phase == .responding {
            // Half-closed after its request: finish writing the answer first.
            setReading(false)
        } else {
            teardown()
        }
    }

    /// Ciphertext from the socket: plaintext onto `input`, the handshake's answers out.
    /// False when the connection ended (a failed handshake, a broken record, close_notify).
    private func receiveTLS(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let handshaking = tls!.isHandshaking
        let out = tls!.receive(bytes)
        wire += out.ciphertext
        if let failure = out.failure {
            core.tlsFailed(failure, peer: peer, duringHandshake: handshaking)
            // The alert, if the socket takes it at once; nothing else follows.
            sendWireNow()
            teardown()
            return false
        }
        if out.established { core.tlsEstablished() }
        if !out.plaintext.isEmpty { out.plaintext.withUnsafeBytes { input.append($0) } }
        if !out.ciphertext.isEmpty {
            _ = flush()
            if phase == .closed { return false }
        }
        if out.closed { endOfInput() }
        return phase != .closed
    }

    /// Whatever ciphertext is waiting, best effort and without blocking (an alert before a
    /// close).
    private func sendWireNow() {
        guard wireSent < wire.count else { return }
        _ = wire.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + wireSent, $0.count - wireSent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// `bytes` now if the socket takes them (sealed on an HTTPS connection), else never: a
    /// courtesy before a close (a 408, a WebSocket close frame).
    func sendImmediately(_ bytes: [UInt8]) {
        guard phase != .closed else { return }
        guard tls != nil else {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            return
        }
        guard tls!.isEstablished else { return }
        wire += tls!.send(bytes).ciphertext
        sendWireNow()
    }

    /// Called while reading is paused: epoll reports hang-ups and errors regardless (or the
    /// event was for an earlier socket with the same number). Close only when the socket
    /// really is broken or at its end.
    private func checkHangUp() {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            teardown()
        }
    }

    func setReading(_ on: Bool) {
        guard readingPaused == on, phase != .closed else { return }
        readingPaused = !on
        core.loop.setReading(fd: fd, on)
    }

    func setDeadline(_ kind: DeadlineKind, _ seconds: Double) {
        deadlineKind = kind
        deadline = kind == .none ? .infinity : EventLoop.now() + seconds
    }

    // MARK: Requests

    /// Parses what is buffered as far as it goes. Not re-entered: a response written at once
    /// (a refusal) may ask for the next request while this is still on the stack.
    func processRequests() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        while true {
            switch phase {
            case .head:
                guard readHead() else { return }
            case .body:
                guard readBody() else { return }
                complete()
            default:
                return
            }
        }
    }

    /// True when a head was taken (the phase moved on).
    private func readHead() -> Bool {
        if headSearched == 0 {
            // RFC 9112 §2.2: empty lines before a request line are ignored.
            while input.unread.starts(with: [13, 10]) { input.consume(2) }
        }
        guard !input.isEmpty else { return false }
        if deadlineKind == .idle { setDeadline(.header, configuration.headerTimeout) }
        let limit = configuration.maxHeaderBytes
        guard let length = HTTPRequestParser.headLength(input.unread, from: headSearched) else {
            if input.count > limit {
                refuse(HTTPRequestError(431, "request head too large"))
            } else {
                headSearched = input.count
            }
            return false
        }
        headSearched = 0
        guard length <= limit else {
            refuse(HTTPRequestError(431, "request head too large"))
            return false
        }
        let parsed: HTTPRequestHead
        do {
            parsed = try HTTPRequestParser.parseHead(input.unread.prefix(length))
        } catch {
            refuse(error)
            return false
        }
        input.consume(length)
        head = parsed
        switch parsed.body {
        case .none:
            complete()
        case .length(let n):
            if parsed.wantsWebSocket {
                refuse(HTTPRequestError(400, "a WebSocket upgrade has no body"))
                return false
            }
            // Refused before reading: with Expect: 100-continue the body is never sent.
            guard n <= configuration.maxBodyBytes else {
                refuse(HTTPRequestError(413, "request body too large"))
                return false
            }
            remaining = n
            body.reserveCapacity(n)
            startBody(parsed)
        case .chunked:
            if parsed.wantsWebSocket {
                refuse(HTTPRequestError(400, "a WebSocket upgrade has no body"))
                return false
            }
            chunked = ChunkedBodyDecoder(maxBodyBytes: configuration.maxBodyBytes, maxTrailerBytes: configuration.maxHeaderBytes)
            startBody(parsed)
        }
        return true
    }

    private func startBody(_ head: HTTPRequestHead) {
        phase = .body
        setDeadline(.body, configuration.bodyTimeout)
        // Expect: 100-continue: the client waits for this before it sends the body (a client
        // that sends it anyway needs no 100).
        if head.expectsContinue, input.isEmpty {
            output += HTTPResponseEncoder.continueHead
            _ = flush()
        }
    }

    /// True once the whole body is in.
    private func readBody() -> Bool {
        if chunked != nil {
            do {
                guard try chunked!.decode(&input) else { return false }
                body = chunked!.body
                chunked = nil
                return true
            } catch {
                refuse(error)
                return false
            }
        }
        let n = min(remaining, input.count)
        body += input.unread.prefix(n)
        input.consume(n)
        remaining -= n
        return remaining == 0
    }

    /// The request is complete: to the handler (through a worker), or answered here.
    private func complete() {
        guard let head else { return }
        phase = .handling
        setDeadline(.none, 0)
        setReading(false)
        let target: HTTPTarget
        do {
            target = try HTTPTarget.parse(head.target)
        } catch .unsafePath {
            core.count(.unsafePath)
            respond(.error(404, message: "no such path"))
            return
        } catch {
            refuse(HTTPRequestError(400, "malformed request target"))
            return
        }
        let request = HTTPRequest(method: head.method, path: target.path, query: target.query, headers: head.headers,
                                  body: body, remoteAddress: peer.host, remotePort: peer.port)
        body = []
        if head.wantsWebSocket {
            startUpgrade(head, request)
            return
        }
        guard core.dispatch(request, from: self) else {
            core.count(.workersBusy)
            respond(.error(503, code: IrisCode.serviceUnavailable, message: "server busy, try again"))
            return
        }
    }

    /// A worker's answer.
    func responseReady(_ response: HTTPResponse) {
        guard phase == .handling else { return }
        respond(response)
    }

    /// Writes `response`; the connection stays open for another request unless the client
    /// or the handler asked to close, `close` is set, or the server is stopping.
    func respond(_ response: HTTPResponse, close: Bool = false) {
        let keepAlive = (head?.keepAlive ?? false) && !close && !HTTPResponseEncoder.asksToClose(response) && !core.shuttingDown
        let omitBody = head?.method == "HEAD"
        HTTPResponseEncoder.encode(response, keepAlive: keepAlive, omitBody: omitBody, date: core.dates.now(), into: &output)
        bodyStream = omitBody ? nil : response.stream
        closeAfterResponse = !keepAlive
        head = nil
        body = []
        chunked = nil
        remaining = 0
        phase = .responding
        setDeadline(.write, configuration.idleTimeout)
        if closeAfterResponse {
            // Keep reading (and dropping) so a client still sending is not stuck while we write.
            discardInput = true
            input.removeAll()
            setReading(true)
        }
        send()
    }

    /// Answers with an error and closes after it.
    func refuse(_ error: HTTPRequestError) {
        core.count(error.refusal)
        var response = HTTPResponse.error(error.status, message: error.message)
        if error.status == 426 { response.headers.append(("Sec-WebSocket-Version", "13")) }
        respond(response, close: true)
    }

    private func nextRequest() {
        phase = .head
        closeAfterResponse = false
        if input.isEmpty {
            setDeadline(.idle, configuration.idleTimeout)
        } else {
            setDeadline(.header, configuration.headerTimeout)
        }
        setReading(true)
        processRequests()
    }

    /// The 101 is queued: from now on the connection carries WebSocket frames, until
    /// `expiry` when one is given (the wall clock's time turned into the loop's).
    func enterWebSocketPhase(expiry: WebSocketExpiry?) {
        phase = .webSocket
        webSocketExpiry = expiry
        if let expiry {
            setDeadline(.expiry, max(0, expiry.at - Date().timeIntervalSince1970))
        } else {
            setDeadline(.none, 0)
        }
    }

    private func startLingering() {
        if tls != nil {
            // close_notify before the FIN, so the client knows the response is whole.
            wire += tls!.close()
            sendWireNow()
        }
        phase = .lingering
        discardInput = true
        input.removeAll()
        shutdown(fd, Int32(SHUT_WR))
        setReading(true)
        setDeadline(.linger, HTTPServerCore.lingerTime)
    }

    // MARK: Writing

    /// Writes what it can; true when the output is empty. On an HTTPS connection the
    /// plaintext is sealed first and the ciphertext written.
    func flush() -> Bool {
        guard phase != .closed else { return false }
        if tls != nil, sent < output.count {
            let out = tls!.send(Array(output[sent...]))
            output.removeAll(keepingCapacity: output.capacity <= 262_144)
            sent = 0
            wire += out.ciphertext
            if let failure = out.failure {
                core.tlsFailed(failure, peer: peer, duringHandshake: false)
                teardown()
                return false
            }
        }
        let result = tls == nil ? drain(&output, &sent) : drain(&wire, &wireSent)
        switch result {
        case .broken:
            teardown()
            return false
        case .blocked:
            if !watchingWritable {
                watchingWritable = true
                core.loop.watchWritable(fd: fd) { [self] in writable() }
            }
            return false
        case .done:
            if watchingWritable {
                watchingWritable = false
                core.loop.watchWritable(fd: fd, nil)
            }
            return true
        }
    }

    private enum DrainResult { case done, blocked, broken }

    /// Writes `buffer` from `offset` until the socket stops taking it. Touches nothing but its
    /// two arguments (they are this connection's own buffers, borrowed).
    private func drain(_ buffer: inout [UInt8], _ offset: inout Int) -> DrainResult {
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { bytes in
                Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                // A client that reads slowly but steadily may never let the output drain:
                // drop what went out so the buffer holds only what is pending.
                if offset >= 65_536, offset >= buffer.count / 2 {
                    buffer.removeFirst(offset)
                    offset = 0
                }
                return .blocked
            }
            return .broken
        }
        buffer.removeAll(keepingCapacity: buffer.capacity <= 262_144)
        offset = 0
        return .done
    }

    private func writable() {
        send()
    }

    /// Flushes, and when everything went out moves on to what comes next. A streamed body
    /// is produced a part at a time, each once the last went out (the socket's pace, so a
    /// slow reader holds a part, not the file); after 16 parts the loop serves others first.
    func send() {
        var parts = 0
        while true {
            guard flush() else { return }
            guard let stream = bodyStream else { break }
            if parts == 16 {
                _ = core.loop.schedule(after: 0) { [self] in send() }
                return
            }
            parts += 1
            if !stream.write(into: &output, upTo: 65_536) { bodyStream = nil }
            // A reader that keeps reading keeps the connection; one that stalls is cut.
            setDeadline(.write, configuration.idleTimeout)
        }
        switch phase {
        case .responding:
            if closeAfterResponse { startLingering() } else { nextRequest() }
        case .webSocket:
            pumpWebSocket()
        default:
            break
        }
    }

    // MARK: Deadlines and the end

    func deadlinePassed() {
        switch deadlineKind {
        case .none:
            return
        case .header:
            core.count(.headerTimeout)
            // A best-effort 408 to a client that sent part of a head; nothing waits for it.
            if tls?.isHandshaking == true {
                // The first head's time includes the handshake: a client that never finished it.
                core.tlsFailed(.handshakeTimeout, peer: peer, duringHandshake: true)
            } else if pendingOutput == 0, !input.isEmpty || headSearched > 0 {
                sendImmediately(HTTPResponseEncoder.encode(.error(408, message: "request head timed out"), keepAlive: false,
                                                           omitBody: false, date: core.dates.now()))
            }
            teardown()
        case .body:
            core.count(.bodyTimeout)
            respond(.error(408, message: "request body timed out"), close: true)
        case .idle:
            core.updateStatistics { $0.idleClosed += 1 }
            teardown()
        case .write, .linger, .closeGrace:
            teardown()
        case .expiry:
            setDeadline(.none, 0)
            webSocketExpired()
        }
    }

    /// The server is stopping: WebSockets get a close frame (1001), the rest close now.
    func serverStopping() {
        if phase == .webSocket, let webSocket {
            webSocket.close(code: 1001)
            pumpWebSocket()
        } else {
            teardown()
        }
    }

    /// Closes the socket and tells the core; once only.
    func teardown() {
        guard phase != .closed else { return }
        phase = .closed
        deadline = .infinity
        core.loop.unregister(fd: fd)
        Glibc.close(fd)
        webSocket?.finish()
        bodyStream = nil
        output = []
        wire = []
        input.removeAll()
        core.removed(self)
    }
}
