import Foundation
import Glibc
import SIP
import TestSupport
import Testing

/// One SIPp process (`/usr/bin/sipp`, sip-tester) running a scenario against our user agent.
///
/// Every run has a hard deadline (SIPp's own `-timeout` plus a kill from here) and writes its
/// error and message traces into a private temporary folder, so a failing test can show what
/// SIPp saw. `stop()` (call it in a `defer`) always ends the process and removes the folder.
final class SIPp: @unchecked Sendable {
    static let path = "/usr/bin/sipp"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// The shared SIPp corpus: `../shared/conformance/sipp` beside the package root.
    static let corpus: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/conformance/sipp")
    }()

    /// What SIPp runs.
    enum Scenario: CustomStringConvertible {
        /// A built-in scenario (`-sn uac`, `-sn uas`).
        case builtIn(String)
        /// A file of the shared corpus, relative to `SIPp.corpus` (e.g. "pjproject/uac-options.xml").
        case corpus(String)
        /// A scenario written by the tests (see `Scenarios`), stored in the run folder.
        case inline(name: String, xml: String)

        var description: String {
            switch self {
            case .builtIn(let n): "-sn \(n)"
            case .corpus(let f): f
            case .inline(let n, _): n
            }
        }
    }

    /// A corpus scenario's text with `fixes` (original → replacement) applied, for scenarios
    /// with a known defect; every original must occur.
    static func patched(_ file: String, _ fixes: [(String, String)]) throws -> Scenario {
        var xml = try String(contentsOf: corpus.appendingPathComponent(file), encoding: .isoLatin1)
        for (old, new) in fixes {
            guard xml.contains(old) else { throw SocketError("\(file) no longer contains \(old)", code: ENOENT) }
            xml = xml.replacingOccurrences(of: old, with: new)
        }
        return .inline(name: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent + "-fixed", xml: xml)
    }

    let scenario: Scenario
    /// SIPp's own SIP port on 127.0.0.1.
    let port: Int
    let transport: SIPTransportProtocol
    let directory: URL
    private let process: ChildProcess
    private let deadline: Double

    /// Starts SIPp. `remote` is where SIPp sends its first request (nil: SIPp waits as UAS);
    /// `port` is SIPp's SIP port (default: a free one); `timeout` bounds the whole run, in
    /// seconds.
    init(
        _ scenario: Scenario, remote: SIPPeer? = nil, transport: SIPTransportProtocol = .udp, calls: Int = 1,
        port: Int? = nil, timeout: Double = 20, arguments extra: [String] = [], workingDirectory: URL? = nil
    ) throws {
        self.scenario = scenario
        self.transport = transport
        self.port = try port ?? freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var args: [String] = []
        if let remote { args.append(remote.address.description) }
        switch scenario {
        case .builtIn(let name):
            args += ["-sn", name]
        case .corpus(let file):
            args += ["-sf", SIPp.corpus.appendingPathComponent(file).path]
        case .inline(let name, let xml):
            let file = directory.appendingPathComponent(name + ".xml")
            try xml.write(to: file, atomically: true, encoding: .utf8)
            args += ["-sf", file.path]
        }
        // An explicit media port: SIPp's own choice (6000 and up) races between parallel runs.
        args += ["-mp", String(try freeMediaPorts())]
        args += [
            "-i", "127.0.0.1", "-p", String(self.port), "-t", transport == .tcp ? "t1" : "u1",
            "-m", String(calls), "-nostdin", "-timeout", "\(Int(timeout.rounded(.up)))s", "-timeout_error",
            "-trace_err", "-error_file", directory.appendingPathComponent("errors.log").path,
            "-trace_msg", "-message_file", directory.appendingPathComponent("messages.log").path
        ]
        args += extra
        deadline = SIPEventLoop.now() + timeout + 5
        process = try ChildProcess(
            SIPp.path, args, currentDirectory: workingDirectory ?? directory,
            outputFile: directory.appendingPathComponent("screen.txt"))
    }

    /// Starts SIPp and waits until it listens. The free port it is given can be taken by
    /// another process before SIPp binds it (tests run in parallel), so a start that does not
    /// come up is retried on a fresh port, up to three times.
    static func listening(
        _ scenario: Scenario, remote: SIPPeer? = nil, transport: SIPTransportProtocol = .udp, calls: Int = 1,
        timeout: Double = 20, arguments extra: [String] = []
    ) async throws -> SIPp {
        var report = ""
        for _ in 0..<3 {
            let sipp = try SIPp(
                scenario, remote: remote, transport: transport, calls: calls, timeout: timeout, arguments: extra)
            if await sipp.waitUntilListening(timeout: 10) { return sipp }
            report = "\(sipp.report)"
            sipp.stop()
        }
        throw SocketError("SIPp did not start: \(report)", code: ECONNREFUSED)
    }

    /// SIPp's address, for our requests.
    var peer: SIPPeer { SIPPeer(transport: transport, address: SocketAddress(host: "127.0.0.1", port: port)) }

    /// A SIP URI that reaches SIPp (`sip:service@127.0.0.1:PORT`).
    var uri: SIPURI {
        var u = SIPURI(user: "service", host: "127.0.0.1", port: port)
        if transport == .tcp { u.parameters.append(SIPParameter("transport", "tcp")) }
        return u
    }

    /// Waits until SIPp has bound its SIP port (it then answers), or it died.
    func waitUntilListening(timeout: Double = 5) async -> Bool {
        await eventually(timeout: timeout) { [self] in !process.isRunning || !isPortFree(port, transport: transport) }
            && process.isRunning
    }

    /// Waits for SIPp to exit; nil when it is still running at `timeout` (or the run's deadline).
    func waitForExit(timeout: Double? = nil) async -> Int32? {
        let limit = min(deadline, SIPEventLoop.now() + (timeout ?? .infinity))
        return await process.exit(timeout: limit - SIPEventLoop.now())
    }

    var isRunning: Bool { process.isRunning }

    /// Ends SIPp if it still runs (SIGTERM, then SIGKILL a second later, without waiting) and
    /// removes the run folder (kept when the environment sets IRISGW_E2E_KEEP, for debugging).
    func stop() {
        process.stop(grace: 1)
        if ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// SIPp's error trace (empty when it had none).
    var errors: String { read("errors.log") }

    /// Every message SIPp sent and received.
    var messages: String { read("messages.log") }

    /// The lines of `messages`, without line ends or surrounding blanks.
    var lines: Set<String> {
        Set(messages.components(separatedBy: .newlines).map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// How many messages SIPp received whose first line starts with `startLine` (e.g. "BYE ",
    /// "SIP/2.0 200"), retransmissions included.
    func received(_ startLine: String) -> Int {
        // Blocks start with a dashed line; a received one says "<TRANSPORT> message received [N] bytes".
        messages.components(separatedBy: "-----------------------------------------------").filter { block in
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            guard let marker = lines.firstIndex(where: { $0.contains("message received [") }), marker + 1 < lines.count
            else { return false }
            return lines[marker + 1].hasPrefix(startLine)
        }.count
    }

    /// What a failing expectation shows: the scenario, SIPp's error log and the tail of its
    /// message trace.
    var report: Comment {
        let trace = messages
        return """
            SIPp \(scenario) on port \(port) (\(transport.rawValue)); run folder \(directory.path)
            --- SIPp errors ---
            \(errors.isEmpty ? "(none)" : errors)
            --- last messages ---
            \(trace.count > 4000 ? "…" + trace.suffix(4000) : trace)
            """
    }

    private func read(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }
}

/// A free port on 127.0.0.1 for UDP and TCP: the OS picks one for a UDP socket, we check that
/// TCP can bind it too, then release both.
func freePort() throws -> Int {
    for _ in 0..<20 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var sa = loopback(port: 0)
        let bound = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        close(fd)
        guard bound == 0 else { continue }
        let port = Int(UInt16(bigEndian: sa.sin_port))
        if isPortFree(port, transport: .tcp) { return port }
    }
    throw SocketError("no free port")
}

/// An even UDP port with the next three free too (SIPp's audio and video RTP/RTCP).
func freeMediaPorts() throws -> Int {
    for _ in 0..<50 {
        let p = try freePort() & ~1
        if p + 3 <= 65_535, (p...(p + 3)).allSatisfy({ isPortFree($0, transport: .udp) }) { return p }
    }
    throw SocketError("no free media ports")
}

/// The first of `count` UDP ports, all free now: from an OS-chosen even port, the first
/// block at or above it whose every port is checked free. The gateway's `--rtp-ports`
/// (it skips a pair another process takes later).
func freePortBlock(count: Int) throws -> Int {
    for _ in 0..<10 {
        var base = try freePort() & ~1
        while base + count <= 65_535 {
            guard let taken = (base..<(base + count)).last(where: { !isPortFree($0, transport: .udp) }) else {
                return base
            }
            base = (taken + 2) & ~1
        }
    }
    throw SocketError("no block of \(count) free UDP ports", code: EADDRINUSE)
}

/// True when nothing is bound to `port` for `transport` on any address of either family: a
/// dual-stack bind of [::] without SO_REUSEADDR fails when 127.0.0.1, ::1 or any other address
/// holds the port (SIPp binds its media on ::1 in the IPv6 tests, so 127.0.0.1 alone is not enough).
func isPortFree(_ port: Int, transport: SIPTransportProtocol) -> Bool {
    let type = Int32((transport == .udp ? SOCK_DGRAM : SOCK_STREAM).rawValue)
    let fd = socket(AF_INET6, type, 0)
    guard fd >= 0 else { return isLoopbackPortFree(port, type: type) }
    defer { close(fd) }
    var off: Int32 = 0
    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
    var sa = sockaddr_in6()
    sa.sin6_family = sa_family_t(AF_INET6)
    sa.sin6_port = in_port_t(UInt16(port).bigEndian)
    sa.sin6_addr = in6addr_any
    return withUnsafePointer(to: &sa) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    } == 0
}

/// The IPv4-only check, for a machine without IPv6.
private func isLoopbackPortFree(_ port: Int, type: Int32) -> Bool {
    let fd = socket(AF_INET, type, 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var sa = loopback(port: port)
    return withUnsafePointer(to: &sa) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

func loopback(port: Int) -> sockaddr_in {
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = in_port_t(UInt16(port).bigEndian)
    sa.sin_addr.s_addr = inet_addr("127.0.0.1")
    return sa
}
