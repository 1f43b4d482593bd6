import CarrierTest
import Foundation
import Glibc
import Testing

extension GatewaySuites {
    /// `irisgw test --load`, the real binary, through a real gateway to the built-in carrier
    /// simulator (its delays scaled by 0.1: the echo number answers after about 0.1 s).
    @Suite struct LoadModeTests {
        struct Report: Decodable { var kind: String; var passed: Bool; var result: LoadResult }

        static func report(_ path: String) throws -> Report {
            try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        }

        @Test(.timeLimit(.minutes(4)))
        func aLoadRunAgainstTheSimulatorReportsEveryFigure() async throws {
            let sim = try await CarrierSimProcess(arguments: ["--time-scale", "0.1"])
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let dir = gw.directory
            let json = dir.appendingPathComponent("load.json").path, html = dir.appendingPathComponent("load.html").path
            let junit = dir.appendingPathComponent("load.xml").path
            let r = try await GatewaySuites.GatewayCLITests.run(
                [
                    "test", "--load", "--profile", "trunk", "--target", "+15550100001", "--concurrent", "20", "--cps",
                    "10", "--calls", "40",
                    "--hold-sec", "1", "--audio-every", "10", "--min-asr", "100", "--api", gw.apiURL, "--data-dir",
                    gw.dataDir,
                    "--json", json, "--html", html, "--junit", junit
                ], timeout: 150)
            let printed = r.lines.joined(separator: "\n")
            #expect(r.status == 0, "\(printed)\n\(sim.lines.suffix(10).joined(separator: "\n"))")
            let summary = try #require(r.lines.first { $0.hasPrefix("load: ") }, "\(printed)")
            #expect(
                summary.hasPrefix("load: 40 attempts, 40 answered, ASR 100.0 %, NER 100.0 %, PDD p50/p95/p99 "),
                "\(summary)")
            #expect(summary.contains(", audio 4/4, gateway load peak ") && !summary.hasSuffix("unknown"), "\(summary)")
            #expect(r.lines.contains { $0.hasPrefix("gateway media load peaked at ") }, "\(printed)")

