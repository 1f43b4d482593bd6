import Foundation
import Glibc

/// The Python voice agent of these tests (`Peers/media_agent.py`, PyPI `websockets` in the
/// venv `make deps` makes at `.build/pyenv`), a Twilio Media Streams server on 127.0.0.1 on
/// a port the OS picks, plain (`ws://`) or with a certificate (`wss://`). What it does for a
/// stream is chosen by the stream's customParameters["mode"] (the script's docstring lists
/// them). It prints one JSON object a line (`events`), which tests wait on. `stop()` (in a
/// `defer`) ends it.
public final class MediaAgent: @unchecked Sendable {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Peers/media_agent.py").path

    /// The venv's interpreter with the `websockets` package in it (`make deps` installs both).
    public static var isInstalled: Bool { PythonVenv.has("websockets") }

    /// One line the script printed; which fields are set depends on `event`.
    public struct Event: Decodable, Sendable, CustomStringConvertible {
        public var event: String
        public var port: Int?
        public var path: String?
        public var authorization: String?
        public var seq: String?
        public var streamSid: String?
        public var callSid: String?
        public var accountSid: String?
        public var tracks: [String]?
        public var mediaFormat: [String: AnyValue]?
        public var customParameters: [String: String]?
        public var track: String?
        public var chunk: String?
        public var timestamp: String?
        public var bytes: Int?
        public var head: String?
        public var name: String?
        public var digit: String?
        public var code: Int?
        public var `protocol`: String?
        public var version: String?
        /// `tone` mode: whether an inbound frame held the agent's own tone (700 Hz).
        public var tone: Bool?

        public var description: String {
            [event, seq, name, digit, chunk.map { "chunk \($0)" }].compactMap { $0 }.joined(separator: " ")
        }
    }

    /// A JSON scalar of the media format (a string or a number).
    public enum AnyValue: Decodable, Sendable, Equatable {
        case string(String)
        case number(Int)

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) { self = .number(n) } else { self = .string(try c.decode(String.self)) }
        }
    }

    public let process: ChildProcess
    public let port: Int
    public let secure: Bool

    /// Starts the agent (over TLS with `certificate`) and waits for its port.
    public init(certificate: TestPKI.Issued? = nil) async throws {
        var arguments = ["-u", Self.script]
        if let certificate { arguments += ["--cert", certificate.certificate, "--key", certificate.key] }
        secure = certificate != nil
        let process = try ChildProcess(PythonVenv.python, arguments, unblockingSignals: true)
        self.process = process
        var ready: Event?
        _ = await eventually(timeout: 10) {
            ready = Self.events(in: process.output).first { $0.event == "ready" }
            return ready != nil || !process.isRunning
        }
        guard let port = ready?.port else {
            let output = process.output
            process.stop()
            throw ChildProcess.Failure("the media agent did not start: \(output)")
        }
        self.port = port
    }

    /// `ws://127.0.0.1:PORT/path` (or `wss://`).
    public func url(_ path: String = "/stream") -> String { "\(secure ? "wss" : "ws")://127.0.0.1:\(port)\(path)" }

    /// Every event printed so far, oldest first.
    public var events: [Event] { Self.events(in: process.output) }

    private static func events(in text: String) -> [Event] { PythonVenv.events(Event.self, in: text) }

    /// The events named `name`, once `count` of them were printed (all of them after `timeout`).
    public func waitFor(_ name: String, count: Int = 1, timeout: Double = 10) async -> [Event] {
        _ = await eventually(timeout: timeout) { events.filter { $0.event == name }.count >= count }
        return events.filter { $0.event == name }
    }

    /// Kills it at once (SIGKILL): the stream's socket drops without a close frame.
    public func kill() async { await process.stopped(signal: SIGKILL, grace: 5) }

    public func stop() { process.stop() }

    /// What a failing expectation shows.
    public var report: String { "media agent on \(port):\n\(process.output.suffix(6000))" }
}
