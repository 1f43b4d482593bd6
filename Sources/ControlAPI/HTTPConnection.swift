// One accepted control API connection on IOCore's stream layer: its `StreamConnection` reads,
// frames (`HTTPOrWebSocketFramer`), writes through its bounded queue, runs TLS (HTTPS/WSS)
// in its security slot and holds the deadlines; this keeps what is HTTP's: a complete
// request to a worker with reading paused meanwhile (back-pressure, and pipelined requests
// answered in order), the response written at the socket's pace, keep-alive or close (with
// a linger, so unread input cannot reset the answer away), and the WebSocket upgrade. The
// WebSocket phase is in HTTPConnection+WebSocketFrames.swift.
//
// Deadlines on the layer: the first head within `headerTimeout` of the accept (the TLS
// handshake included), later heads within it of their first byte (`frameTimeout`), a body
// within `bodyTimeout` of its head (`frameTimeout` swapped while it is read), the wait for
// the next request and for a slow reader `idleTimeout` (off while a worker answers and on a
// WebSocket). Linger, close grace and a credential's expiry are this connection's own timer.
//
// Loop-confined: every method runs on the server's event loop thread.

import Foundation
import Glibc
import HTTP
import IOCore
import IrisAPI
import TLS

final class HTTPConnection {
    typealias Stream = StreamConnection<HTTPOrWebSocketFramer>

    enum Phase {
        /// Waiting for or reading a request (head and body).
        case request
        /// The request is with a worker; reading paused.
        case handling
        /// Writing a response; then the next request, or lingering.
        case responding
        /// Upgraded (HTTPConnection+WebSocketFrames.swift).
        case webSocket
        /// Our side is done: input is read and dropped until EOF or the linger time.
        case lingering
        case closed
    }

    let id: Int
    let stream: Stream
    /// The client's address as handlers see it.
    var peer: SocketAddress { stream.peer }
    unowned let core: HTTPServerCore
    var configuration: HTTPServerConfiguration { core.configuration }

    private(set) var phase = Phase.request
    /// Bytes waiting for the socket.
    var pendingOutput: Int { stream.queuedBytes }
    /// The TLS handshake finished (a failure after it is not a handshake's).
    private var secured = false
    /// Linger, close grace or a WebSocket credential's expiry.
    private var timer: EventLoop.Timer?

    // The request being read.
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var closeAfterResponse = false
    /// The response body still to be produced (a streamed pcap).
    private var bodyStream: (any HTTPBodyStream)?

    // WebSocket (HTTPConnection+WebSocketFrames.swift).
    var pendingUpgrade: (request: HTTPRequest, key: String)?
    var webSocket: WebSocketConnection?
    /// When the WebSocket's credential runs out (the upgrade callback's `expiry`).
    var webSocketExpiry: WebSocketExpiry?
    var frames = WebSocketServerState(limit: 0)

    init(id: Int, stream: Stream, core: HTTPServerCore) {
        self.id = id
        self.stream = stream
        self.core = core
    }

    /// The layer's settings for a new connection: the first head (and handshake) within
    /// `headerTimeout` of the accept; no bound on the queue (responses are bounded by what a
    /// handler returns, streamed bodies and WebSocket messages are produced at the socket's pace).
    static func settings(_ configuration: HTTPServerConfiguration) -> StreamConnectionSettings {
        // No idle deadline before the first request: its head has `headerTimeout`.
        StreamConnectionSettings(
            idleTimeout: nil, handshakeTimeout: configuration.headerTimeout,
            firstFrameTimeout: configuration.headerTimeout, frameTimeout: configuration.headerTimeout,
            maxQueuedBytes: .max)
    }

    func start() {
        stream.onFrames = { [weak self] _, frames in self?.received(frames) }
        stream.onClose = { [weak self] _, failure in self?.ended(failure) }
        stream.onDrained = { [weak self] _ in self?.send() }
        stream.onTimeout = { [weak self] _, failure in self?.timedOut(failure) }
        stream.onSecured = { [weak self] _ in
            self?.secured = true
            self?.core.tlsEstablished()
        }
        stream.start()
    }

    // MARK: Requests

    private func received(_ cut: [HTTPOrWebSocketFramer.Frame]) {
        for frame in cut {
            guard stream.isOpen else { return }
            switch frame {
            case .http(let frame): received(frame)
            case .webSocket(let frame): received(frame)
            }
        }
        if phase == .webSocket { framesProcessed() }
    }

    private func received(_ frame: HTTPRequestFramer.Frame) {
        guard phase == .request else { return }
        switch frame {
        case .head(let parsed, let sendContinue):
            head = parsed
            if parsed.body != .none {
                stream.settings.frameTimeout = configuration.bodyTimeout
                stream.restartFrameDeadline()
            }
            // Expect: 100-continue: the client waits for this before it sends the body (a
            // client that sends it anyway needs no 100).
            if sendContinue { stream.send(HTTPResponseEncoder.continueHead) }
        case .body(let piece):
            if body.isEmpty { body = piece } else { body += piece }
        case .end:
            stream.settings.frameTimeout = configuration.headerTimeout
            complete()
        case .refused(let error):
            refuse(error)
        }
    }

