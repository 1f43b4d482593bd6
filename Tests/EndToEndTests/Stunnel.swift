import Foundation
import Glibc
import SIP
import TestSupport
import Testing

/// One `stunnel` process (Debian `stunnel4`) for a test: SIPp has no TLS, so stunnel puts
/// TLS in front of it. As a server it takes TLS on `port` and passes plain TCP to a SIPp
/// carrier; as a client it takes plain TCP on `port` (from a SIPp caller) and speaks TLS to
/// the gateway's TLS listener. Its log (`log`) says what it saw of each handshake. `stop()`
/// (in a `defer`) ends it and removes its folder.
final class Stunnel: @unchecked Sendable {
    static let path = "/usr/bin/stunnel4"

    /// The port stunnel accepts on (127.0.0.1).
    let port: Int
    let directory: URL
    fileprivate let process: ChildProcess

    enum Mode {
        /// TLS in on `port`, plain TCP out to `to`; `certificate` is what it shows; with
        /// `clientCA` it demands a client certificate issued by that CA.
        case server(certificate: String, key: String, to: Int, clientCA: String? = nil)
        /// Plain TCP in on `port`, TLS out to `to`, the server checked against `ca` for
        /// `name`; `certificate` (and its key) shown when the server asks.
        case client(to: Int, ca: String, name: String, certificate: String? = nil, key: String? = nil)
    }

    private init(_ mode: Mode, port: Int) throws {
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-stunnel-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lines = [
            "foreground = yes", "pid =", "syslog = no", "debug = info",
            "output = \(directory.appendingPathComponent("stunnel.log").path)", "[sip]", "accept = 127.0.0.1:\(port)"
        ]
        switch mode {
        case let .server(certificate, key, to, clientCA):
            lines += ["connect = 127.0.0.1:\(to)", "cert = \(certificate)", "key = \(key)"]
            if let clientCA { lines += ["CAfile = \(clientCA)", "verifyChain = yes", "requireCert = yes"] }
        case let .client(to, ca, name, certificate, key):
            lines += [
                "client = yes", "connect = 127.0.0.1:\(to)", "CAfile = \(ca)", "verifyChain = yes",
                "checkHost = \(name)", "sni = \(name)"
            ]
            if let certificate, let key { lines += ["cert = \(certificate)", "key = \(key)"] }
        }
        let config = directory.appendingPathComponent("stunnel.conf")
        try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
        process = try ChildProcess(Self.path, [config.path], outputFile: directory.appendingPathComponent("stdout.txt"))
    }

    /// Starts stunnel on a free port and waits until it listens; a port another process took
    /// first is given up for a fresh one, up to three times.
    static func start(_ mode: Mode) async throws -> Stunnel {
        var report = ""
        for _ in 0..<3 {
            let s = try Stunnel(mode, port: try freePort())
            if await eventually(timeout: 10, { !s.process.isRunning || !isPortFree(s.port, transport: .tcp) }),
                s.process.isRunning
            {
                return s
            }
            report = s.log
            s.stop()
        }
        throw SocketError("stunnel did not start: \(report)", code: ECONNREFUSED)
    }

    /// What stunnel logged.
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("stunnel.log"), encoding: .utf8)) ?? ""
    }

    /// SIGTERM (SIGKILL 2 s later) without waiting; the folder goes once it has exited.
    func stop() {
        let directory = directory
        process.stop(grace: 2) {
            if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
                try? FileManager.default.removeItem(at: directory)
            }
        }
    }
}

extension GatewayProcess {
    /// The TLS listener's port, when the gateway has one.
    var tlsPort: Int? {
        lines.first { $0.hasPrefix("listening sip tls ") }.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
    }
}

/// The subject of the certificate a TLS server at 127.0.0.1:`port` shows, read with
/// `openssl s_client` (bounded in time); nil when no handshake completed.
func presentedSubject(port: Int, serverName: String, timeout: Double = 10) async -> String? {
    guard
        let text = try? await ChildProcess.run(
            "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", serverName, "-brief"],
            timeout: timeout
        ).output
    else { return nil }
    // -brief prints "Peer certificate: CN = gw-a.test".
    return text.split(separator: "\n").first { $0.hasPrefix("Peer certificate:") }
        .map { String($0.dropFirst("Peer certificate:".count)).trimmingCharacters(in: .whitespaces) }
}
