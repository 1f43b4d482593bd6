import Formats
import Foundation
import IrisAPI

/// A carrier test suite (JSON5, `sip-profiles/suites/*.json5`): test calls through a trunk,
/// each a list of steps. See docs/carrier-testing.md for the schema.
///
/// ```json5
/// { name: "basic",
///   tests: [
///     { name: "answers and echoes", target: "+15550100001", repeat: 2,
///       steps: [ { expect: "Connected", withinSec: 10 }, { expectEcho: 1000 }, { hangup: true },
///                { expectEnd: "completed" } ] },
///   ] }
/// ```
public struct TestSuite: Sendable, Equatable {
    public var name: String
    public var tests: [TestCase]
    /// Keep each call's capture and recordings in this folder (`evidence: "DIR"`; the
    /// `--evidence` option wins). Relative to the current directory. Default none.
    public var evidence: String?

    public init(name: String, tests: [TestCase], evidence: String? = nil) {
        self.name = name
        self.tests = tests
        self.evidence = evidence
    }

    /// Loads a suite; a bad file is an error naming the file and the key path.
    public static func load(path: String) throws(SuiteError) -> TestSuite {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw SuiteError(file: path, keyPath: "", message: "cannot read the file as UTF-8 text")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws(SuiteError) -> TestSuite {
        let json: Data
        do { json = try JSON5Document.jsonData(fromJSON5: text) } catch {
            throw SuiteError(file: file, keyPath: error.keyPath, message: error.description)
        }
        guard let root = try? JSONSerialization.jsonObject(with: json) else {
            throw SuiteError(file: file, keyPath: "", message: "not a JSON5 document")
        }
        return try SuiteReader(file: file).suite(root)
    }
}

/// One test call, repeated `repeat` times.
public struct TestCase: Sendable, Equatable {
    public var name: String
    /// The number to dial.
    public var target: String
    /// The caller id. Default `+15557654321`.
    public var source: String
    /// Times to run the call. Default 1.
    public var repeatCount: Int
    /// The tone (Hz) the test client sends. Default 1000.
    public var toneHz: Double
    public var steps: [TestStep]
    /// The longest post-dial delay (the call's start to the first 18x, or the answer when
    /// none came), ms; checked when it arrives. nil: no limit.
    public var maxPostDialDelayMs: Double?
    /// The longest time from the call's start to the answer, ms. nil: no limit.
    public var maxAnswerMs: Double?
    /// Answering-machine detection asked of the gateway (`amd: "detect" | "detectBeep"`).
    /// Default none.
    public var amd: AMDOptions?
    /// Record the call (`recording: { channels, format }`). Default none (the profile decides).
    public var recording: RecordingOptions?
    /// The test client sends silence instead of its tone (`silent: true`): an echoing number
    /// then answers with a quiet line, which answering-machine detection judges. Default false.
    public var silent: Bool

