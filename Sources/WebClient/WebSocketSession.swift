import DNS
import HTTP
import IOCore

/// The loop side of a `WebSocketClient`: the connection (a `ClientDialer` with a
/// `WebSocketUpgradeFramer`), the upgrade's answer handed to `opened`, then the server's
/// frames: pings answered, fragments joined, messages posted to the `WebSocketInbox`, a
/// close frame answered (RFC 6455 §5.5.1), a framing error failed with its close code
/// (§7.1.7). Confined to the client loop.
final class WebSocketSession {
    private let dialer: ClientDialer<WebSocketUpgradeFramer>
    private let inbox: WebSocketInbox
    private let host: String
    private let timeout: Double
    private var assembler: WebSocketMessageAssembler
    /// The upgrade's outcome, until it is known.
    private var opened: ((Result<HTTPClientResponse, IrisTransportError>) -> Void)?
    private var openTimer: EventLoop.Timer?
    private var closeSent = false
    /// `close()` callers waiting for the server's close frame or the end.
    private var closing: [() -> Void] = []
    private var closeTimer: EventLoop.Timer?
    /// Held while the connection is being opened or is open.
    private var retainSelf: WebSocketSession?
    /// Where the caller's messages come from when it feeds (`WebSocketClient.feed`).
    private var feedSource: (lowWater: Int, next: () -> String?)?

    /// Starts at once (on the loop): resolves, connects, sends `request` (the upgrade) and
    /// gives the answer to `opened` within `timeout` seconds.
    init(
        url: ClientURL, tls: ClientTLS?, dns: DNSResolverConfiguration, request: [UInt8], maxMessageBytes: Int,
        timeout: Double, inbox: WebSocketInbox, loop: EventLoop,
        opened: @escaping (Result<HTTPClientResponse, IrisTransportError>) -> Void
    ) {
        self.inbox = inbox
        self.host = url.host
        self.timeout = timeout
        self.opened = opened
        assembler = WebSocketMessageAssembler(limit: maxMessageBytes)
        let deadline = EventLoop.now() + (timeout.isNaN ? 0 : max(0, timeout))
        // No frame deadline once open: a message may take as long as the caller waits.
        dialer = ClientDialer(
            host: url.host, port: url.port, tls: tls, loop: loop,
            settings: {
                StreamConnectionSettings(
                    handshakeTimeout: max(0.001, deadline - EventLoop.now()),
                    maxQueuedBytes: max(262_144, 2 * maxMessageBytes))
            }, framer: { WebSocketUpgradeFramer(limit: maxMessageBytes) })
        dialer.onFrames = { [unowned self] c, frames in
            for frame in frames where c.isOpen { handle(frame, on: c) }
        }
        dialer.onClose = { [unowned self] c, failure in ended(c, failure) }
        dialer.onUnreachable = { [unowned self] error in
            open(.failure(error))
            finish(nil)
        }
        openTimer = loop.schedule(after: deadline - EventLoop.now()) { [unowned self] in
            openTimer = nil
            let doing = dialer.connection.map(operation) ?? "resolving \(url.host)"
            open(.failure(.timeout(operation: doing, seconds: timeout)))
            dialer.cancel()
            dialer.connection?.close()
            finish(nil)
        }
        retainSelf = self
        dialer.start(request: request, dns: dns)
    }

    private func operation(_ c: StreamConnection<WebSocketUpgradeFramer>) -> String {
        if c.isConnecting { return "connect to \(c.peer)" }
        if c.security?.isHandshaking == true { return "the TLS handshake with \(c.peer)" }
        return "waiting for the WebSocket upgrade response"
    }

    private func open(_ result: Result<HTTPClientResponse, IrisTransportError>) {
        guard let opened else { return }
        self.opened = nil
        dialer.loop.cancel(openTimer)
        openTimer = nil
        opened(result)
    }

    // MARK: Frames

