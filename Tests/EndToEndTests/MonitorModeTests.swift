import CarrierTest
import Foundation
import Glibc
import TestSupport
import Testing
import WebClient

extension GatewaySuites {
    /// `irisgw test --every`, the real binary, through a real gateway to the built-in carrier
    /// simulator: runs again and again, Prometheus metrics on a port from the OS, the last N
    /// runs' reports kept, and SIGTERM ends it with status 0.
    @Suite struct MonitorModeTests {
        static let suite = """
            { name: "watch",
              tests: [
                { name: "echo", target: "+15550100001",
                  steps: [ { expect: "Connected", withinSec: 10 }, { expectEcho: 1000, withinSec: 5 }, { hangup: true },
                           { expectEnd: "completed" } ] },
                { name: "busy expects an answer", target: "+15550100002",
                  steps: [ { expect: "Connected", withinSec: 2 } ] },
              ] }
            """

        /// `/metrics` as series (name with labels) to value.
        static func scrape(_ client: HTTPClient) async -> [String: Double]? {
            guard let r = try? await client.request(method: "GET", path: "/metrics", timeout: 5), r.status == 200 else {
                return nil
            }
            var out: [String: Double] = [:]
            for line in String(decoding: r.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else {
                    continue
                }
                out[String(line[..<space])] = v
            }
            return out
        }

        @Test(.timeLimit(.minutes(4)))
        func runsAgainAndAgainServesMetricsKeepsReportsAndStopsOnSIGTERM() async throws {
            let sim = try await CarrierSimProcess(arguments: ["--time-scale", "0.1"])
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let suitePath = gw.directory.appendingPathComponent("watch.json5").path
            try Self.suite.write(toFile: suitePath, atomically: true, encoding: .utf8)
            let reports = gw.directory.appendingPathComponent("reports").path
            let p = try GatewaySuites.GatewayCLITests.launch(
                [
                    "test", "--profile", "trunk", "--suite", suitePath, "--every", "2s", "--metrics", "127.0.0.1:0",
                    "--reports", reports,
                    "--keep", "2", "--api", gw.apiURL, "--data-dir", gw.dataDir
                ], mergeErrors: true)
            defer { p.stop(signal: SIGKILL) }
            let lines = await lines(of: p, until: "\u{0}", timeout: 15) { $0.hasPrefix("metrics on http://") }
            let announced = try #require(lines.first { $0.hasPrefix("metrics on http://") }, "\(lines)")
            let url = String(announced.dropFirst("metrics on ".count).dropLast("/metrics".count))
            #expect(url.hasPrefix("http://127.0.0.1:") && !url.hasSuffix(":0"), "\(url)")
            let client = try HTTPClient(baseURL: url)

            let s = "suite=\"watch\"", echo = "{suite=\"watch\",test=\"echo\"}",
                busy = "{suite=\"watch\",test=\"busy expects an answer\"}"
            var first: [String: Double] = [:], latest: [String: Double] = [:]
            let two = await eventually(timeout: 90) {
                guard let m = await Self.scrape(client) else { return false }
                if first.isEmpty, (m["irisgw_test_runs_total{\(s)}"] ?? 0) >= 1 { first = m }
                latest = m
                return (m["irisgw_test_runs_total{\(s)}"] ?? 0) >= 3
            }
            #expect(two, "\(latest)")
            #expect(latest["irisgw_test_passed\(echo)"] == 1 && latest["irisgw_test_passed\(busy)"] == 0, "\(latest)")
            #expect(
                (latest["irisgw_test_duration_seconds\(echo)"] ?? 0) > 0
                    && (latest["irisgw_test_duration_seconds\(busy)"] ?? 0) > 0)
            #expect(
                (latest["irisgw_test_post_dial_delay_ms\(echo)"] ?? -1) >= 0
                    && latest["irisgw_test_failures_total\(echo)"] == 0)
            #expect(
                (latest["irisgw_test_failures_total\(busy)"] ?? 0) >= 3
                    && latest["irisgw_test_last_run_passed{\(s)}"] == 0)
            #expect(
                (latest["irisgw_test_last_failure_timestamp_seconds\(busy)"] ?? 0) > Date().timeIntervalSince1970 - 120)
            // Values moved from one run to the next.
            #expect(
                (latest["irisgw_test_last_run_timestamp_seconds{\(s)}"] ?? 0)
                    > (first["irisgw_test_last_run_timestamp_seconds{\(s)}"] ?? .infinity),
                "\(first) \(latest)")
            #expect(
                (latest["irisgw_test_failures_total\(busy)"] ?? 0)
                    > (first["irisgw_test_failures_total\(busy)"] ?? .infinity))
            let info = try #require(
                latest.keys.first { $0.hasPrefix("irisgw_test_last_failure_info{") }, "\(latest.keys)")
            #expect(
                info.contains(
                    "test=\"busy expects an answer\",step=\"1\",reason=\"expected Connected within 2.0 s; got "),
                "\(info)")
            #expect(info.contains("486 Busy Here, cause 17") && latest[info] == 1, "\(info)")

            // --keep 2 after three runs: two runs' files, three each.
            let files = try FileManager.default.contentsOfDirectory(atPath: reports).sorted()
            #expect(
                files.count == 6
                    && files.allSatisfy {
                        $0.hasSuffix("-watch.html") || $0.hasSuffix("-watch.json") || $0.hasSuffix("-watch.xml")
                    },
                "\(files)")
            let index = try await client.request(method: "GET", path: "/", timeout: 5)
            #expect(
                index.status == 200
                    && String(decoding: index.body, as: UTF8.self).contains("href=\"/reports/\(files[0])\""))
            let kept = try await client.request(method: "GET", path: "/reports/\(files[1])", timeout: 5)
            #expect(kept.status == 200 && String(decoding: kept.body, as: UTF8.self).contains("\"suite\" : \"watch\""))
            #expect(
                try await client.request(method: "GET", path: "/reports/..%2Fwatch.json5", timeout: 5).status == 404)
            #expect(try await client.request(method: "GET", path: "/other", timeout: 5).status == 404)

            let status = await p.signal(SIGTERM, timeout: 30)
            #expect(status != nil, "still running 30 s after SIGTERM")
            #expect(status == 0)
            #expect(p.output.split(separator: "\n").contains { $0.hasPrefix("stopped after ") }, "\(p.output)")
            #expect(
                (try? await client.request(method: "GET", path: "/metrics", timeout: 2)) == nil,
                "the metrics listener is closed")
        }

        @Test(arguments: ["5", "0s", "1.5m", "2d", "fast"])
        func badIntervalsAreUsageErrors(_ every: String) async throws {
            let r = try await GatewaySuites.GatewayCLITests.run([
                "test", "--profile", "p", "--suite", "/nonexistent.json5", "--every", every
            ])
            #expect(r.status == 2)
        }
    }
}
