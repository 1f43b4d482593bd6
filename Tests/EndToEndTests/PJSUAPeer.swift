import Foundation
import SIP
import TestSupport
import Testing

/// One PJSIP user agent (pjsua2, PyPI `pjsua2-python`, in the venv `make deps` makes at
/// `.build/pyenv`) as an outside SIP peer that takes part in transfers: it answers, calls,
/// sends REFER (blind, or with `?Replaces=`), takes a REFER and calls its Refer-To (pjsua
/// sends the NOTIFYs itself), places an INVITE with `Replaces`, plays a tone and records
/// what it hears.
///
/// The script `Peers/pjsua_peer.py` binds SIP over UDP on 127.0.0.1 with a port the OS
/// picks and has no sound card (pjsua's null device). Commands reach it on stdin (`send`);
/// it prints one JSON object a line (`events`), which tests wait on. pjsua's own log, SIP
/// messages included, goes to `pjsua.log` in the peer's folder (`report` shows its tail).
/// `stop()` (in a `defer`) quits it (SIGTERM, then SIGKILL) and removes the folder (kept
/// when the environment sets IRISGW_E2E_KEEP).
final class PJSUAPeer: @unchecked Sendable {
    static let python = PythonVenv.python
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Peers/pjsua_peer.py").path

    /// The venv's interpreter with the `pjsua2` package in it (`make deps` installs both).
    static var isInstalled: Bool { PythonVenv.has("pjsua2") }

    /// What the process is started with.
    struct Options {
        /// The user part of its URI (`sip:USER@127.0.0.1:PORT`).
        var user = "pjsua"
        /// Answer every call at once (a carrier, a transfer target); otherwise calls ring
        /// until `answer`.
        var autoAnswer = true
        /// A tone (Hz) that every call sends.
        var tone: Int?
        /// Record what every call receives (`call-N.wav` in the folder), for `toneShare`.
        var record = false
        /// `host:port` that every call placed for a REFER goes to (a loose route): a test's
        /// Refer-To names this peer itself (the trunk's proxy), pjsua calls it as it is.
        var target: String?
    }

    /// One line the script printed. Which fields are set depends on `event` (the script's
    /// docstring lists them).
    struct Event: Decodable, Sendable, CustomStringConvertible {
        var event: String
        var call: Int?
        var port: Int?
        var state: String?
        var status: Int?
        var reason: String?
        var final: Bool?
        var uri: String?
        var referTo: String?
        var referredBy: String?
        var referCall: Int?
        var newCall: Int?
        var replacing: Int?
        var replaces: String?
        var callId: String?
        /// An incoming call's From.
        var from: String?
        var localTag: String?
        var remoteTag: String?
        var hz: Double?
        var ratio: Double?
        var message: String?

        var description: String {
            [
                event, call.map { "call \($0)" }, state, status.map(String.init), reason, referTo, uri, replaces,
                ratio.map { "ratio \($0)" }, message
            ].compactMap { $0 }.joined(separator: " ")
        }
    }

    let options: Options
    let directory: URL
    /// Where it takes SIP over UDP on 127.0.0.1.
    private(set) var port = 0
    private var process: ChildProcess?
    private let commands: CommandPipe
    private var stopped = false
    private var output: URL { directory.appendingPathComponent("out.log") }
    private var log: URL { directory.appendingPathComponent("pjsua.log") }

    /// Starts the peer and waits for its port.
    init(_ options: Options = Options()) async throws {
        self.options = options
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-pjsua-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            commands = try CommandPipe()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        var arguments = ["-u", Self.script, "--user", options.user, "--log", log.path]
        if options.autoAnswer { arguments.append("--auto-answer") }
        if let tone = options.tone { arguments += ["--tone", String(tone)] }
        if options.record { arguments += ["--record", directory.path] }
        if let target = options.target { arguments += ["--target", target] }
        do {
            process = try ChildProcess(
                Self.python, arguments, currentDirectory: directory, outputFile: output,
                standardInput: commands.standardInput, unblockingSignals: true)
        } catch {
            stop()
            throw error
        }
        guard let ready = await waitFor(timeout: 10, { $0.event == "ready" }), let port = ready.port else {
            let text = report
            stop()
            throw SocketError("the pjsua2 peer did not start: \(text)", code: ECONNREFUSED)
        }
        self.port = port
    }

    /// `sip:USER@127.0.0.1:PORT`: this peer (any user reaches it).
    func uri(user: String? = nil) -> String { "sip:\(user ?? options.user)@127.0.0.1:\(port)" }

    /// The address `Options.target` takes: `127.0.0.1:PORT`.
    var address: String { "127.0.0.1:\(port)" }

    var peer: SIPPeer { SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: port)) }

    /// Types a command (the script's docstring lists them: `call`, `refer`, `replace` ...).
    func send(_ command: String) { commands.send(command) }

    /// Every event printed so far, oldest first.
    var events: [Event] {
        PythonVenv.events(Event.self, in: (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// Waits for the first event (from the start) that `matches`; nil after `timeout` or
    /// once the process has exited without it.
    func waitFor(timeout: Double = 10, _ matches: (Event) -> Bool) async -> Event? {
        var found: Event?
        _ = await eventually(timeout: timeout) {
            found = events.first(where: matches)
            return found != nil || !isRunning
        }
        return found ?? events.first(where: matches)
    }

    /// Waits until call `call` reached `state` (pjsua's names: CALLING, EARLY, CONNECTING,
    /// CONFIRMED, DISCONNECTED).
    func waitFor(call: Int, state: String, timeout: Double = 10) async -> Event? {
        await waitFor(timeout: timeout) { $0.event == "state" && $0.call == call && $0.state == state }
    }

    /// The share (0...1) of the last second call `call` received that is `hz`: the script
    /// measures its recording (Goertzel) when asked. 0 when it does not answer.
    func toneShare(call: Int, hz: Double) async -> Double {
        let before = events.filter { $0.event == "tone" }.count
        send("tone \(call) \(Int(hz))")
        var answer: Event?
        _ = await eventually(timeout: 5) {
            let tones = events.filter { $0.event == "tone" }
            answer = tones.count > before ? tones[before] : nil
            return answer != nil || !isRunning
        }
        return answer?.ratio ?? 0
    }

    /// Waits until `hz` is most of what call `call` hears (a share of at least `share`).
    func hears(call: Int, hz: Double, share: Double = 0.5, timeout: Double = 10) async -> Bool {
        await eventually(timeout: timeout, pollInterval: 0.2) { await toneShare(call: call, hz: hz) >= share }
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// Quits the peer if it still runs (`quit`, SIGTERM after 1 s, SIGKILL after 3 s more)
    /// without waiting; once it has exited the pipe is closed and the folder removed.
    func stop() {
        guard !stopped else { return }
        stopped = true
        let cleanUp = commands.cleanUp(removing: directory)
        guard let process else { return cleanUp() }
        send("quit")
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            process.stop(grace: 3, afterExit: cleanUp)
        }
    }

    /// What a failing expectation shows: the events, what else it printed, pjsua's log tail.
    var report: Comment {
        let printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let log = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return """
            pjsua2 peer \(options.user) on \(address); folder \(directory.path)
            --- printed ---
            \(printed.count > 6000 ? "…" + printed.suffix(6000) : printed)
            --- pjsua.log ---
            \(log.count > 8000 ? "…" + log.suffix(8000) : log)
            """
    }
}