    private func handle(_ frame: WebSocketUpgradeFramer.Frame, on c: StreamConnection<WebSocketUpgradeFramer>) {
        switch frame {
        case .response(let response):
            open(.success(response))
            // A refusal: the caller reports it; nothing more to read.
            if response.status != 101 { c.close() }
        case .invalid(let error):
            fail(IrisTransportError(error), code: error.closeCode, on: c)
        case .frame(let frame):
            switch frame.opcode {
            case .ping:
                if !closeSent { send(WebSocketFrame(fin: true, opcode: .pong, payload: frame.payload), on: c) }
            case .pong:
                break
            case .close:
                guard frame.payload.count != 1 else {
                    return fail(.webSocketProtocol("close frame with a 1-byte body", code: 1002), code: 1002, on: c)
                }
                let received =
                    frame.payload.count >= 2
                    ? WebSocketCloseFrame(
                        code: UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]),
                        reason: String(decoding: frame.payload.dropFirst(2), as: UTF8.self))
                    : WebSocketCloseFrame(code: nil, reason: "")
                inbox.noteServerClose(received)
                // Echo the code (§5.5.1); 1005 means "none given" and must not be sent.
                sendClose(code: received.code ?? 1000, reason: "", on: c)
                c.close()
            case .text, .binary, .continuation:
                // Messages after our close frame are discarded, as RFC 6455 §1.4 allows.
                guard !closeSent else { return }
                let whole: (opcode: WebSocketFrame.Opcode, payload: [UInt8])?
                do { whole = try assembler.add(frame) } catch {
                    return fail(IrisTransportError(error), code: error.closeCode, on: c)
                }
                guard let (opcode, payload) = whole else { return }
                if opcode != .text {
                    inbox.post(.binary(payload))
                } else if let text = String(validating: payload, as: UTF8.self) {
                    inbox.post(.text(text))
                } else {
                    fail(.webSocketProtocol("text message is not valid UTF-8", code: 1007), code: 1007, on: c)
                }
            }
        }
    }

    /// Fails the connection (§7.1.7): a close frame with `code`, then no more reading.
    private func fail(_ error: IrisTransportError, code: UInt16, on c: StreamConnection<WebSocketUpgradeFramer>) {
        sendClose(code: code, reason: "", on: c)
        inbox.end(error)
        c.close()
    }

    private func send(_ frame: WebSocketFrame, on c: StreamConnection<WebSocketUpgradeFramer>) {
        c.send(frame.encodedMasked(key: UInt32.random(in: .min ... .max)))
    }

    /// Our close frame, once; nothing is sent after it.
    private func sendClose(code: UInt16, reason: String, on c: StreamConnection<WebSocketUpgradeFramer>) {
        guard !closeSent else { return }
        closeSent = true
        inbox.closeSending()
        send(
            WebSocketFrame(fin: true, opcode: .close, payload: WebSocketFrame.closePayload(code: code, reason: reason)),
            on: c)
    }

    // MARK: From the caller (via the loop)

    /// A data or ping frame from the caller; dropped once our close frame went out.
    func send(_ frame: WebSocketFrame) {
        guard !closeSent, let c = dialer.connection, c.isOpen, opened == nil else { return }
        send(frame, on: c)
    }

    /// Pulls messages from `next` while little waits to leave, and again whenever the socket
    /// has taken everything.
    func feed(lowWater: Int, next: @escaping () -> String?) {
        feedSource = (lowWater, next)
        dialer.connection?.onDrained = { [weak self] _ in self?.pullFeed() }
        pullFeed()
    }

    /// Sends what the feed has while fewer than its low-water bytes are queued.
    func pullFeed() {
        guard let (lowWater, next) = feedSource else { return }
        while !closeSent, let c = dialer.connection, c.isOpen, opened == nil, c.queuedBytes < lowWater,
            let text = next()
        {
            send(WebSocketFrame(fin: true, opcode: .text, payload: Array(text.utf8)), on: c)
        }
    }

    /// Starts the closing handshake; `done` runs once the server's close frame came back,
    /// the connection ended, or after one second.
    func close(code: UInt16, reason: String, done: @escaping () -> Void) {
        guard let c = dialer.connection, c.isOpen, retainSelf != nil else { return done() }
        sendClose(code: code, reason: reason, on: c)
        closing.append(done)
        guard closeTimer == nil else { return }
        closeTimer = dialer.loop.schedule(after: 1) { [weak self] in
            self?.closeTimer = nil
            self?.dialer.connection?.close()
        }
    }

    /// The client went away without `close()`: the connection ends (no close frame).
    func abandon() {
        dialer.cancel()
        dialer.connection?.close()
        finish(nil)
    }

    // MARK: Ending

    private func ended(_ c: StreamConnection<WebSocketUpgradeFramer>, _ failure: StreamFailure?) {
        if opened != nil {
            // Before the upgrade's answer: a refusal whose body ran to the end, or why none came.
            var result: Result<HTTPClientResponse, IrisTransportError>
            if failure?.isEndOfStream == true {
                do throws(IrisTransportError) {
                    result = .success(
                        try c.framer.endOfStream(during: operation(c))
                            ?? HTTPClientResponse(status: 0, headers: [:], body: []))
                } catch {
                    result = .failure(error)
                }
            } else {
                result = .failure(
                    failure.map {
                        IrisTransportError($0, peer: c.peer, host: host, operation: operation(c), seconds: timeout)
                    }
                        ?? .connectionClosed(during: operation(c)))
            }
            open(result)
            return finish(nil)
        }
        switch failure {
        case nil:
            finish(nil)
        case .closedByPeer? where closeSent, .securityClosed? where closeSent:
            finish(nil)
        case .closedByPeer?, .securityClosed?:
            finish(
                .connectionClosed(during: "WebSocket receive (the server ended the connection without a close frame)"))
        case let failure?:
            finish(
                IrisTransportError(failure, peer: c.peer, host: host, operation: "WebSocket receive", seconds: timeout))
        }
    }

    private func finish(_ failure: IrisTransportError?) {
        inbox.end(failure)
        dialer.loop.cancel(closeTimer)
        closeTimer = nil
        dialer.onFrames = nil
        dialer.onClose = nil
        dialer.onUnreachable = nil
        feedSource = nil
        let waiting = closing
        closing = []
        for done in waiting { done() }
        retainSelf = nil
    }
}
