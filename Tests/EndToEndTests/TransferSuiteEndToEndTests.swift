import CarrierTest
import Foundation
import TestSupport
import Testing

extension GatewaySuites {
    /// The shipped transfer suite (`sip-profiles/suites/transfer.json5`) with the real
    /// `irisgw test`, through a real gateway whose trunk is `irisgw carrier-sim`.
    @Suite struct TransferSuiteEndToEndTests {
        /// Every test passes; the transfers ended as each number behaves. The trunk's
        /// `notifyTimeoutSec` is low so the "no NOTIFY" test does not wait the default 10 s.
        @Test(.timeLimit(.minutes(3)))
        func shippedTransferSuitePassesAgainstTheSimulator() async throws {
            let (sim, gw) = try await GatewayTransferSimTests.start(transfer: "notifyTimeoutSec: 2")
            defer {
                gw.stop()
                sim.stop()
            }
            let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/transfer.json5").path
            let json = gw.directory.appendingPathComponent("transfer.json").path
            let junit = gw.directory.appendingPathComponent("transfer.xml").path
            let r = try await GatewayCLITests.run(
                [
                    "test", "--profile", "trunk", "--suite", suite, "--parallel", "7", "--api", gw.apiURL, "--data-dir",
                    gw.dataDir,
                    "--json", json, "--junit", junit
                ], timeout: 150)
            let printed = r.lines.joined(separator: "\n") + "\n" + sim.lines.suffix(20).joined(separator: "\n")
            #expect(r.status == 0, "\(printed)")
            #expect(r.lines.contains { $0.hasPrefix("6 passed, 0 failed") }, "\(printed)")
            struct Report: Decodable { var passed: Bool; var results: [TestCallResult] }
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            #expect(report.passed && report.results.count == 6)
            let ends = Dictionary(uniqueKeysWithValues: report.results.map { ($0.test, $0.endReason) })
            #expect(
                ends == [
                    "accepted and completed": "transferred", "refused 405": "completed", "refused 603": "completed",
                    "accepted, then the target is busy": "completed", "NOTIFYs in an odd order": "transferred",
                    "no NOTIFY": "completed"
                ], "\(printed)")
            #expect(try String(contentsOfFile: junit, encoding: .utf8).contains("tests=\"6\" failures=\"0\""))
            // The REFERs reached the simulator, each to the number the suite names.
            #expect(sim.lines.filter { $0.contains("REFER <sip:+15550100001@") }.count == 6, "\(printed)")
        }
    }
}
