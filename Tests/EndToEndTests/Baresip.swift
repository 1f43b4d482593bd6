import Foundation
import Glibc
import SIP
import TestSupport
import Testing

/// One baresip process (`/usr/bin/baresip`, Debian `baresip` 1.0.0) as an outside SIP user
/// agent: a real softphone with its own SIP and SDP stack, not a script of ours.
///
/// The test's folder holds `config`, `accounts` and `contacts`, written here (`baresip -f`);
/// nothing is read from the user's `~/.baresip`. baresip listens for SIP on 127.0.0.1 with a
/// port the OS picks (`sip_listen 127.0.0.1:0`), puts 127.0.0.1 in its SDP
/// (`net_interface 127.0.0.1`), registers nowhere (`regint=0`) and needs no sound card: the
/// source is `ausine` (a 440 Hz sine), the player and alert `aubridge` (a virtual device
/// that plays to no one). `-s` prints every SIP message it sends and receives, `-t` makes
/// it quit by itself after `timeout` seconds whatever happens. Commands (`/dial`,
/// `/hangup`) reach its `stdio` UI through a pipe. Everything it prints goes to `out.log`.
/// `stop()` (call it in a `defer`) ends the process (SIGTERM, then SIGKILL) and removes
/// the folder (kept when the environment sets IRISGW_E2E_KEEP). baresip starts with no
/// signal blocked: it inherits the test runner's mask otherwise, ignores the SIGTERM, and
/// outlives a test process that exits before the SIGKILL.
final class Baresip: @unchecked Sendable {
    static let path = "/usr/bin/baresip"
    static let modules = "/usr/lib/baresip/modules"
    /// The binary and every module the config loads.
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: path)
            && ["stdio", "g711", "ausine", "aubridge", "srtp", "account", "menu"]
                .allSatisfy { FileManager.default.fileExists(atPath: "\(modules)/\($0).so") }
    }

    /// The one account's line in `accounts`.
    struct Account {
        var user = "+15559876543"
        /// `srtp-mand`: the offer is RTP/SAVP with `a=crypto` (SRTP or nothing); `srtp`:
        /// RTP/AVP with `a=crypto` (SRTP when the answer has keys); nil: plain RTP/AVP.
        var mediaenc: String?
        var audioCodecs = "pcmu"
        /// `auto`: calls to baresip are answered at once (a carrier); `manual`: they ring.
        var answerMode = "manual"

        var line: String {
            "<sip:\(user)@127.0.0.1>;regint=0;answermode=\(answerMode);audio_codecs=\(audioCodecs)"
                + (mediaenc.map { ";mediaenc=\($0)" } ?? "")
        }
    }

    /// What else the process is set up with.
    struct Options {
        /// A PEM file with baresip's TLS certificate and its key: baresip then also listens
        /// for SIP over TLS, on `sipPort + 1` (libre's rule), which needs a fixed `sipPort`.
        var tlsCertificate: String?
        /// `sndfile`: every call's audio is written to `<folder>/dump-*-dec.wav` (what
        /// baresip received and decoded) and `-enc.wav` (what it sent).
        var record = false
        /// More modules to load (`opus`), and config lines as written (`opus_inbandfec yes`).
        var modules: [String] = []
        var extraConfig = ""
    }

    static func config(listen port: Int, options: Options, directory: URL) -> String {
        var extra = ""
        if let certificate = options.tlsCertificate { extra += "sip_certificate\t\t\(certificate)\n" }
        if options.record { extra += "module\t\t\tsndfile.so\nsnd_path\t\t\(directory.path)\n" }
        for module in options.modules { extra += "module\t\t\t\(module).so\n" }
        extra += options.extraConfig
        return config.replacingOccurrences(of: "sip_listen\t\t127.0.0.1:0", with: "sip_listen\t\t127.0.0.1:\(port)")
            + extra
    }

    static let config = """
        # written by the irisgw tests (Tests/EndToEndTests/Baresip.swift)
        poll_method		epoll
        sip_listen		127.0.0.1:0
        net_interface		127.0.0.1
        call_local_timeout	120
        call_max_calls		4
        audio_source		ausine,440
        ausrc_srate		48000
        ausrc_channels		2
        audio_player		aubridge,play
        audio_alert		aubridge,alert
        ringback_disabled	yes
        module_path		\(modules)
        module			stdio.so
        module			g711.so
        module			ausine.so
        module			aubridge.so
        module			srtp.so
        module_tmp		account.so
        module_app		menu.so

        """

    let account: Account
    let options: Options
    /// Where baresip takes SIP over UDP and TCP (and TLS on `sipPort + 1`), when fixed.
    let sipPort: Int?
    var tlsPort: Int? { options.tlsCertificate == nil ? nil : sipPort.map { $0 + 1 } }
    let directory: URL
    private var process: ChildProcess?
    private let commands: CommandPipe
    private var log: URL { directory.appendingPathComponent("out.log") }
    private var stopped = false

    /// Starts baresip and waits until it says it is ready. `dial`: a SIP URI it calls at
    /// once (`-e /dial URI`). `timeout`: when baresip quits by itself (`-t`).
    /// `sipPort`: the port to listen on (nil: one the OS picks; TLS needs a fixed one).
    init(
        account: Account, options: Options = Options(), sipPort: Int? = nil, dial uri: String? = nil, timeout: Int = 60
    ) async throws {
        self.account = account
        self.options = options
        self.sipPort = sipPort
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-baresip-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.config(listen: sipPort ?? 0, options: options, directory: directory)
            .write(to: directory.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        try (account.line + "\n").write(
            to: directory.appendingPathComponent("accounts"), atomically: true, encoding: .utf8)
        try "".write(to: directory.appendingPathComponent("contacts"), atomically: true, encoding: .utf8)

        do {
            commands = try CommandPipe()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }

        var env = ProcessInfo.processInfo.environment
        env["HOME"] = directory.path
        do {
            process = try ChildProcess(
                Self.path,
                ["-f", directory.path, "-s", "-t", String(timeout)] + (uri.map { ["-e", "/dial \($0)"] } ?? []),
                environment: env, currentDirectory: directory, outputFile: log,
                standardInput: commands.standardInput, unblockingSignals: true)
        } catch {
            stop()
            throw error
        }
        guard await waitFor("baresip is ready.", timeout: 10), isRunning else {
            let text = output
            stop()
            throw SocketError("baresip did not start:\n\(text)", code: ECONNREFUSED)
        }
    }

    /// A baresip that also listens for SIP over TLS with `certificate` (its key beside it),
    /// on ports the OS had free; tried again on fresh ports if another process took them.
    static func tlsServer(
        account: Account, certificate: String, key: String, record: Bool = false, timeout: Int = 60
    ) async throws -> Baresip {
        var lastError: Error = SocketError("no free port pair")
        for _ in 0..<3 {
            let port = try freePort()
            guard isPortFree(port + 1, transport: .tcp) else { continue }
            let pem = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-baresip-\(UUID().uuidString.prefix(8)).pem")
            let both =
                try String(contentsOfFile: certificate, encoding: .utf8)
                + (try String(contentsOfFile: key, encoding: .utf8))
            try both.write(to: pem, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: pem) }
            do {
                let b = try await Baresip(
                    account: account, options: Options(tlsCertificate: pem.path, record: record), sipPort: port,
                    timeout: timeout)
                // The certificate is read at start; the listener must be up.
                if isPortFree(port + 1, transport: .tcp) { b.stop(); continue }
                return b
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The WAV files `sndfile` wrote for the calls so far: received (`-dec`) or sent (`-enc`).
    func recordings(received: Bool = true) -> [String] {
        let suffix = received ? "-dec.wav" : "-enc.wav"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(suffix) }.sorted().map { directory.appendingPathComponent($0).path }
    }

    /// Everything baresip printed so far, without its colour escapes.
    var output: String {
        let raw = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return raw.replacingOccurrences(of: "\u{1b}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    /// One SIP message of baresip's trace (`-s`).
    struct TracedMessage: CustomStringConvertible {
        /// The trace's "UDP a -> b" line.
        var route: String
        var startLine: String
        var headers: [String]
        var body: String

        var isResponse: Bool { startLine.hasPrefix("SIP/2.0 ") }
        var statusCode: Int? { isResponse ? Int(startLine.split(separator: " ")[1]) : nil }
        /// The values of the header `name` (case-insensitive).
        func header(_ name: String) -> [String] {
            headers.compactMap { h in
                guard let colon = h.firstIndex(of: ":"),
                    h[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased()
                else { return nil }
                return h[h.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        var description: String {
            ([route, startLine] + headers).joined(separator: "\n") + (body.isEmpty ? "" : "\n\n" + body)
        }
    }

    /// The SIP messages baresip's trace shows, sent and received, in order. A trace block is
    /// a line "#", the line "UDP a -> b", the message's start line and headers, a blank
    /// line, then the body (Content-Length bytes).
    var sipMessages: [TracedMessage] {
        // "\r\n" is one Character in Swift: split on any line end, CRLF included.
        let lines = output.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        var result: [TracedMessage] = []
        var i = 0
        while i < lines.count {
            guard lines[i] == "#", i + 2 < lines.count else { i += 1; continue }
            var m = TracedMessage(route: lines[i + 1], startLine: lines[i + 2], headers: [], body: "")
            i += 3
            while i < lines.count, !lines[i].isEmpty { m.headers.append(lines[i]); i += 1 }
            i += 1
            var remaining = m.header("Content-Length").first.flatMap { Int($0) } ?? 0
            var body: [String] = []
            while remaining > 0, i < lines.count {
                body.append(lines[i])
                remaining -= lines[i].utf8.count + 2
                i += 1
            }
            m.body = body.joined(separator: "\n")
            result.append(m)
        }
        return result
    }

    /// The INVITEs baresip sent.
    var invites: [TracedMessage] { sipMessages.filter { $0.startLine.hasPrefix("INVITE ") } }

    /// The responses baresip received to its INVITEs, oldest first.
    var inviteResponses: [TracedMessage] {
        sipMessages.filter { $0.isResponse && $0.header("CSeq").first?.hasSuffix(" INVITE") == true }
    }

    /// The REFERs baresip sent or received (its trace does not say which: see `route`).
    var refers: [TracedMessage] { sipMessages.filter { $0.startLine.hasPrefix("REFER ") } }

    /// The NOTIFYs in the trace, sent or received.
    var notifies: [TracedMessage] { sipMessages.filter { $0.startLine.hasPrefix("NOTIFY ") } }

    /// baresip's own lines about transfers: "transferring call to URI" when `/transfer`
    /// sends a REFER, "menu: transferring call ID to 'URI'" when a REFER it took makes it
    /// call the Refer-To (its value as received, in angle brackets).
    var transferLines: [String] {
        output.split(whereSeparator: \.isNewline).map(String.init).filter { $0.contains("transferring call") }
    }

    /// Blind transfer of the current call (`/transfer URI`, the menu module): baresip sends
    /// REFER with `Refer-To: URI` (no Referred-By), and hangs up once a NOTIFY says 200.
    func transfer(to uri: String) { send("/transfer \(uri)") }

    /// Waits until baresip printed `text` (or exited, or `timeout` passed); true when it did.
    func waitFor(_ text: String, timeout: Double = 10) async -> Bool {
        await eventually(timeout: timeout) { [self] in output.contains(text) || !isRunning } && output.contains(text)
    }

    /// Types a command into baresip's stdio UI (`/hangup`, `/quit`, ...).
    func send(_ command: String) { commands.send(command) }

    var isRunning: Bool { process?.isRunning ?? false }

    /// Ends baresip if it still runs (SIGTERM, then SIGKILL after 3 s) without waiting; once
    /// it has exited the pipe is closed and the folder removed.
    func stop() {
        guard !stopped else { return }
        stopped = true
        let cleanUp = commands.cleanUp(removing: directory)
        if let process { process.stop(grace: 3, afterExit: cleanUp) } else { cleanUp() }
    }

    /// What a failing expectation shows: the account and the tail of what baresip printed.
    var report: Comment {
        let text = output
        return """
            baresip (\(account.line)); folder \(directory.path)
            --- baresip output ---
            \(text.count > 6000 ? "…" + text.suffix(6000) : text)
            """
    }
}
