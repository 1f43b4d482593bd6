import Foundation
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

/// The stream layer's suites. They run beside everything else: the one test that lowers the
/// process's descriptor limit runs only by hand and alone (`IRISGW_TEST_ALONE=1`); in `make test`
/// the gateway under `prlimit` covers running out of descriptors.
@Suite struct IOCoreSuites {}

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

/// A loop, a listener on 127.0.0.1 port 0 whose accepted connections use framer `F`, and
/// the connections it accepted (and any the test opened and handed to `watch` or `retain`).
/// Listener and connections live in a `LoopBoundBox` on `loop`, so the harness is plainly
/// `Sendable`: the test reaches them with `await onLoop { }`, which holds no thread while the
/// loop works. Line connections (`LineFramer`, optionally echoing) are the usual case; the
/// flow-control tests bring framers of their own and a frame handler.
final class StreamHarness<F: StreamFramer & SendableMetatype>: Sendable where F.Frame == String {
    typealias FrameHandler = @Sendable (StreamConnection<F>, String) -> Void

    /// What lives on the loop.
    struct Parts {
        var listener: StreamListener?
        var connections: [StreamConnection<F>] = []
    }

    let loop: EventLoop
    let seen: Seen
    /// The listener's port, known before anything runs on the loop.
    let port: Int
    private let parts: LoopBoundBox<Parts>

    /// `onFrame` runs on the loop for every frame an accepted connection delivers (after `seen`
    /// has it).
    init(
        framer: @escaping @Sendable () -> F, settings: StreamConnectionSettings = StreamConnectionSettings(),
        maxConnections: Int = 100, maxPerSource: Int = 100,
        security: (@Sendable () -> (any StreamSecurity)?)? = nil, onFrame: FrameHandler? = nil
    ) throws {
        let loop = try EventLoop()
        // Built before the loop's thread runs: this thread owns the loop's state until `start`.
        let parts = LoopBoundBox(Parts(), loop: loop)
        let seen = Seen()
        let caps = StreamConnectionCaps(maxConnections: maxConnections, maxPerSource: maxPerSource)
        let listener = try StreamListener(
            loop: loop, bind: SocketAddress(host: "127.0.0.1", port: 0), caps: caps, acceptBackoff: 0.05)
        listener.onRefused = { seen.refused($0) }
        listener.onAccept = { fd, peer in
            let c = StreamConnection(
                accepted: fd, peer: peer, loop: loop, framer: framer(), security: security?(), settings: settings,
                caps: caps)
            Self.watch(c, in: parts, seen: seen, onFrame: onFrame)
            c.start()
        }
        listener.start()
        parts.value.listener = listener
        self.loop = loop
        self.seen = seen
        self.parts = parts
        port = listener.local.port
        loop.start(name: "iocore-test")
    }

    /// The listener; on the loop.
    var listener: StreamListener? { parts.value.listener }
    /// The connections accepted and watched, in order; on the loop.
    var connections: [StreamConnection<F>] { parts.value.connections }

    /// Keeps `c` and records what it delivers and how it ends in `seen`; on the loop.
    func watch(_ c: StreamConnection<F>, onFrame: FrameHandler? = nil) {
        Self.watch(c, in: parts, seen: seen, onFrame: onFrame)
    }

    private static func watch(
        _ c: StreamConnection<F>, in parts: LoopBoundBox<Parts>, seen: Seen, onFrame: FrameHandler?
    ) {
        parts.value.connections.append(c)
        c.onFrames = { c, frames in
            for f in frames {
                seen.frame(f)
                onFrame?(c, f)
            }
        }
        c.onClose = { _, failure in seen.end(kind(failure)) }
        c.onKeepalive = { _ in seen.keepalive() }
    }

    /// Keeps a connection whose handlers the test set itself; on the loop.
    func retain(_ c: StreamConnection<F>) { parts.value.connections.append(c) }

    /// Runs `work` on the loop with the harness and suspends until its result.
    func onLoop<T: Sendable>(_ work: @escaping @Sendable (StreamHarness) -> T) async -> T {
        await loop.run { work(self) }
    }

    /// Stops the loop, then (the loop's thread done, this one owns its state) closes the
    /// listener and every connection. For a `defer`: the wait is for the loop's current turn.
    func stop() {
        loop.stop()
        parts.value.listener?.close()
        for c in parts.value.connections { c.close() }
        parts.value.connections = []
    }
}

extension StreamHarness where F == LineFramer {
    /// Line connections (at most 64 bytes a line), echoing every line back when `echo`.
    convenience init(
        settings: StreamConnectionSettings = StreamConnectionSettings(), maxConnections: Int = 100,
        maxPerSource: Int = 100, security: (@Sendable () -> (any StreamSecurity)?)? = nil, echo: Bool = false
    ) throws {
        try self.init(
            framer: { LineFramer(maxLine: 64) }, settings: settings, maxConnections: maxConnections,
            maxPerSource: maxPerSource, security: security, onFrame: echo ? Self.echo : nil)
    }

    /// `watch`, echoing every line back when `echo`.
    func watch(_ c: LineConnection, echo: Bool) {
        watch(c, onFrame: echo ? Self.echo : nil)
    }

    /// Sends every line back.
    private static let echo: FrameHandler = { c, line in c.send(Array((line + "\n").utf8)) }
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