    /// The request is complete: to the handler (through a worker), or answered here.
    private func complete() {
        guard let head else { return }
        phase = .handling
        stream.pauseReading()
        // A worker may take long; the client waiting is no idle client.
        stream.settings.idleTimeout = nil
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
        let request = HTTPRequest(
            method: head.method, path: target.path, query: target.query, headers: head.headers,
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
        let keepAlive =
            (head?.keepAlive ?? false) && !close && !HTTPResponseEncoder.asksToClose(response) && !core.shuttingDown
        let omitBody = head?.method == "HEAD"
        var out: [UInt8] = []
        HTTPResponseEncoder.encode(
            response, keepAlive: keepAlive, omitBody: omitBody, date: core.dates.now(), into: &out)
        bodyStream = omitBody ? nil : response.stream
        closeAfterResponse = !keepAlive
        head = nil
        body = []
        phase = .responding
        // Reading stays paused until the answer is out; a client too slow to read it is cut.
        stream.pauseReading()
        stream.settings.idleTimeout = configuration.idleTimeout
        stream.send(out)
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
        phase = .request
        closeAfterResponse = false
        stream.settings.frameTimeout = configuration.headerTimeout
        stream.framer.nextRequest()
        // Frames held behind the answered request come out now.
        stream.resumeReading()
    }

    /// The 101 is queued: from now on the connection carries WebSocket frames, until
    /// `expiry` when one is given (the wall clock's time turned into the loop's).
    func enterWebSocketPhase(expiry: WebSocketExpiry?) {
        phase = .webSocket
        webSocketExpiry = expiry
        stream.settings.frameTimeout = nil
        stream.settings.idleTimeout = nil
        if let expiry {
            after(max(0, expiry.at - Date().timeIntervalSince1970)) { $0.webSocketExpired() }
        } else {
            after(nil) { _ in }
        }
    }

    /// Runs `action` after `seconds` (nil: cancels what was set).
    func after(_ seconds: Double?, _ action: @escaping (HTTPConnection) -> Void) {
        core.loop.cancel(timer)
        timer = nil
        guard let seconds else { return }
        timer = core.loop.schedule(after: seconds) { [weak self] in
            guard let self else { return }
            timer = nil
            action(self)
        }
    }

    private func startLingering() {
        phase = .lingering
        // close_notify (HTTPS) and a FIN, so the client knows the response is whole; input
        // is read and dropped meanwhile.
        stream.finishWriting()
        stream.framer.discard()
        stream.settings.frameTimeout = nil
        stream.settings.idleTimeout = nil
        stream.resumeReading()
        after(HTTPServerCore.lingerTime) { $0.teardown() }
    }

    // MARK: Writing

    /// When everything went out, moves on to what comes next. A streamed body is produced
    /// a part at a time, each once the last went out (the socket's pace, so a slow reader
    /// holds a part, not the file); after 16 parts the loop serves others first.
    func send() {
        var parts = 0
        while true {
            guard stream.isOpen, stream.queuedBytes == 0 else { return }
            guard let bodyStream else { break }
            if parts == 16 {
                _ = core.loop.schedule(after: 0) { [weak self] in self?.send() }
                return
            }
            parts += 1
            var out: [UInt8] = []
            if !bodyStream.write(into: &out, upTo: 65_536) { self.bodyStream = nil }
            stream.send(out)
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

    /// A deadline of the layer passed; the connection ends right after this. Counted now
    /// (before the client can see the close); a best-effort 408 to a client that sent part
    /// of a request; nothing waits for it.
    private func timedOut(_ failure: StreamFailure) {
        switch failure {
        case .firstFrameTimeout, .frameTimeout:
            if phase == .request { core.count(stream.framer.inBody ? .bodyTimeout : .headerTimeout) }
        case .handshakeTimeout:
            core.count(.headerTimeout)
            core.tlsFailed(.handshakeTimeout, peer: peer, duringHandshake: true)
        case .idle:
            if phase == .request { core.updateStatistics { $0.idleClosed += 1 } }
        default:
            break
        }
        guard phase == .request, stream.queuedBytes == 0 else { return }
        switch failure {
        case .frameTimeout where stream.framer.inBody:
            stream.send(
                HTTPResponseEncoder.encode(
                    .error(408, message: "request body timed out"), keepAlive: false,
                    omitBody: false, date: core.dates.now()))
        case .firstFrameTimeout, .frameTimeout:
            if stream.framer.pending > 0 {
                stream.send(
                    HTTPResponseEncoder.encode(
                        .error(408, message: "request head timed out"), keepAlive: false,
                        omitBody: false, date: core.dates.now()))
            }
        default:
            break
        }
    }

    /// The connection ended (once): a TLS failure counted, and the core told.
    private func ended(_ failure: StreamFailure?) {
        phase = .closed
        if case .security(let error)? = failure {
            let failure = error as? TLSFailure ?? .handshakeFailed("\(error)")
            core.tlsFailed(failure, peer: peer, duringHandshake: !secured)
        }
        core.loop.cancel(timer)
        timer = nil
        webSocket?.finish()
        bodyStream = nil
        core.removed(self)
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

    /// Closes the connection (what is queued goes out if the socket takes it now).
    func teardown() {
        stream.close()
    }
}
