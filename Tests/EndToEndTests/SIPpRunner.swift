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

    /// The SIPp scenarios of the conformance corpus (TestSupport's `ConformanceCorpus`).
    static let corpus = URL(fileURLWithPath: ConformanceCorpus.path("sipp"))

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

/// TestSupport's check for a SIP transport (TLS and TCP share TCP's ports).
func isPortFree(_ port: Int, transport: SIPTransportProtocol) -> Bool {
    isPortFree(port, transport == .udp ? .udp : .tcp)
}