            let report = try Self.report(json)
            let s = report.result.summary, calls = report.result.calls
            #expect(report.kind == "load" && report.passed)
            #expect(
                s.attempts == 40 && s.answered == 40 && s.asrPercent == 100 && s.nerPercent == 100 && calls.count == 40)
            #expect(s.failuresBySIPCode.isEmpty && s.dropped == 0 && s.broken.isEmpty, "\(s)")
            #expect(s.audioChecksRun == 4 && s.audioChecksPassed == 4, "\(s)")
            #expect(s.peakConcurrent >= 1 && s.peakConcurrent <= 20, "\(s.peakConcurrent)")
            // The percentiles are ordered and are what the calls' own figures give.
            let pdd = try #require(s.postDialDelay), answer = try #require(s.answer)
            #expect(pdd.count == 40 && pdd.p50 <= pdd.p95 && pdd.p95 <= pdd.p99 && pdd.p99 <= pdd.max, "\(pdd)")
            #expect(answer.count == 40 && answer.p50 <= answer.p95 && answer.p95 <= answer.p99, "\(answer)")
            let pdds = calls.compactMap(\.postDialDelayMs).sorted(), answers = calls.compactMap(\.answerMs).sorted()
            #expect([pdd.p50, pdd.p95, pdd.p99] == [50.0, 95, 99].map { LoadStatistics.percentile(sorted: pdds, $0)! })
            #expect(
                [answer.p50, answer.p95, answer.p99]
                    == [50.0, 95, 99].map { LoadStatistics.percentile(sorted: answers, $0)! })
            #expect(summary.contains("PDD p50/p95/p99 \(pdd.p50)/\(pdd.p95)/\(pdd.p99) ms"), "\(summary)")
            #expect(
                calls.allSatisfy { ($0.answerMs ?? -1) >= ($0.postDialDelayMs ?? Int.max) && $0.endSec > $0.startSec })
            // The gateway's own load, read from its /metrics during the run.
            #expect(!report.result.gateway.isEmpty && s.gatewayMediaLoadPeakPercent != nil, "\(report.result.gateway)")
            #expect(s.gatewayCPUPeakPercent != nil && (s.gatewayResidentPeakBytes ?? 0) > 1_000_000)
            #expect(s.gatewayVerdict.hasPrefix("gateway media load peaked at "), "\(s.gatewayVerdict)")

            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            #expect(
                xml.contains("<testsuites tests=\"3\" failures=\"0\"") && xml.contains("name=\"ASR &gt;= 100.0 %\""),
                "\(xml)")
            let page = try String(contentsOfFile: html, encoding: .utf8)
            #expect(
                page.components(separatedBy: "<svg").count == 6 && page.contains("<polyline")
                    && page.contains("<circle"))
            #expect(!page.contains("http://") && !page.contains("https://"), "self-contained HTML")

            // The page as a browser draws it: five plots with marks in them, not a blank page.
            guard Chromium.isAvailable else { return }
            let chromium = try await Chromium()
            defer { chromium.stop() }
            let tab = try await chromium.open(URL(fileURLWithPath: html).absoluteString)
            let marks =
                try tab.evaluate(
                    "Array.from(document.querySelectorAll('figure svg')).map(s => s.querySelectorAll('polyline, circle, rect').length)"
                ) as? [Any]
            #expect(
                marks?.count == 5 && marks?.allSatisfy { (($0 as? NSNumber)?.intValue ?? 0) > 1 } == true,
                "\(marks ?? [])")
            try tab.call(
                "Emulation.setDeviceMetricsOverride",
                ["width": 800, "height": 1400, "deviceScaleFactor": 1, "mobile": false])
            let png = try tab.screenshot(to: TestArtifacts.directory.appendingPathComponent("load-report.png"))
            let (coverage, colours) = try tab.inkCoverage(png: png)
            try await tab.navigate("about:blank")
            let blank = try tab.inkCoverage(
                png: try tab.screenshot(to: TestArtifacts.directory.appendingPathComponent("load-blank.png")))
            #expect(
                coverage > 0.03 && colours > 16 && colours > blank.colours * 8,
                "coverage \(coverage), \(colours) colours; blank \(blank)")
            #expect(tab.consoleErrors.isEmpty, "\(tab.consoleErrors)")
        }

        /// A suite's load section with two targets in turn, the echo number and the busy one:
        /// half answered, the other half 486 with cause 17, NER still 100 %. A threshold given
        /// on the command line wins over the file's and breaks: exit 1.
        @Test(.timeLimit(.minutes(3)))
        func aMixedRunCountsBusyAsFailuresByCodeAndCause() async throws {
            let sim = try await CarrierSimProcess(arguments: ["--time-scale", "0.1"])
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let suite = gw.directory.appendingPathComponent("mixed.json5").path
            try """
            { name: "mixed",
              load: { target: ["+15550100001", "+15550100002"], concurrent: 10, cps: 10, calls: 10, holdSec: 0.5, minASR: 40 } }
            """.write(toFile: suite, atomically: true, encoding: .utf8)
            let json = gw.directory.appendingPathComponent("mixed.json").path
            let r = try await GatewaySuites.GatewayCLITests.run(
                [
                    "test", "--suite", suite, "--load", "--profile", "trunk", "--api", gw.apiURL,
                    "--data-dir", gw.dataDir, "--json", json
                ], timeout: 90)
            #expect(r.status == 0, "\(r.lines.joined(separator: "\n"))")
            #expect(
                r.lines.contains { $0.hasPrefix("load: 10 attempts, 5 answered, ASR 50.0 %, NER 100.0 %") },
                "\(r.lines)")
            let s = try Self.report(json).result.summary
            #expect(s.failuresBySIPCode == ["486": 5] && s.failuresByCause == ["17": 5], "\(s)")
            #expect(s.asrPercent == 50 && s.nerPercent == 100 && s.postDialDelay?.count == 5)
            let calls = try Self.report(json).result.calls
            #expect(
                calls.filter { $0.target == "+15550100002" }.allSatisfy {
                    !$0.answered && $0.sipCode == 486 && $0.endReason == "busy"
                })

            let strict = try await GatewaySuites.GatewayCLITests.run(
                [
                    "test", "--suite", suite, "--load", "--profile", "trunk", "--calls", "4",
                    "--min-asr", "90", "--api", gw.apiURL, "--data-dir", gw.dataDir
                ], timeout: 60)
            #expect(strict.status == 1, "\(strict.lines)")
            #expect(strict.lines.contains("✘ ASR 50.0 % is below the minimum 90.0 %"), "\(strict.lines)")
        }

        @Test func badLoadOptionsAreUsageErrors() async throws {
            for args in [
                ["--load", "--profile", "p"], ["--load", "--profile", "p", "--target", "1", "--cps", "0"],
                ["--load", "--profile", "p", "--target", "1", "--calls", "5", "--duration-sec", "10"]
            ] {
                let r = try await GatewaySuites.GatewayCLITests.run(["test"] + args + ["--data-dir", "/nonexistent"])
                #expect(r.status == 2, "\(args): \(r.lines)")
            }
        }
    }
}
