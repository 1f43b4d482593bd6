import Foundation
import HTTP
import IOCore
import Synchronization

/// The WebSocket server a `stream` step forks the call's audio to, inside `irisgw test`: an
/// event loop of its own, a listener on `host` with a port the OS picks, the HTTP module's
/// upgrade and framing. It answers the upgrade, pongs pings, closes when asked, and hands
/// every text message to `StreamCapture`, which the step polls. `stop()` ends it all.
final class SuiteStreamServer: Sendable {
    /// `ws://host:port/stream`, for `POST .../streams`.
    let url: String
    private let loop: EventLoop
    private let sockets: LoopBoundBox<Sockets>
    private let heard = Mutex(StreamCapture())

    /// The listener and the open connections, on the loop.
    private struct Sockets {
        var listener: StreamListener?
        var connections: [ObjectIdentifier: Connection] = [:]
    }

    private typealias Connection = StreamConnection<StreamServerFramer>

    /// Listens on `host` (an address, IPv4 or IPv6), port 0.
    init(host: String) throws {
        let loop = try EventLoop()
        // Set up before the loop's thread runs: the builder owns its state until then.
        let listener = try StreamListener(
            loop: loop, bind: SocketAddress(host: host, port: 0),
            caps: StreamConnectionCaps(maxConnections: 16, maxPerSource: 16))
        let sockets = LoopBoundBox(Sockets(listener: listener), loop: loop)
        self.loop = loop
        self.sockets = sockets
        let address = SocketAddress(host: host, port: listener.local.port)
        url = "ws://\(address)/stream"
        listener.onAccept = { [weak self] fd, peer in self?.accept(fd, peer) }
        listener.start()
        loop.start(name: "irisgw-test-ws")
    }

    /// What the server has heard so far.
    var capture: StreamCapture { heard.withLock { $0 } }

    /// Closes the listener and every connection, and stops the loop.
    func stop() {
        let sockets = self.sockets
        loop.sync {
            sockets.value.listener?.close()
            sockets.value.listener = nil
            for c in sockets.value.connections.values { c.close() }
            sockets.value.connections = [:]
        }
        loop.stop()
    }

    private func accept(_ fd: Int32, _ peer: SocketAddress) {
        let c = Connection(
            accepted: fd, peer: peer, loop: loop, framer: StreamServerFramer(),
            settings: StreamConnectionSettings(firstFrameTimeout: 10, maxQueuedBytes: 65_536))
        var assembler = WebSocketMessageAssembler(limit: StreamServerFramer.maxFrameBytes)
        c.onFrames = { [weak self] c, frames in
            for frame in frames { self?.handle(frame, on: c, assembler: &assembler) }
        }
        c.onClose = { [weak self] c, failure in self?.closed(c, failure) }
        sockets.value.connections[ObjectIdentifier(c)] = c
        heard.withLock { $0.connections += 1 }
        c.start()
    }

    private func handle(_ frame: StreamServerFramer.Frame, on c: Connection, assembler: inout WebSocketMessageAssembler)
    {
        switch frame {
        case .head(let head):
            guard head.wantsWebSocket, let key = head.headers["sec-websocket-key"],
                head.headers["sec-websocket-version"] == "13"
            else {
                refuse(c, "not a WebSocket upgrade (version 13) to \(head.target)")
                return
            }
            heard.withLock { $0.path = head.target }
            c.send(
                Array(
                    ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: \(WebSocketHandshake.accept(key: key))\r\n\r\n").utf8))
        case .refused(let why):
            refuse(c, why)
        case .failed(let code, let why):
            heard.withLock { $0.note("the gateway's WebSocket frames: \(why)") }
            closeSocket(c, code: code)
        case .frame(let f):
            switch f.opcode {
            case .ping: c.send(WebSocketFrame(fin: true, opcode: .pong, payload: f.payload).encoded())
            case .pong: break
            case .close: closeSocket(c, code: 1000)
            case .text, .binary, .continuation:
                do {
                    guard let (opcode, payload) = try assembler.add(f) else { return }
                    guard opcode == .text, let text = String(validating: payload, as: UTF8.self) else {
                        heard.withLock { $0.note("a binary or non-UTF-8 message (Twilio's are JSON text)") }
                        return
                    }
                    heard.withLock { $0.take(text) }
                } catch {
                    heard.withLock { $0.note("the gateway's WebSocket messages: \(error)") }
                    closeSocket(c, code: error.closeCode)
                }
            }
        }
    }

    private func refuse(_ c: Connection, _ why: String) {
        heard.withLock { $0.note("the upgrade request: \(why)") }
        c.send(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        c.finishWriting()
    }

    /// Our close frame (RFC 6455 §5.5.1), then our side of the TCP connection.
    private func closeSocket(_ c: Connection, code: UInt16) {
        c.send(
            WebSocketFrame(fin: true, opcode: .close, payload: WebSocketFrame.closePayload(code: code, reason: ""))
                .encoded())
        c.finishWriting()
    }

    private func closed(_ c: Connection, _ failure: StreamFailure?) {
        sockets.value.connections[ObjectIdentifier(c)] = nil
        heard.withLock { $0.closed = failure.map { "\($0)" } ?? "closed" }
    }
}
