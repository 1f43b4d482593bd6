import Formats
import Foundation

/// What a load run does (`irisgw test --load`, or a suite file's `load` section): calls
/// started at up to `cps` per second (ramping from 1 cps over `rampSec`), at most
/// `concurrent` at once, each answered, held `holdSec` and hung up.
public struct LoadPlan: Sendable, Equatable {
    /// The numbers to dial, in turn (call 1 the first, call 2 the second, ...).
    public var targets: [String] = []
    /// The caller id. Default `+15557654321`.
    public var source = "+15557654321"
    /// Calls in progress at most. Default 10.
    public var concurrent = 10
    /// Calls started per second at most, once the ramp is over. Default 1.
    public var cps = 1.0
    /// Seconds over which the rate rises linearly from 1 cps to `cps`. Default 0 (no ramp).
    public var rampSec = 0.0
    /// Stop after this many attempts (default 100 when `durationSec` is not given)...
    public var calls: Int?
    /// ... or start calls for this many seconds.
    public var durationSec: Double?
    /// Seconds each answered call is held before we hang up. Default 5.
    public var holdSec = 5.0
    /// Every K-th call checks audio (its tone comes back through an echoing number); 0: none.
    public var audioEvery = 0
    /// A call not answered by then is cancelled (a no-answer). Default 30.
    public var answerTimeoutSec = 30.0
    /// The tone the audio-check calls send. Default 1000 Hz.
    public var toneHz = 1000.0
    /// Thresholds; a broken one makes `irisgw test --load` exit 1. None by default.
    public var minASR: Double?
    public var minNER: Double?
    /// Against the post-dial delay's p95.
    public var maxPostDialDelayMs: Int?

    public init() {}

    /// The attempts the run makes: `calls`, else 100 when no duration bounds it.
    public var callLimit: Int? { calls ?? (durationSec == nil ? 100 : nil) }

    /// The rate (calls per second) `elapsed` seconds into the run.
    public func rate(at elapsed: Double) -> Double {
        guard rampSec > 0, cps > 1, elapsed < rampSec else { return cps }
        return 1 + (cps - 1) * max(0, elapsed) / rampSec
    }

    /// The number call `index` (0-based) dials.
    public func target(of index: Int) -> String { targets[index % targets.count] }

    /// Whether call `index` (0-based) checks audio: calls K, 2K, 3K ...
    public func checksAudio(_ index: Int) -> Bool { audioEvery > 0 && (index + 1) % audioEvery == 0 }

    /// What is wrong with the plan, or nil.
    public var problem: String? {
        if targets.isEmpty { return "a load run needs a target" }
        if calls != nil && durationSec != nil { return "give the number of calls or a duration, not both" }
        return nil
    }
}

/// A suite file's `load` section (the file's `tests` may be absent):
///
/// ```json5
/// { name: "trunk load",
///   load: { target: ["+15550100001", "+15550100002"], concurrent: 20, cps: 10, rampSec: 5,
///           calls: 200, holdSec: 3, audioEvery: 10, maxPostDialDelayMs: 3000, minASR: 95 } }
/// ```
public enum LoadSuite {
    static let keys = [
        "target", "source", "concurrent", "cps", "rampSec", "calls", "durationSec", "holdSec", "audioEvery",
        "answerTimeoutSec", "toneHz", "maxPostDialDelayMs", "minASR", "minNER"
    ]

    /// The suite's name and its load plan; a bad file names the key path.
    public static func load(path: String) throws(SuiteError) -> (name: String, plan: LoadPlan) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw SuiteError(file: path, keyPath: "", message: "cannot read the file as UTF-8 text")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws(SuiteError) -> (name: String, plan: LoadPlan) {
        let json: Data
        do { json = try JSON5Document.jsonData(fromJSON5: text) } catch {
            throw SuiteError(file: file, keyPath: error.keyPath, message: error.description)
        }
        guard let root = try? JSONSerialization.jsonObject(with: json) else {
            throw SuiteError(file: file, keyPath: "", message: "not a JSON5 document")
        }
        let r = SuiteReader(file: file)
        let o = try r.object(root, "", keys: ["name", "description", "tests", "load"])
        guard let name = try r.string(o, "name", "") else { throw r.fail("name", "missing required key") }
        guard let section = o["load"] else { throw r.fail("load", "missing: --load needs a load section") }
        let l = try r.object(section, "load", keys: Set(keys))
        var plan = LoadPlan()
        switch l["target"] {
        case let s as String: plan.targets = [s]
        case let list as [Any] where !list.isEmpty && list.allSatisfy({ $0 is String }):
            plan.targets = list.compactMap { $0 as? String }
        case nil: throw r.fail("load.target", "missing required key")
        default: throw r.fail("load.target", "must be a number to dial or a non-empty list of them")
        }
        // Numbers here, not `SuiteReader.number`: on Linux an NSNumber 0 or 1 also casts to Bool.
        func number(_ key: String, _ range: ClosedRange<Double>) throws(SuiteError) -> Double? {
            guard let v = l[key] else { return nil }
            guard let n = v as? NSNumber, String(cString: n.objCType) != "c", range.contains(n.doubleValue) else {
                throw r.fail("load." + key, "must be a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return n.doubleValue
        }
        func int(_ key: String, _ range: ClosedRange<Double>) throws(SuiteError) -> Int? {
            guard let v = try number(key, range) else { return nil }
            guard v == v.rounded() else { throw r.fail("load." + key, "must be a whole number") }
            return Int(v)
        }
        if let s = try r.string(l, "source", "load") { plan.source = s }
        if let v = try int("concurrent", 1...10_000) { plan.concurrent = v }
        if let v = try number("cps", 0.01...1000) { plan.cps = v }
        if let v = try number("rampSec", 0...86_400) { plan.rampSec = v }
        plan.calls = try int("calls", 1...10_000_000)
        plan.durationSec = try number("durationSec", 1...604_800)
        if let v = try number("holdSec", 0...86_400) { plan.holdSec = v }
        if let v = try int("audioEvery", 0...10_000_000) { plan.audioEvery = v }
        if let v = try number("answerTimeoutSec", 1...600) { plan.answerTimeoutSec = v }
        if let v = try number("toneHz", 100...3500) { plan.toneHz = v }
        plan.maxPostDialDelayMs = try int("maxPostDialDelayMs", 1...600_000)
        plan.minASR = try number("minASR", 0...100)
        plan.minNER = try number("minNER", 0...100)
        if let problem = plan.problem { throw r.fail("load", problem) }
        return (name, plan)
    }
}
