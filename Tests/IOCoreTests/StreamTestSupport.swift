import Foundation
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

/// Every suite of this target, one test at a time: the out-of-descriptors test lowers the
/// process's descriptor limit for a moment, which would fail a socket another test opens.
@Suite(.serialized) struct IOCoreSuites {}

/// Newline-delimited frames, for driving the stream layer without any protocol: a line
/// longer than `maxLine` is a framing error.
struct LineFramer: StreamFramer {
    struct TooLong: Error, Equatable {}
    var maxLine: Int
    private var buffer: [UInt8] = []

    init(maxLine: Int = 1024) { self.maxLine = maxLine }

    var pending: Int { buffer.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(TooLong) -> [String] {
        buffer.append(contentsOf: bytes)
        var frames: [String] = []
        while let nl = buffer.firstIndex(of: 0x0A) {
            frames.append(String(decoding: buffer[..<nl], as: UTF8.self))
            buffer.removeFirst(nl + 1)
        }
        if buffer.count > maxLine { throw TooLong() }
        return frames
    }
}

typealias LineConnection = StreamConnection<LineFramer>

/// The short name of a failure, for assertions.
func kind(_ failure: StreamFailure?) -> String {
    guard let failure else { return "closed" }
    switch failure {
    case .connect: return "connect"
    case .refused(let why): return "refused \(why)"
    case .closedByPeer: return "closedByPeer"
    case .socket: return "socket"
    case .closedDuringHandshake: return "closedDuringHandshake"
    case .security: return "security"
    case .securityClosed: return "securityClosed"
    case .handshakeTimeout: return "handshakeTimeout"
    case .firstFrameTimeout: return "firstFrameTimeout"
    case .frameTimeout: return "frameTimeout"
    case .idle: return "idle"
    case .keepaliveTimeout: return "keepaliveTimeout"
    case .framing: return "framing"
    case .writeQueueFull: return "writeQueueFull"
    }
}

/// What the loop side saw, readable from the test thread.
final class Seen: Sendable {
    private let state = Mutex<(frames: [String], ends: [String], refusals: [StreamRefusal], keepalives: Int)>(
        ([], [], [], 0))
    var frames: [String] { state.withLock { $0.frames } }
    var ends: [String] { state.withLock { $0.ends } }
    var refusals: [StreamRefusal] { state.withLock { $0.refusals } }
    var keepalives: Int { state.withLock { $0.keepalives } }
    func frame(_ f: String) { state.withLock { $0.frames.append(f) } }
    func end(_ e: String) { state.withLock { $0.ends.append(e) } }
    func refused(_ r: StreamRefusal) { state.withLock { $0.refusals.append(r) } }
    func keepalive() { state.withLock { $0.keepalives += 1 } }
}

/// A loop, a listener on 127.0.0.1 port 0 and the connections it accepted (and any the
/// test opened), all confined to the loop: the test reaches them only through `onLoop`.
/// `@unchecked Sendable`: confined to `loop`, touched only inside `loop.sync`.
final class StreamHarness: @unchecked Sendable {
    let loop: EventLoop
    let seen = Seen()
    private(set) var listener: StreamListener?
    private(set) var connections: [LineConnection] = []
    private(set) var port = 0

    init(
        settings: StreamConnectionSettings = StreamConnectionSettings(), maxConnections: Int = 100,
        maxPerSource: Int = 100,
        security: (@Sendable () -> (any StreamSecurity)?)? = nil, echo: Bool = false
    ) throws {
        loop = try EventLoop()
        loop.start(name: "iocore-test")
        let made = loop.sync { () -> Result<Int, SocketError> in
            do throws(SocketError) {
                let caps = StreamConnectionCaps(maxConnections: maxConnections, maxPerSource: maxPerSource)
                let l = try StreamListener(
                    loop: self.loop, bind: SocketAddress(host: "127.0.0.1", port: 0), caps: caps,
                    acceptBackoff: 0.05)
                l.onRefused = { [seen = self.seen] in seen.refused($0) }
                l.onAccept = { [unowned self] fd, peer in
                    let c = LineConnection(
                        accepted: fd, peer: peer, loop: self.loop, framer: LineFramer(maxLine: 64),
                        security: security?(), settings: settings, caps: caps)
                    self.watch(c, echo: echo)
                    c.start()
                }
                l.start()
                self.listener = l
                return .success(l.local.port)
            } catch {
                return .failure(error)
            }
        }
        port = try made.get()
    }

    func watch(_ c: LineConnection, echo: Bool) {
        connections.append(c)
        c.onFrames = { [seen] c, frames in
            for f in frames {
                seen.frame(f)
                if echo { c.send(Array((f + "\n").utf8)) }
            }
        }
        c.onClose = { [seen] _, failure in seen.end(kind(failure)) }
        c.onKeepalive = { [seen] _ in seen.keepalive() }
    }

    /// Keeps a connection whose handlers the test set itself.
    func retain(_ c: LineConnection) { connections.append(c) }

    /// Runs `work` on the loop with the harness.
    func onLoop<T: Sendable>(_ work: @escaping @Sendable (StreamHarness) -> T) -> T { loop.sync { work(self) } }

    func stop() {
        loop.sync {
            self.listener?.close()
            for c in self.connections { c.close() }
            self.connections = []
        }
        loop.stop()
    }
}

/// A plain blocking client socket on 127.0.0.1 (optionally bound to another loopback source).
final class Client: Sendable {
    let fd: Int32

    init(port: Int, from source: String? = nil, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            guard SocketAddress(host: source, port: 0).withSockAddr({ bind(fd, $0, $1) }) == 0 else {
                Glibc.close(fd)
                throw SocketError("bind \(source)")
            }
        }
        guard SocketAddress(host: "127.0.0.1", port: port).withSockAddr({ connect(fd, $0, $1) }) == 0 else {
            Glibc.close(fd)
            throw SocketError("connect")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) { _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }

    /// Everything readable now ("" when nothing), nil once the peer has closed.
    func readNow() -> String? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n > 0 { out += chunk[0..<n]; continue }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                return out.isEmpty ? nil : String(decoding: out, as: UTF8.self)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// True once the peer has closed (EOF or reset), within `timeout` seconds.
    func waitClosed(timeout: Double) async -> Bool {
        await eventually(timeout: timeout) {
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, 0)
            return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }
}
