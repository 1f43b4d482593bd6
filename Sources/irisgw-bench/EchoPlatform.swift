import Foundation
import Glibc
import HTTP
import IOCore
import Synchronization

/// The platform side of `BENCH stream` and `BENCH record`, on one IOCore loop of the bench's
/// own (its CPU is not the gateway's): a voice agent's WebSocket server (Twilio Media
/// Streams) that answers every `media` at once with the same audio, and RTP reflectors that
/// send every packet of an RTP platform leg straight back.
final class EchoPlatform: Sendable {
    let loop: EventLoop
    /// `ws://127.0.0.1:PORT/agent`.
    let url: String
    private let state: LoopBoundBox<State>
    /// `media` messages echoed, and agent sockets open now.
    let echoed = Atomic<Int>(0)
    let agents = Atomic<Int>(0)
    /// RTP packets reflected.
    let reflected = Atomic<Int>(0)

    private struct State {
        var listener: StreamListener?
        var connections: [Int32: StreamConnection<AgentFramer>] = [:]
        var reflectors: [UDPSocket] = []
        /// Where every reflector reads (one loop thread: one buffer).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    }

    init() throws {
        loop = try EventLoop()
        let listener = try StreamListener(
            loop: loop, bind: SocketAddress(host: "127.0.0.1", port: 0),
            caps: StreamConnectionCaps(maxConnections: 10_000, maxPerSource: 10_000))
        url = "ws://127.0.0.1:\(listener.local.port)/agent"
        state = LoopBoundBox(State(listener: listener), loop: loop)
        // The loop holds the platform until `stop` closes the listener and the connections.
        listener.onAccept = { [self] fd, peer in
            let connection = StreamConnection(
                accepted: fd, peer: peer, loop: loop, framer: AgentFramer(), settings: StreamConnectionSettings())
            connection.onFrames = { [self] c, frames in
                for frame in frames { handle(frame, on: c) }
            }
            connection.onClose = { [self] c, _ in
                if state.value.connections.removeValue(forKey: c.fd) != nil, c.framer.upgraded {
                    agents.subtract(1, ordering: .relaxed)
                }
            }
            state.value.connections[fd] = connection
            connection.start()
        }
        listener.start()
        loop.start(name: "bench-echo")
    }

    /// A new RTP reflector: its port for the platform leg's SDP offer. Each packet that comes
    /// goes back to where it came from, under an SSRC of the reflector's own.
    func reflector() throws -> Int {
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        loop.execute { [self] in
            state.value.reflectors.append(socket)
            state.loop.register(fd: socket.fd) { [self] in
                let buffer = state.value.buffer
                var from = RawSocketAddress()
                while let n = socket.receive(into: buffer, from: &from) {
                    guard n >= 12 else { continue }
                    buffer[8] ^= 0x5A
                    socket.send(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: from)
                    reflected.add(1, ordering: .relaxed)
                }
            }
        }
        return socket.local.port
    }

    /// Closes every reflector (between phases: the next phase's calls get new ones).
    func closeReflectors() {
        let state = state
        loop.sync {
            for socket in state.value.reflectors { state.loop.unregister(fd: socket.fd) }
            state.value.reflectors = []
        }
    }

    func stop() {
        let state = state
        loop.sync {
            state.value.listener?.close()
            state.value.listener = nil
            for c in state.value.connections.values { c.close() }
            state.value.connections = [:]
            for socket in state.value.reflectors { state.loop.unregister(fd: socket.fd) }
            state.value.reflectors = []
        }
        loop.stop()
        state.value.buffer.deallocate()
    }

    /// The upgrade answered (101), a `media` sent back as the agent's own `media` with the
    /// same payload, a ping answered, a close returned.
    private func handle(_ frame: AgentFramer.Frame, on c: StreamConnection<AgentFramer>) {
        switch frame {
        case .upgrade(let key):
            guard let key else {
                _ = c.send(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
                c.finishWriting()
                return
            }
            agents.add(1, ordering: .relaxed)
            _ = c.send(
                Array(
                    ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: \(WebSocketHandshake.accept(key: key))\r\n\r\n").utf8))
        case .message(let text):
            guard let echo = AgentEcho.reply(to: text) else { return }
            var out: [UInt8] = []
            WebSocketFrame.appendText(echo, to: &out)
            _ = c.send(out)
            echoed.add(1, ordering: .relaxed)
        case .ping(let payload):
            _ = c.send(WebSocketFrame(fin: true, opcode: .pong, payload: payload).encoded())
        case .close:
            _ = c.send(WebSocketFrame(fin: true, opcode: .close, payload: []).encoded())
            c.finishWriting()
        }
    }
}

/// What the echo agent says back: to a `media` message, a `media` of its own with the same
/// payload (`{"event":"media","streamSid":...,"media":{"payload":...}}`, as Twilio's agents
/// send); nil to anything else (`connected`, `start`, `mark`, `dtmf`, `stop`).
enum AgentEcho {
    private struct Incoming: Decodable {
        struct Media: Decodable { var payload: String }
        var event: String
        var streamSid: String?
        var media: Media?
    }

    private struct Outgoing: Encodable {
        struct Media: Encodable { var payload: String }
        var event = "media"
        var streamSid: String
        var media: Media
    }

    static func reply(to text: String) -> String? {
        guard let m = try? JSONDecoder().decode(Incoming.self, from: Data(text.utf8)), m.event == "media",
            let sid = m.streamSid, let payload = m.media?.payload,
            let out = try? JSONEncoder().encode(Outgoing(streamSid: sid, media: .init(payload: payload)))
        else { return nil }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The agent's side of one connection: the upgrade request's head, then the client's masked
/// frames joined into messages (RFC 6455 §5.4). Anything the codec refuses ends the
/// connection.
struct AgentFramer: StreamFramer {
    enum Frame {
        /// The upgrade request; its `Sec-WebSocket-Key` (nil: not a WebSocket upgrade).
        case upgrade(key: String?)
        case message(String)
        case ping([UInt8])
        case close
    }

    private var input = ByteBuffer()
    private var assembler = WebSocketMessageAssembler(limit: 1 << 20)
    private(set) var upgraded = false

    var pending: Int { input.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(WebSocketFrameError) -> [Frame] {
        input.append(bytes)
        var frames: [Frame] = []
        if !upgraded {
            guard let length = HTTPRequestParser.headLength(input.unread, from: 0) else { return [] }
            let head = try? HTTPRequestParser.parseHead(input.unread.prefix(length))
            input.consume(length)
            upgraded = head?.wantsWebSocket == true
            frames.append(.upgrade(key: upgraded ? head?.headers["sec-websocket-key"] : nil))
            if !upgraded { return frames }
        }
        while let (frame, used) = try WebSocketFrame.parseMasked(input.unread, limit: 1 << 20) {
            input.consume(used)
            switch frame.opcode {
            case .ping: frames.append(.ping(frame.payload))
            case .close: frames.append(.close)
            case .pong: break
            default:
                if let (opcode, payload) = try assembler.add(frame), opcode == .text {
                    frames.append(.message(String(decoding: payload, as: UTF8.self)))
                }
            }
        }
        return frames
    }
}
