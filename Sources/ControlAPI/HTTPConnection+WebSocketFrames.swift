// The WebSocket phase of an `HTTPConnection` (RFC 6455, server side): the opening handshake
// once the `webSocket:` callback accepted, client frames (masked, ping -> pong, the close
// handshake, fragments up to `maxWebSocketMessageBytes`), and the messages the application
// queued, moved onto the socket only while it can take them. The frame codec is the HTTP
// module's, shared with the WebSocket client.

import Crypto
import Glibc
import HTTP
import IrisAPI

extension HTTPConnection {
    /// Output beyond which the loop takes no more queued messages until the socket drains.
    static let webSocketOutputWindow = 65_536
    /// Output beyond which client frames are not read (a client that pings but never reads
    /// its pongs stops being read instead of growing our buffer).
    static let webSocketReadPause = 1 << 20

    // MARK: Handshake

    /// Checks the upgrade request (RFC 6455 §4.2.1), then asks the `webSocket:` callback on a worker.
    func startUpgrade(_ head: HTTPRequestHead, _ request: HTTPRequest) {
        guard head.minorVersion == 1 else {
            refuse(HTTPRequestError(400, "a WebSocket upgrade needs HTTP/1.1"))
            return
        }
        guard head.headers["sec-websocket-version"]?.trimmingSpaces() == "13" else {
            refuse(HTTPRequestError(426, "only WebSocket version 13 is supported"))
            return
        }
        guard let key = head.headers["sec-websocket-key"]?.trimmingSpaces(),
            Base64.decode(key, padding: .required)?.count == 16
        else {
            refuse(HTTPRequestError(400, "missing or malformed Sec-WebSocket-Key"))
            return
        }
        if core.shuttingDown {
            respond(.error(503, code: IrisCode.serviceUnavailable, message: "server stopping"), close: true)
            return
        }
        pendingUpgrade = (request, key)
        guard core.dispatchUpgrade(request, from: self) else {
            pendingUpgrade = nil
            core.count(.workersBusy)
            respond(.error(503, code: IrisCode.serviceUnavailable, message: "server busy, try again"), close: true)
            return
        }
    }

    /// The callback's decision: refuse with its response, or (room permitting) switch protocols.
    func upgradeDecided(_ decision: WebSocketUpgrade) {
        guard phase == .handling, let (request, key) = pendingUpgrade else { return }
        pendingUpgrade = nil
        switch decision {
        case .refuse(let response):
            respond(response, close: true)
        case .accept(let group, let limit, let expiry):
            if let refusal = core.admitWebSocket(group: group, limit: limit) {
                respond(refusal, close: true)
                return
            }
            let connection = WebSocketConnection(
                id: id, request: request, group: group,
                queueLimit: configuration.webSocketQueueLimit,
                notify: core.notifier(for: id))
            webSocket = connection
            frames = WebSocketServerState(limit: configuration.maxWebSocketMessageBytes)
            frames.pendingAccept = WebSocketHandshake.accept(key: key)
            enterWebSocketPhase(expiry: expiry)
            // Reading stays paused and nothing is written until onWebSocketOpen has run
            // (`handshakeReady`): the client learns of the upgrade only once it is subscribed.
            core.opened(connection, on: self)
        }
    }

    /// `onWebSocketOpen` returned: the 101, then whatever it queued, then the client's frames.
    func handshakeReady() {
        guard phase == .webSocket, let accept = frames.pendingAccept else { return }
        frames.pendingAccept = nil
        stream.send(HTTPResponseEncoder.switchingProtocols(accept: accept))
        keepAliveProbes()
        // Frames the client sent right behind its upgrade request are already buffered.
        let held = stream.framer.unread
        stream.replaceFramer(
            with: .webSocket(WebSocketServerFramer(limit: configuration.maxWebSocketMessageBytes)),
            replaying: held)
        guard phase == .webSocket else { return }
        stream.resumeReading()
        pumpWebSocket()
    }