    public init(
        name: String, target: String, source: String = "+15557654321", repeatCount: Int = 1, toneHz: Double = 1000,
        steps: [TestStep], maxPostDialDelayMs: Double? = nil, maxAnswerMs: Double? = nil, amd: AMDOptions? = nil,
        recording: RecordingOptions? = nil, silent: Bool = false
    ) {
        self.name = name
        self.target = target
        self.source = source
        self.repeatCount = repeatCount
        self.toneHz = toneHz
        self.steps = steps
        self.maxPostDialDelayMs = maxPostDialDelayMs
        self.maxAnswerMs = maxAnswerMs
        self.amd = amd
        self.recording = recording
        self.silent = silent
    }
}

/// What a step does or expects. `within` is in seconds.
public enum TestStep: Sendable, Equatable {
    /// A status event (`Connecting`, `Connected`, `Hold`, `Disconnected`), optionally with early media.
    case expectStatus(SessionStatus, earlyMedia: Bool?, within: Double)
    /// `onSessionEarlyMedia`, and carrier audio reaching the app before the answer.
    case expectEarlyMedia(within: Double)
    case wait(Double)
    case sendDTMF(String)
    /// Digits from the carrier (`onSessionDTMF`), in order.
    case expectDTMF(String, within: Double)
    /// The client's tone comes back (an echoing number): two-way audio.
    case expectEcho(hz: Double, within: Double)
    /// Audio of any kind from the carrier.
    case expectAudio(within: Double)
    case hold(within: Double)
    case unhold(within: Double)
    case hangup
    /// The end: reason, and optionally the SIP code and Q.850 cause; `causeFits`: the cause
    /// must fit the SIP code (`Q850.fits`).
    case expectEnd(EndReason, sipCode: Int?, cause: Int?, causeFits: Bool, within: Double)
    /// The call stays connected for this many seconds (the carrier must not end it).
    case expectUp(Double)
    /// A stretch of audio measured (level, SNR, tones, clipping, gaps, delay, trunk loss
    /// and jitter) and judged against thresholds.
    case audioQuality(AudioQualityStep)
    /// A blind transfer of the call to this number (the control API's `transfer`).
    case transfer(targetTN: String)
    /// An `onSessionTransfer` with this state (and SIP code), after the one the previous
    /// `expectTransfer` matched.
    case expectTransfer(TransferState, sipCode: Int?, within: Double)
    /// The answering-machine detection verdict (`onSessionAMD`), and with `beep` an
    /// `onSessionBeep` that found the greeting's tone.
    case expectAMD(AMDStep)
    /// A fork of the call's audio to the suite's own WebSocket server: Twilio's `connected`
    /// and `start`, then enough `media` (with the tone), then the fork stopped.
    case stream(StreamStep)
    /// The call's recording (`GET .../recording`): its channels and length.
    case expectRecording(RecordingStep)
}

extension TestStep: CustomStringConvertible {
    /// The step as the progress lines name it.
    public var description: String {
        switch self {
        case .expectStatus(let s, let early, _):
            "expect \(s.rawValue)"
                + (early == true ? " with early media" : early == false ? " without early media" : "")
        case .expectEarlyMedia: "expect early media"
        case .wait(let s): "wait \(s) s"
        case .sendDTMF(let d): "send DTMF \(d)"
        case .expectDTMF(let d, _): "expect DTMF \(d)"
        case .expectEcho(let hz, _): "expect the \(Int(hz)) Hz echo"
        case .expectAudio: "expect audio"
        case .hold: "hold"
        case .unhold: "unhold"
        case .hangup: "hang up"
        case .expectEnd(let r, let code, let cause, let fits, _):
            "expect the end \(r.rawValue)" + (code.map { " \($0)" } ?? "") + (cause.map { " cause \($0)" } ?? "")
                + (fits ? " with a fitting cause" : "")
        case .expectUp(let s): "expect the call up for \(s) s"
        case .audioQuality(let q):
            "audio quality (\(q.mode.rawValue)\(q.tones.isEmpty ? "" : ", " + q.tones.map { String(Int($0)) }.joined(separator: "/") + " Hz"), \(q.durationSec) s)"
        case .transfer(let target): "transfer to \(target)"
        case .expectTransfer(let state, let code, _):
            "expect transfer \(state.rawValue)" + (code.map { " \($0)" } ?? "")
        case .expectAMD(let a): "expect AMD \(a.result.rawValue)" + (a.beep ? " and a beep" : "")
        case .stream(let s):
            "stream \(s.track.rawValue) to the suite's WebSocket"
                + (s.toneHz.map { String(format: " with the %.0f Hz tone", $0) } ?? "")
        case .expectRecording(let r):
            "expect a recording"
                + [r.channels.map { " of \($0) channel\($0 == 1 ? "" : "s")" }, r.format.map { " in \($0)" }]
                .compactMap { $0 }.joined() + (r.minDurationSec > 0 ? " at least \(r.minDurationSec) s long" : "")
        }
    }
}

/// A broken suite file: the file, the key path and what is wrong.
public struct SuiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var keyPath: String
    public var message: String
    public var description: String { keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)" }
}

/// Reads the decoded JSON tree against the schema, naming the key path of every error.
struct SuiteReader {
    let file: String

    func fail(_ path: String, _ message: String) -> SuiteError {
        SuiteError(file: file, keyPath: path, message: message)
    }

