import Foundation
import Glibc
import SIP
import Synchronization
import TestSupport

/// A real DNS server for a test: dnsmasq (Debian dnsmasq-base) on 127.0.0.1 with a port
/// the OS picked, answering only from the records the test gives (no resolv.conf, no
/// /etc/hosts, no DHCP), authoritative for `dns.test`, every query logged. `stop()` in a
/// `defer` ends it and removes its folder.
final class TestDNSServer: @unchecked Sendable {
    static let path = "/usr/sbin/dnsmasq"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    private(set) var port: Int
    let directory: URL
    private var pid: pid_t?
    private let ttl: Int

    /// `records`: dnsmasq lines (`srv-host=...`, `naptr-record=...`, `host-record=...`);
    /// `ttl`: the TTL of every answer (`local-ttl`).
    init(records: [String], ttl: Int = 60) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-dns-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.ttl = ttl
        port = 0
        var lastError: Error?
        // The free port can be taken before dnsmasq binds it: a few tries on fresh ports.
        for _ in 0..<3 {
            do {
                port = try freePort()
                try await start(records)
                return
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? SocketError("dnsmasq did not start", code: EADDRINUSE)
    }

    /// `HOST:PORT` for `--dns-server`.
    var server: String { "127.0.0.1:\(port)" }

    /// Replaces the records: dnsmasq stops and starts again on the same port.
    func replace(records: [String]) async throws {
        var gone = await exited(after: SIGTERM, timeout: 2)
        if !gone { gone = await exited(after: SIGKILL, timeout: 5) }
        guard gone else {
            throw SocketError("dnsmasq did not exit", code: EBUSY)
        }
        try await start(records)
    }

    /// What dnsmasq logged (one line per query: `query[SRV] _sip._udp.x.dns.test from ...`).
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("dnsmasq.log"), encoding: .utf8)) ?? ""
    }

    /// Queries logged for `name` of `type` ("A", "SRV", "NAPTR" ...).
    func queries(_ type: String, _ name: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("query[\(type)] \(name) from") }.count
    }

    func stop() {
        stopProcess()
        if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    private func start(_ records: [String]) async throws {
        let conf = directory.appendingPathComponent("dnsmasq.conf")
        let lines =
            [
                "port=\(port)", "listen-address=127.0.0.1", "bind-interfaces", "no-resolv", "no-hosts", "no-poll",
                "keep-in-foreground", "pid-file=", "local=/dns.test/", "local-ttl=\(ttl)", "log-queries",
                "log-facility=" + directory.appendingPathComponent("dnsmasq.log").path
            ] + records
        try (lines.joined(separator: "\n") + "\n").write(to: conf, atomically: true, encoding: .utf8)
        // posix_spawn, not Foundation's Process: dnsmasq closes every descriptor it inherits,
        // and Process takes the close of its watch descriptor for an exit and then blocks in
        // waitpid on it, which stops it from reaping any other child of the test process.
        let argv = [Self.path, "--conf-file=" + conf.path]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
        var child: pid_t = 0
        let rc = posix_spawn(&child, Self.path, &actions, nil, &cArgs, environ)
        guard rc == 0 else { throw SocketError("posix_spawn dnsmasq", code: rc) }
        pid = child
        let ready = await eventually(timeout: 10) { [port] in !isRunning || !isPortFree(port, transport: .udp) }
        guard ready, isRunning else {
            _ = await exited(after: SIGKILL, timeout: 5)
            throw SocketError("dnsmasq did not listen on 127.0.0.1:\(port): \(log.suffix(500))", code: EADDRINUSE)
        }
    }

    /// True while dnsmasq has not exited (reaps it when it has).
    private var isRunning: Bool {
        guard let pid else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            self.pid = nil
            return false
        }
        return true
    }

    /// Sends `signal` and waits (suspended) up to `timeout` for dnsmasq to exit.
    private func exited(after signal: Int32, timeout: Double) async -> Bool {
        guard let child = pid else { return true }
        kill(child, signal)
        return await eventually(timeout: timeout) { !isRunning }
    }

    /// Ends dnsmasq without waiting (for `stop()` in a `defer`): SIGTERM now, reaped by
    /// dispatch timers, SIGKILL after 2 s if it still runs.
    private func stopProcess() {
        guard let child = pid else { return }
        pid = nil
        kill(child, SIGTERM)
        Self.reap(child, killAt: SIPEventLoop.now() + 2)
    }

    private static func reap(_ child: pid_t, killAt: Double) {
        var status: Int32 = 0
        guard waitpid(child, &status, WNOHANG) != child else { return }
        if SIPEventLoop.now() >= killAt { kill(child, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { reap(child, killAt: killAt) }
    }
}
/// A DNS server that never answers: a UDP socket on 127.0.0.1 (port from the OS) whose
/// thread reads every query and drops it. `stop()` in a `defer`.
final class SilentDNSServer: @unchecked Sendable {
    private let socket: UDPSocket
    private let stopped = Mutex<Bool>(false)
    private let received = Mutex<Int>(0)

    init() throws {
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
            defer { buffer.deallocate() }
            var from = RawSocketAddress()
            while !stopped.withLock({ $0 }) {
                var pfd = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, 100) > 0 else { continue }
                while socket.receive(into: buffer, from: &from) != nil { received.withLock { $0 += 1 } }
            }
        }
        thread.start()
    }

    var server: String { "127.0.0.1:\(socket.local.port)" }
    /// Queries read (and dropped) so far.
    var queries: Int { received.withLock { $0 } }

    /// Ends the server without waiting: its thread (which holds the socket) sees the flag
    /// within its 100 ms poll and lets the socket go.
    func stop() {
        stopped.withLock { $0 = true }
    }
}