    /// TCP keepalive (60 s idle, then 3 probes 10 s apart): a WebSocket whose client vanished
    /// without a FIN (a dropped network) is noticed in about 90 s instead of hours.
    private func keepAliveProbes() {
        var on: Int32 = 1, idle: Int32 = 60, interval: Int32 = 10, probes: Int32 = 3
        let size = socklen_t(MemoryLayout<Int32>.size)
        let fd = stream.fd
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)
    }

    // MARK: Client frames

    /// One frame from the client.
    func received(_ cut: WebSocketServerFramer.Frame) {
        guard phase == .webSocket else { return }
        let frame: WebSocketFrame
        switch cut {
        case .failed(let code):
            fail(code)
            return
        case .frame(let f):
            frame = f
        }
        // After the client's close frame, nothing it sends counts (RFC 6455 §5.5.1).
        if frames.closeReceived { return }
        switch frame.opcode {
        case .ping:
            if !frames.closeSent {
                stream.send(WebSocketFrame(fin: true, opcode: .pong, payload: frame.payload).encoded())
            }
        case .pong:
            break
        case .close:
            _ = receivedClose(frame.payload)
        case .text, .binary, .continuation:
            do {
                // The API takes nothing from clients: whole text messages are checked and dropped.
                guard let (opcode, payload) = try frames.assembler.add(frame) else { return }
                guard opcode == .text else {
                    fail(1003)
                    return
                }
                guard String(validating: payload, as: UTF8.self) != nil else {
                    fail(1007)
                    return
                }
            } catch {
                fail(error.closeCode)
            }
        }
    }

    /// What arrived is handled: pongs too many for a client that does not read stop the
    /// reading; queued messages move on.
    func framesProcessed() {
        guard phase == .webSocket, frames.pendingAccept == nil else { return }
        if pendingOutput > Self.webSocketReadPause { stream.pauseReading() }
        pumpWebSocket()
    }

    /// The client's close frame: echo its code, then close (the server closes TCP first,
    /// RFC 6455 §7.1.1). False when it was malformed (the connection is failing).
    private func receivedClose(_ payload: [UInt8]) -> Bool {
        guard payload.count != 1 else {
            fail(1002)
            return false
        }
        let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        if let code, !Self.isValidCloseCode(code) {
            fail(1002)
            return false
        }
        guard String(validating: payload.dropFirst(2), as: UTF8.self) != nil else {
            fail(1007)
            return false
        }
        frames.closeReceived = true
        webSocket?.finish()
        if !frames.closeSent {
            // No code given: an empty close frame back (1005 must not be sent).
            appendClose(code)
        }
        return true
    }

    /// Fails the connection (§7.1.7): a close frame with `code`, then close once it is out.
    private func fail(_ code: UInt16) {
        guard !frames.failing else { return }
        frames.failing = true
        webSocket?.finish()
        if !frames.closeSent { appendClose(code) }
        pumpWebSocket()
    }

    private func appendClose(_ code: UInt16?, reason: String = "") {
        let payload: [UInt8] = code.map { WebSocketFrame.closePayload(code: $0, reason: reason) } ?? []
        frames.closeSent = true
        after(configuration.webSocketCloseGrace) { $0.teardown() }
        stream.send(WebSocketFrame(fin: true, opcode: .close, payload: payload).encoded())
    }

    // MARK: Server messages

    /// Moves queued messages onto the socket while it takes them; sends the close frame
    /// after the last one when a close was asked; closes once the close handshake is done.
    func pumpWebSocket() {
        guard let webSocket, frames.pendingAccept == nil else { return }
        while phase == .webSocket {
            if !frames.closeSent, pendingOutput < Self.webSocketOutputWindow {
                let (messages, close) = webSocket.take(maxBytes: Self.webSocketOutputWindow)
                var out: [UInt8] = []
                for message in messages { WebSocketFrame.appendText(message, to: &out) }
                if !out.isEmpty { stream.send(out) }
                if let close { appendClose(close.code, reason: close.reason) }
            }
            guard stream.isOpen, stream.queuedBytes == 0 else { return }
            if frames.closeSent {
                if frames.closeReceived || frames.failing { teardown() }
                return
            }
            if stream.isReadingPaused { stream.resumeReading() }
            if webSocket.queuedCount == 0 { return }
        }
    }

    /// A WebSocketConnection's request, on the loop.
    func webSocketNotice(_ notice: WebSocketConnection.Notice) {
        guard phase == .webSocket else { return }
        switch notice {
        case .pending, .close:
            pumpWebSocket()
        case .overflow:
            core.count(.webSocketDroppedOverflow)
            teardown()
        }
    }

    /// The credential the WebSocket was opened with ran out (`WebSocketExpiry`): what is
    /// queued goes out, then a close frame with 1008 and the reason. A client that does not
    /// read it all within the close grace is cut.
    func webSocketExpired() {
        guard phase == .webSocket, let webSocket, let expiry = webSocketExpiry else { return }
        core.count(.webSocketExpired)
        after(configuration.webSocketCloseGrace) { $0.teardown() }
        webSocket.close(code: 1008, reason: expiry.reason)
        pumpWebSocket()
    }

    /// Dropped to make room for a newer WebSocket of the same group: a close frame (1008) if
    /// the socket takes it at once, then cut.
    func dropSlow() {
        if pendingOutput == 0, frames.pendingAccept == nil {
            stream.send(WebSocketFrame(fin: true, opcode: .close, payload: [0x03, 0xF0]).encoded())
        }
        teardown()
    }

    /// RFC 6455 §7.4: codes a peer may send.
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
