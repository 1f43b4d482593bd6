// The bench runner of `make bench`: a bench past its deadline is stopped with everything it
// started (the default set once hung in `BENCH sip-tls` with SIPp, stunnel and a gateway left
// running), SIGTERM to the runner stops everything, every line carries `pass=`, and the run
// ends with a summary.

import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import irisgw_bench

@Suite struct BenchRunnerTests {
    /// Running and not a zombie (an orphan's parent here may never reap it).
    static func alive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// The pids a line names after `key=`.
    static func pids(_ text: String, _ keys: [String]) -> [pid_t] {
        keys.compactMap { key in
            text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix(key + "=") }
                .flatMap { pid_t($0.dropFirst(key.count + 1)) }
        }
    }

    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func add(_ s: String) { all.withLock { $0.append(s) } }
        var text: String { all.withLock { $0.joined(separator: "\n") } }
    }

    @Test func aBenchPastItsDeadlineIsStoppedWithItsWholeGroupAndWhatLeftIt() async throws {
        let lines = Lines()
        let runner = BenchRunner(grace: 1, output: lines.add)
        // A grandchild in the group, one that leaves it (setsid), and the shell waiting on both.
        let script = """
            sleep 600 & a=$!; setsid sleep 601 & b=$!; echo "BENCH hang child=$a detached=$b"; wait
            """
        let entry = BenchEntry(name: "hang", inDefaultSet: false, deadline: 2, keyFigure: "-")
        let record = await offThePool { runner.run(entry, command: ["/bin/sh", "-c", script]) }
        let started = Self.pids(lines.text, ["child", "detached"])
        #expect(started.count == 2)
        #expect(record.outcome == .skipped)
        #expect(lines.text.contains(#"BENCH hang skipped reason="deadline 2 s""#))
        #expect(await eventually(timeout: 10) { started.allSatisfy { !Self.alive($0) } })
        for pid in started where Self.alive(pid) { kill(pid, SIGKILL) }
    }

    @Test func whatABenchLeftRunningAfterItEndedIsStopped() async throws {
        let lines = Lines()
        let runner = BenchRunner(grace: 1, output: lines.add)
        let script = #"sleep 600 >/dev/null & echo "BENCH left child=$! ratio=1 target_ratio_min=0.9""#
        let entry = BenchEntry(name: "left", inDefaultSet: false, deadline: 60, keyFigure: "ratio")
        let record = await offThePool { runner.run(entry, command: ["/bin/sh", "-c", script]) }
        let started = Self.pids(lines.text, ["child"])
        #expect(started.count == 1)
        #expect(record.outcome == .ran && record.pass == "true")
        #expect(record.figure == "ratio=1 (target_ratio_min=0.9)")
        #expect(await eventually(timeout: 10) { started.allSatisfy { !Self.alive($0) } })
        for pid in started where Self.alive(pid) { kill(pid, SIGKILL) }
    }

    @Test func sigtermToTheRunnerStopsTheBenchAndEverythingItStarted() async throws {
        let bench = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/irisgw-bench").path
        let runner = try ChildProcess(bench, ["selftest-hang"], unblockingSignals: true)
        defer { runner.stop(signal: SIGKILL) }
        #expect(await runner.waitForOutput(containing: "detached=", timeout: 60))
        let started = Self.pids(runner.output, ["child", "detached"])
        #expect(started.count == 2)
        #expect(started.allSatisfy(Self.alive))
        #expect(await runner.signal(SIGTERM, timeout: 30) == 128 + SIGTERM)
        #expect(runner.output.contains(#"BENCH selftest-hang skipped reason="runner stopped by signal 15""#))
        #expect(runner.output.contains("BENCH summary ran=0 passed=0 failed=0 skipped=1 crashed=0 seconds="))
        #expect(await eventually(timeout: 10) { started.allSatisfy { !Self.alive($0) } })
        for pid in started where Self.alive(pid) { kill(pid, SIGKILL) }
    }

    @Test func theSummaryCountsWhatRanPassedFailedAndWasSkipped() async throws {
        let lines = Lines()
        let runner = BenchRunner(grace: 1, output: lines.add)
        func entry(_ name: String, requires: [String] = []) -> BenchEntry {
            BenchEntry(name: name, inDefaultSet: true, deadline: 30, keyFigure: "ratio", requires: requires)
        }
        await offThePool {
            runner.run(entry("good"), command: ["/bin/sh", "-c", "echo 'BENCH good ratio=1.2 target_ratio_min=0.9'"])
            runner.run(entry("bad"), command: ["/bin/sh", "-c", "echo 'BENCH bad ratio=0.5 target_ratio_min=0.9'"])
            runner.run(entry("broken"), command: ["/bin/sh", "-c", "exit 3"])
            runner.run(entry("absent", requires: ["/nonexistent/tool"]), command: ["/bin/true"])
        }
        #expect(lines.text.contains("BENCH good ratio=1.2 target_ratio_min=0.9 pass=true"))
        #expect(lines.text.contains("BENCH bad ratio=0.5 target_ratio_min=0.9 pass=false"))
        #expect(lines.text.contains(#"BENCH broken crashed reason="exit status 3""#))
        #expect(lines.text.contains(#"BENCH absent skipped reason="needs /nonexistent/tool, which is not installed""#))
        #expect(runner.records.map(\.outcome) == [.ran, .ran, .crashed, .skipped])
        let cps = BenchEntry(name: "sip-calls", inDefaultSet: true, deadline: 30, keyFigure: "max_cps")
        let cpsLine = try #require(BenchLine("BENCH sip-calls max_cps=1847 target_cps_min=200 steps=9"))
        #expect(BenchRunner.figure(cps, [cpsLine]) == "max_cps=1847 (target_cps_min=200)")
        let summary = runner.summary(seconds: 12.4)
        #expect(summary[0] == "BENCH summary ran=3 passed=1 failed=2 skipped=1 crashed=1 seconds=12")
        #expect(summary.count == 2 + 4)
        let good = try #require(summary.first { $0.hasPrefix("  good ") })
        #expect(good.contains("true") && good.hasSuffix("ratio=1.2 (target_ratio_min=0.9)"))
        #expect(summary.contains { $0.hasPrefix("  absent ") && $0.contains("skipped") })
        #expect(summary.contains { $0.hasPrefix("  broken ") && $0.contains("crashed") })
    }

    @Test(arguments: [
        ("BENCH srtp calls=100 ratio=0.88 target_ratio_min=0.9", "false"),
        ("BENCH srtp-gcm ratio=0.91 target_ratio_min=0.9", "true"),
        ("BENCH sip-calls max_cps=1847 target_cps_min=200 failure_budget=0.1% steps=9", "true"),
        ("BENCH media-whole-process ratio=1.17 target_ratio_max=1.15", "false"),
        ("BENCH vs-rtpengine delay_ratio=- target_delay_ratio_max=1.0", "false"),
        ("BENCH cluster failed_during_kill=0 target_failed_during_kill=0", "true"),
        ("BENCH cluster failed_during_kill=2 target_failed_during_kill=0", "false"),
        ("BENCH amd human_accuracy=1.00 machine_accuracy=0.80 target_accuracy_min=0.90", "false"),
        ("BENCH sip-calls-step rate=100 calls=300 failed=0", "n/a")
    ])
    func aLineIsJudgedAgainstItsOwnAim(line: String, pass: String) throws {
        var parsed = try #require(BenchLine(line))
        parsed.complete(aims: [:])
        #expect(parsed.text == line + " pass=" + pass)
    }

    @Test func aLineWithoutAnAimGetsTheTablesAndAnOldSkipLineItsReason() throws {
        var media = try #require(BenchLine("BENCH media calls=100 ratio=0.74 rss_kib_per_call=136"))
        media.complete(aims: ["media": "target_ratio_min=0.85 target_rss_kib_per_call_max=256"])
        #expect(
            media.text
                == "BENCH media calls=100 ratio=0.74 rss_kib_per_call=136 target_ratio_min=0.85 target_rss_kib_per_call_max=256 pass=false"
        )
        var own = try #require(BenchLine("BENCH amd human_accuracy=1.00 target_accuracy_min=0.9 pass=true"))
        own.complete(aims: [:])
        #expect(own.text == "BENCH amd human_accuracy=1.00 target_accuracy_min=0.9 pass=true")
        let old = try #require(BenchLine(#"BENCH amd skipped="espeak-ng not found at /usr/bin/espeak-ng""#))
        #expect(old.isSkipped)
        #expect(old.text == #"BENCH amd skipped reason="espeak-ng not found at /usr/bin/espeak-ng""#)
        #expect(BenchLine("ready") == nil)
    }

    @Test func theDefaultSetLeavesTheLongBenchesToBenchArgs() throws {
        let defaults = try BenchTable.selection([]).map(\.0.name)
        #expect(
            defaults == [
                "sip-parse", "sip-calls", "media", "passthrough", "source-policy", "srtp", "passthrough-opus", "webrtc",
                "vs-rtpengine", "media-whole-process", "bridge", "transfer", "amd", "stream", "record", "sip-dns",
                "sip-tls", "sip-transactions"
            ])
        // Their deadlines add up to a bound on the run.
        #expect(try BenchTable.selection([]).map(\.0.deadline).reduce(0, +) <= 45 * 60)
        let all = try BenchTable.selection(["all"]).map(\.0.name)
        #expect(
            all.contains("cluster") && all.contains("flood") && all.contains("soak") && all.contains("media-overload"))
        #expect(!all.contains { $0.hasPrefix("selftest-") })
        let soak = try BenchTable.selection(["soak", "--minutes", "5", "flood"])
        #expect(soak.map(\.0.name) == ["soak", "flood"])
        #expect(soak[0].1 == ["--minutes", "5"] && soak[1].1.isEmpty)
        #expect(throws: BenchUnavailable.self) { try BenchTable.selection(["no-such-bench"]) }
    }
}
