import Formats
import Foundation
import Synchronization

/// How often `irisgw test --every` runs its suite: `30s`, `5m`, `1h` (a whole number, at
/// least 1 second, at most a week).
public enum MonitorInterval {
    /// Seconds, or nil for anything else (`5`, `1.5m`, `0s`, `2d`, `-1m`).
    public static func parse(_ text: String) -> Double? {
        guard let unit = text.last, let factor: Double = ["s": 1, "m": 60, "h": 3600][unit] else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            let n = Double(digits), n >= 1
        else { return nil }
        let seconds = n * factor
        return seconds <= 7 * 86_400 ? seconds : nil
    }
}

/// The Prometheus text of a monitored suite (`irisgw test --every ... --metrics`), updated
/// after each complete run. Thread-safe: the runner records, the HTTP workers render.
public final class MonitorMetrics: Sendable {
    /// What one test (all its repetitions) did in the last run, and over all runs.
    struct TestState {
        var passed = false
        var durationSec = 0.0
        var postDialDelayMs: Int?
        var answerMs: Int?
        var failures = 0
        var lastFailureAt: Double?
        var lastFailureStep = 0
        var lastFailureReason = ""
    }
    struct State {
        var runs = 0
        var lastRunAt: Double?
        var lastRunDuration = 0.0
        var lastRunPassed = false
        /// In the suite's order.
        var tests: [(name: String, state: TestState)] = []
    }

    public let suite: String
    private let state = Mutex(State())

    /// Failure reasons are cut to this many characters before escaping.
    public static let reasonLimit = 200

    public init(suite: String) { self.suite = suite }

    /// Records a complete run: started at `startedAt` (seconds since 1970), `results` of every
    /// call. A test repeated N times passed when every repetition did; its duration is the
    /// sum, its delays the last measured; its failure the first failed repetition's.
    public func record(startedAt: Double, durationSec: Double, results: [TestCallResult]) {
        state.withLock { s in
            s.runs += 1
            s.lastRunAt = startedAt
            s.lastRunDuration = durationSec
            s.lastRunPassed = results.allSatisfy(\.passed)
            var order: [String] = []
            var byTest: [String: [TestCallResult]] = [:]
            for r in results {
                if byTest[r.test] == nil { order.append(r.test) }
                byTest[r.test, default: []].append(r)
            }
            for name in order {
                let rs = byTest[name]!
                var t = s.tests.first { $0.name == name }?.state ?? TestState()
                t.passed = rs.allSatisfy(\.passed)
                t.durationSec = rs.reduce(0) { $0 + $1.durationSec }
                t.postDialDelayMs = rs.compactMap(\.postDialDelayMs).last
                t.answerMs = rs.compactMap(\.answerMs).last
                if let f = rs.first(where: { !$0.passed }) {
                    t.failures += 1
                    t.lastFailureAt = startedAt + f.durationSec
                    t.lastFailureStep = f.failedStep ?? 0
                    t.lastFailureReason = f.failure ?? ""
                }
                if let i = s.tests.firstIndex(where: { $0.name == name }) {
                    s.tests[i].state = t
                } else {
                    s.tests.append((name, t))
                }
            }
        }
    }

    public var runs: Int { state.withLock { $0.runs } }

    /// The exposition (text format 0.0.4).
    public func render() -> String {
        let s = state.withLock { $0 }
        let suiteLabel = "suite=\"\(Self.escape(suite))\""
        func labels(_ test: String) -> String { "{\(suiteLabel),test=\"\(Self.escape(test))\"}" }
        func num(_ v: Double) -> String {
            v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(format: "%.3f", v)
        }
        var out = PrometheusText()
        out.metric(
            "irisgw_test_runs_total", "counter", "Complete runs of the suite.", [("{\(suiteLabel)}", String(s.runs))])
        if let at = s.lastRunAt {
            out.metric(
                "irisgw_test_last_run_timestamp_seconds", "gauge", "When the last complete run started (Unix time).",
                [("{\(suiteLabel)}", num(at))])
            out.metric(
                "irisgw_test_last_run_duration_seconds", "gauge", "How long the last complete run took.",
                [("{\(suiteLabel)}", num(s.lastRunDuration))])
            out.metric(
                "irisgw_test_last_run_passed", "gauge", "1 when every test of the last run passed, else 0.",
                [("{\(suiteLabel)}", s.lastRunPassed ? "1" : "0")])
        }
        out.metric(
            "irisgw_test_passed", "gauge", "1 when the test passed in the last run (every repetition), else 0.",
            s.tests.map { (labels($0.name), $0.state.passed ? "1" : "0") })
        out.metric(
            "irisgw_test_duration_seconds", "gauge", "The test's calls' duration in the last run (repetitions summed).",
            s.tests.map { (labels($0.name), num($0.state.durationSec)) })
        out.metric(
            "irisgw_test_failures_total", "counter", "Runs in which the test failed.",
            s.tests.map { (labels($0.name), String($0.state.failures)) })
        out.metric(
            "irisgw_test_last_failure_timestamp_seconds", "gauge", "When the test last failed (Unix time).",
            s.tests.compactMap { t in t.state.lastFailureAt.map { (labels(t.name), num($0)) } })
        out.metric(
            "irisgw_test_last_failure_info", "gauge",
            "The test's last failure: its step (1-based) and reason, as labels.",
            s.tests.compactMap { t in
                guard t.state.lastFailureAt != nil else { return nil }
                let reason = Self.escape(String(t.state.lastFailureReason.prefix(Self.reasonLimit)))
                return (
                    "{\(suiteLabel),test=\"\(Self.escape(t.name))\",step=\"\(t.state.lastFailureStep)\",reason=\"\(reason)\"}",
                    "1"
                )
            })
        out.metric(
            "irisgw_test_post_dial_delay_ms", "gauge", "INVITE to the first 18x in the test's last run (milliseconds).",
            s.tests.compactMap { t in t.state.postDialDelayMs.map { (labels(t.name), String($0)) } })
        out.metric(
            "irisgw_test_answer_ms", "gauge", "INVITE to the answer in the test's last run (milliseconds).",
            s.tests.compactMap { t in t.state.answerMs.map { (labels(t.name), String($0)) } })
        return out.text
    }

    /// A label value as the exposition format wants it: backslash, double quote and line
    /// feed escaped.
    public static func escape(_ value: String) -> String {
        var out = ""
        for ch in value {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }
}
