import Foundation
import TestSupport
import Testing

extension GatewaySuites {
    /// `irisgw call --transfer-to`, the real binary, through a real gateway whose trunk is
    /// `irisgw carrier-sim`: the transfer's lines as they come, and the exit status.
    @Suite struct GatewayCLITransferEndToEndTests {
        struct Case: Sendable, CustomStringConvertible {
            var name: String
            var number: String
            var extra: [String] = []
            /// The lines (after the time) the transfer prints, in order.
            var transfer: [String]
            /// The last line's start.
            var ended: String
            var description: String { name }
        }

        static let cases: [Case] = [
            Case(
                name: "the carrier carries it out: ended transferred", number: "+15550100024",
                transfer: [
                    "transfer to +15550100001: requested (refer by app)",
                    "transfer to +15550100001: trying (refer by app) (100 Trying)",
                    "transfer to +15550100001: ringing (refer by app) (180 Ringing)",
                    "transfer to +15550100001: succeeded (refer by app) (200 OK)"
                ], ended: "ended: transferred"),
            Case(
                name: "the carrier refuses it (405): the failure, the call goes on", number: "+15550100025",
                extra: ["--hangup-after", "2"],
                transfer: [
                    "transfer to +15550100001: requested (refer by app)",
                    "transfer to +15550100001: failed (refer by app) (405 Method Not Allowed"
                ], ended: "ended: completed")
        ]

        @Test(arguments: cases)
        func callTransfersThroughTheSimulator(_ c: Case) async throws {
            let (sim, gw) = try await GatewayTransferSimTests.start(transfer: "notifyTimeoutSec: 5")
            defer {
                gw.stop()
                sim.stop()
            }
            let r = try await GatewayCLITests.run(
                [
                    "call", c.number, "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir,
                    "--transfer-to", "+15550100001", "--transfer-after", "0.5"
                ] + c.extra, timeout: 30)
            let printed = r.lines.joined(separator: "\n") + "\n" + sim.lines.suffix(10).joined(separator: "\n")
            #expect(r.status == 0, "\(printed)")
            // Each line is "[  1.2s] what happened".
            let lines = r.lines.map { $0.split(separator: "] ", maxSplits: 1).last.map(String.init) ?? $0 }
            let transfer = lines.filter { $0.hasPrefix("transfer") }
            #expect(transfer.count == c.transfer.count, "\(printed)")
            for (line, expected) in zip(transfer, c.transfer) {
                #expect(line.hasPrefix(expected), "\(printed)")
            }
            // The transfer came once connected, and before the end.
            let connected = lines.firstIndex { $0.hasPrefix("Connected") }
            let first = lines.firstIndex { $0.hasPrefix("transfer") }
            #expect(connected != nil && first != nil && connected! < first!, "\(printed)")
            #expect(lines.last?.hasPrefix(c.ended) == true, "\(printed)")
        }
    }
}