    func object(_ v: Any, _ path: String, keys: Set<String>) throws(SuiteError) -> [String: Any] {
        guard let o = v as? [String: Any] else { throw fail(path, "must be an object") }
        if let unknown = o.keys.sorted().first(where: { !keys.contains($0) }) {
            throw fail(
                path.isEmpty ? unknown : path + "." + unknown,
                "unknown key (allowed: \(keys.sorted().joined(separator: ", ")))")
        }
        return o
    }

    func string(_ o: [String: Any], _ key: String, _ path: String) throws(SuiteError) -> String? {
        guard let v = o[key] else { return nil }
        guard let s = v as? String else { throw fail(join(path, key), "must be a string") }
        return s
    }

    func number(
        _ o: [String: Any], _ key: String, _ path: String, in range: ClosedRange<Double>
    ) throws(SuiteError) -> Double? {
        guard let v = o[key] else { return nil }
        guard let n = v as? NSNumber, !Self.isBoolean(v), range.contains(n.doubleValue) else {
            throw fail(join(path, key), "must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n.doubleValue
    }

    /// JSON `true`/`false`. Not `v is Bool`: on Linux the numbers 0 and 1 cast to Bool too.
    static func isBoolean(_ v: Any) -> Bool {
        guard let n = v as? NSNumber else { return false }
        return String(cString: n.objCType) == "c"
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func suite(_ root: Any) throws(SuiteError) -> TestSuite {
        let o = try object(root, "", keys: ["name", "description", "tests", "load", "evidence"])  // `load`: LoadSuite
        guard let name = try string(o, "name", "") else { throw fail("name", "missing required key") }
        guard let list = o["tests"] as? [Any], !list.isEmpty else { throw fail("tests", "must be a non-empty array") }
        var tests: [TestCase] = []
        for (i, t) in list.enumerated() { tests.append(try testCase(t, "tests[\(i)]")) }
        let evidence = try string(o, "evidence", "")
        if evidence?.isEmpty == true { throw fail("evidence", "must name a folder") }
        return TestSuite(name: name, tests: tests, evidence: evidence)
    }

    func testCase(_ v: Any, _ path: String) throws(SuiteError) -> TestCase {
        let o = try object(
            v, path,
            keys: [
                "name", "target", "source", "repeat", "toneHz", "steps", "maxPostDialDelayMs", "maxAnswerMs", "amd",
                "recording", "silent"
            ])
        guard let name = try string(o, "name", path) else { throw fail(join(path, "name"), "missing required key") }
        guard let target = try string(o, "target", path) else {
            throw fail(join(path, "target"), "missing required key")
        }
        guard let list = o["steps"] as? [Any], !list.isEmpty else {
            throw fail(join(path, "steps"), "must be a non-empty array")
        }
        var steps: [TestStep] = []
        for (i, s) in list.enumerated() { steps.append(try step(s, join(path, "steps[\(i)]"))) }
        let services = try mediaServices(o, path, steps: steps)
        return TestCase(
            name: name, target: target, source: try string(o, "source", path) ?? "+15557654321",
            repeatCount: Int(try number(o, "repeat", path, in: 1...1000) ?? 1),
            toneHz: try number(o, "toneHz", path, in: 100...3500) ?? 1000, steps: steps,
            maxPostDialDelayMs: try number(o, "maxPostDialDelayMs", path, in: 1...600_000),
            maxAnswerMs: try number(o, "maxAnswerMs", path, in: 1...600_000), amd: services.amd,
            recording: services.recording, silent: services.silent)
    }

    static let actions = [
        "expect", "expectEarlyMedia", "wait", "sendDTMF", "expectDTMF", "expectEcho", "expectAudio",
        "hold", "unhold", "hangup", "expectEnd", "expectUp", "audioQuality", "transfer", "expectTransfer",
        "expectAMD", "stream", "expectRecording"
    ]

    func step(_ v: Any, _ path: String) throws(SuiteError) -> TestStep {
        // The audio figures belong to `audioQuality` alone; on other steps they are unknown keys.
        let audio = (v as? [String: Any])?["audioQuality"] != nil
        let amd = (v as? [String: Any])?["expectAMD"] != nil
        let o = try object(
            v, path,
            keys: Set(
                Self.actions + ["withinSec", "earlyMedia", "sipCode", "cause", "causeFits"]
                    + (audio ? Self.audioKeys : []) + (amd ? ["beep"] : [])))
        let present = Self.actions.filter { o[$0] != nil }
        guard present.count == 1, let action = present.first else {
            throw fail(path, "needs exactly one of \(Self.actions.joined(separator: ", "))")
        }
        let within = try number(o, "withinSec", path, in: 0.1...600) ?? 10
        switch action {
        case "expect":
            let s = try string(o, "expect", path) ?? ""
            guard let status = SessionStatus(rawValue: s) else {
                throw fail(join(path, "expect"), "must be Initializing, Connecting, Connected, Hold or Disconnected")
            }
            if let e = o["earlyMedia"], !Self.isBoolean(e) {
                throw fail(join(path, "earlyMedia"), "must be true or false")
            }
            return .expectStatus(status, earlyMedia: o["earlyMedia"] as? Bool, within: within)
        case "expectEarlyMedia": return .expectEarlyMedia(within: within)
        case "wait": return .wait(try number(o, "wait", path, in: 0...600) ?? 0)
        case "sendDTMF", "expectDTMF":
            let d = try string(o, action, path) ?? ""
            guard !d.isEmpty, d.allSatisfy({ "0123456789*#ABCD".contains($0) }) else {
                throw fail(join(path, action), "must be digits 0-9 * # A-D")
            }
            return action == "sendDTMF" ? .sendDTMF(d) : .expectDTMF(d, within: within)
        case "expectEcho":
            return .expectEcho(hz: try number(o, "expectEcho", path, in: 100...3500) ?? 1000, within: within)
        case "expectAudio": return .expectAudio(within: within)
        case "hold": return .hold(within: within)
        case "unhold": return .unhold(within: within)
        case "hangup": return .hangup
        case "audioQuality": return try audioQuality(o, path, within: within)
        case "expectUp": return .expectUp(try number(o, "expectUp", path, in: 0.1...3600) ?? 0)
        case "transfer": return try transfer(o["transfer"] as Any, join(path, "transfer"))
        case "expectAMD": return try expectAMD(o, path, within: within)
        case "stream":
            return try stream(o["stream"] as Any, join(path, "stream"), within: o["withinSec"] != nil ? within : nil)
        case "expectRecording":
            return try expectRecording(o["expectRecording"] as Any, join(path, "expectRecording"), within: within)
        case "expectTransfer":
            let s = try string(o, "expectTransfer", path) ?? ""
            guard let state = TransferState(rawValue: s) else {
                throw fail(
                    join(path, "expectTransfer"),
                    "must be one of " + TransferState.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return .expectTransfer(
                state, sipCode: (try number(o, "sipCode", path, in: 100...699)).map { Int($0) }, within: within)
        default:
            let r = try string(o, "expectEnd", path) ?? ""
            guard let reason = EndReason(rawValue: r) else {
                throw fail(
                    join(path, "expectEnd"),
                    "must be one of " + EndReason.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if let f = o["causeFits"], !Self.isBoolean(f) {
                throw fail(join(path, "causeFits"), "must be true or false")
            }
            return .expectEnd(
                reason, sipCode: (try number(o, "sipCode", path, in: 100...699)).map { Int($0) },
                cause: (try number(o, "cause", path, in: 0...127)).map { Int($0) },
                causeFits: o["causeFits"] as? Bool ?? false, within: within)
        }
    }

    /// `transfer: { targetTN: "+1..." }`. Blind only: an attended transfer names a second
    /// call, and a suite's test places one.
    func transfer(_ v: Any, _ path: String) throws(SuiteError) -> TestStep {
        let o = try object(v, path, keys: ["targetTN", "replacesRoomId"])
        if o["replacesRoomId"] != nil {
            throw fail(
                join(path, "replacesRoomId"),
                "an attended transfer needs a second call and a suite's test places one: use targetTN")
        }
        guard let target = try string(o, "targetTN", path) else {
            throw fail(join(path, "targetTN"), "missing required key")
        }
        guard !target.isEmpty else { throw fail(join(path, "targetTN"), "must be a number to transfer to") }
        return .transfer(targetTN: target)
    }
}
