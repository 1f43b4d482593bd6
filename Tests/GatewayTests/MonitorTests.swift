import CarrierTest
import Foundation
import Testing

@Suite struct MonitorTests {
    @Test(arguments: [("30s", 30.0), ("5m", 300.0), ("1h", 3600.0), ("2s", 2.0), ("90m", 5400.0), ("168h", 604_800.0)])
    func intervalsParse(_ text: String, _ seconds: Double) {
        #expect(MonitorInterval.parse(text) == seconds)
    }

    @Test(arguments: ["", "5", "s", "0s", "-1m", "1.5m", "2d", "5 m", "5M", "m5", "169h", "1e3s", "٣s", "99999999s"])
    func badIntervalsAreRefused(_ text: String) {
        #expect(MonitorInterval.parse(text) == nil)
    }

    static func result(
        _ test: String, passed: Bool, step: Int? = nil, failure: String? = nil, duration: Double = 1.5, pdd: Int? = 120
    ) -> TestCallResult {
        var object: [String: Any] = [
            "test": test, "iteration": 1, "passed": passed, "durationSec": duration, "timeline": [Any](),
            "events": [Any]()
        ]
        object["failedStep"] = step
        object["failure"] = failure
        object["postDialDelayMs"] = pdd
        return try! JSONDecoder().decode(TestCallResult.self, from: JSONSerialization.data(withJSONObject: object))
    }

    @Test func metricsFollowTheRuns() {
        let m = MonitorMetrics(suite: "smoke \"1\"")
        #expect(m.render().contains("irisgw_test_runs_total{suite=\"smoke \\\"1\\\"\"} 0"))
        m.record(
            startedAt: 1_700_000_000, durationSec: 4.5,
            results: [Self.result("echo", passed: true), Self.result("busy", passed: true, pdd: nil)])
        var text = m.render()
        let s = "suite=\"smoke \\\"1\\\"\""
        #expect(text.contains("irisgw_test_runs_total{\(s)} 1"))
        #expect(text.contains("irisgw_test_last_run_timestamp_seconds{\(s)} 1700000000"))
        #expect(text.contains("irisgw_test_last_run_duration_seconds{\(s)} 4.500"))
        #expect(
            text.contains("irisgw_test_passed{\(s),test=\"echo\"} 1")
                && text.contains("irisgw_test_passed{\(s),test=\"busy\"} 1"))
        #expect(text.contains("irisgw_test_failures_total{\(s),test=\"busy\"} 0"))
        #expect(
            text.contains("irisgw_test_post_dial_delay_ms{\(s),test=\"echo\"} 120")
                && !text.contains("post_dial_delay_ms{\(s),test=\"busy\"}"))
        #expect(!text.contains("irisgw_test_last_failure_info{"))

        let reason = "expected \"Connected\" within 2.0 s;\ngot a\\b " + String(repeating: "x", count: 300)
        m.record(
            startedAt: 1_700_000_060, durationSec: 5,
            results: [
                Self.result("echo", passed: true),
                Self.result("busy", passed: false, step: 1, failure: reason, duration: 2)
            ])
        text = m.render()
        #expect(text.contains("irisgw_test_runs_total{\(s)} 2"))
        #expect(
            text.contains("irisgw_test_passed{\(s),test=\"busy\"} 0")
                && text.contains("irisgw_test_failures_total{\(s),test=\"busy\"} 1"))
        #expect(text.contains("irisgw_test_last_failure_timestamp_seconds{\(s),test=\"busy\"} 1700000062"))
        let info = text.split(separator: "\n").first { $0.hasPrefix("irisgw_test_last_failure_info{") } ?? ""
        let escaped = MonitorMetrics.escape(String(reason.prefix(200)))
        #expect(
            info == "irisgw_test_last_failure_info{\(s),test=\"busy\",step=\"1\",reason=\"\(escaped)\"} 1", "\(info)")
        #expect(escaped.hasPrefix("expected \\\"Connected\\\" within 2.0 s;\\ngot a\\\\b xxx") && !info.contains("\n"))
        // Each family once, with HELP and TYPE.
        #expect(text.components(separatedBy: "# TYPE irisgw_test_passed gauge").count == 2)
    }

    @Test func theArchiveKeepsTheNewestRunsOnly() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-archive-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "mine".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
        try "other".write(toFile: dir + "/20200101T000000Z-other.html", atomically: true, encoding: .utf8)
        let archive = ReportArchive(directory: dir, suite: "smoke test/1", keep: 2)
        #expect(archive.fileSuite == "smoke_test_1")
        for i in 0..<3 {
            try archive.save(
                startedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 60), html: "h", json: "j", junit: "x"
            )
        }
        let runs = archive.runs()
        #expect(runs.map(\.stamp) == ["20231114T221520Z", "20231114T221420Z"])
        #expect(
            runs[0].files == [
                "20231114T221520Z-smoke_test_1.html", "20231114T221520Z-smoke_test_1.json",
                "20231114T221520Z-smoke_test_1.xml"
            ])
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(
            left.count == 8 && left.contains("notes.txt") && left.contains("20200101T000000Z-other.html"), "\(left)")
        #expect(
            archive.isReport("20231114T221520Z-smoke_test_1.json")
                && !archive.isReport("../20231114T221520Z-smoke_test_1.json"))
        #expect(!archive.isReport("notes.txt") && !archive.isReport("20231114T221520Z-smoke_test_1.sh"))
    }
}
