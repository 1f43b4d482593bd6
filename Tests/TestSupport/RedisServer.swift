import Foundation
import Glibc
import Synchronization

/// A `redis-server` of a test's own on 127.0.0.1 with a port from the OS: no persistence
/// (`--save ''`, `--appendonly no`), its files in a temporary folder, started through
/// `ChildProcess` and ready once it answers PING. `stop()` (in a `defer`) ends it and removes
/// the folder; `stopped()` ends it and waits; `restart()` brings it back on the same port;
/// `pause()`/`resume()` freeze and thaw it (SIGSTOP/SIGCONT) for slow-server tests.
/// `arguments` are passed on (`["--maxmemory", "10mb"]`, a replica's `--replicaof` ...).
public final class RedisServer: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let port: Int
    /// `requirepass`, when given.
    public let password: String?
    /// Where the server runs (`--dir`).
    public let directory: URL
    private let arguments: [String]
    private let child: Mutex<ChildProcess?>

    /// Starts a server on `port`, or on a free port from the OS when nil.
    public init(port: Int? = nil, password: String? = nil, arguments: [String] = []) async throws {
        self.password = password
        self.arguments = arguments
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The port is free when asked but not held: another test may take it first, so a
        // server that cannot bind is started again on a new one.
        var failure: Error = Failure(description: "redis-server did not start")
        for _ in 0..<(port == nil ? 3 : 1) {
            let port = try port ?? freePort()
            do {
                let started = try await Self.launch(port: port, password: password, directory: directory, arguments)
                self.port = port
                child = Mutex(started)
                return
            } catch {
                failure = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw failure
    }

    /// `redis://[:password@]127.0.0.1:port`.
    public var url: String { "redis://" + (password.map { ":\($0)@" } ?? "") + "127.0.0.1:\(port)" }

    /// What the server printed (its log), while it runs.
    public var output: String { child.withLock { $0?.output } ?? "" }

    /// Ends the server without waiting (for a `defer`) and removes its folder (it writes
    /// nothing there while it runs without persistence).
    public func stop() {
        if let running = child.withLock({ $0.take() }) {
            kill(running.processIdentifier, SIGCONT)  // a paused server would not act on SIGTERM
            running.stop()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Ends the server and waits until it has exited (its port refuses connections); the
    /// folder stays for `restart()`.
    public func stopped() async {
        guard let running = child.withLock({ $0.take() }) else { return }
        kill(running.processIdentifier, SIGCONT)
        await running.stopped()
        running.stop()
    }

    /// Ends the server if it runs and starts a new one on the same port and folder.
    public func restart() async throws {
        await stopped()
        let started = try await Self.launch(port: port, password: password, directory: directory, arguments)
        child.withLock { $0 = started }
    }

    /// Freezes the server (SIGSTOP): connections open, nothing is answered.
    public func pause() { signal(SIGSTOP) }

    /// Thaws a paused server (SIGCONT).
    public func resume() { signal(SIGCONT) }

    private func signal(_ signal: Int32) {
        if let pid = child.withLock({ $0?.processIdentifier }) { kill(pid, signal) }
    }

    /// True when a PING on a new connection gets an answer (PONG, or NOAUTH from a server
    /// with a password): the server is up and not frozen. Waits at most a second.
    public func answersPing() async -> Bool { await Self.answersPing(port: port) }

    private static func launch(
        port: Int, password: String?, directory: URL, _ extra: [String]
    ) async throws -> ChildProcess {
        var arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", directory.path, "--daemonize", "no"
        ]
        if let password { arguments += ["--requirepass", password] }
        let process = try ChildProcess("/usr/bin/redis-server", arguments + extra, unblockingSignals: true)
        let ready = await eventually(timeout: 10, pollInterval: 0.02) {
            await answersPing(port: port) || !process.isRunning
        }
        guard ready, process.isRunning else {
            let output = process.output
            process.stop()
            throw Failure(description: "redis-server on port \(port) did not start: \(output)")
        }
        return process
    }

    private static func answersPing(port: Int) async -> Bool {
        await offThePool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var wait = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            var address = loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { return false }
            let ping = Array("PING\r\n".utf8)
            guard send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count else { return false }
            var reply = [UInt8](repeating: 0, count: 64)
            let n = recv(fd, &reply, reply.count, 0)
            guard n > 0 else { return false }
            let text = String(decoding: reply[0..<n], as: UTF8.self)
            return text.hasPrefix("+PONG") || text.hasPrefix("-NOAUTH")
        }
    }
}
