import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// The carrier's REFERs in a burst, through a real gateway with SIPp as the carrier
    /// (`transfer.refer: "dial"`): every REFER gets its answer, the target is dialled at most
    /// once, and the session and the gateway stay healthy.
    @Suite struct GatewayReferFloodTests {
        struct Case: Sendable, CustomStringConvertible {
            var name: String
            var referTo: String
            var count: Int
            /// What the first REFER gets, and what the others get.
            var first: Int
            var then: Int
            /// Whether the gateway dials the target (once).
            var dials: Bool
            var description: String { name }
        }

        static let target = "+15550100001"

        static let cases: [Case] = [
            Case(
                name: "200 REFERs: 202 for the first, 491 for the others while it is under way",
                referTo: target, count: 200, first: 202, then: 491, dials: true),
            Case(
                name: "REFERs to a number outside the allowed prefixes: 403 each, never dialled",
                referTo: "+445550100001", count: 3, first: 403, then: 403, dials: false)
        ]

        /// The Call-IDs of the INVITEs SIPp received whose Request-URI names `number`
        /// (retransmissions count once).
        static func invites(to number: String, _ sipp: SIPp) -> Set<String> {
            var callIDs = Set<String>()
            for block in sipp.messages.components(separatedBy: "-----------------------------------------------") {
                let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let marker = lines.firstIndex(where: { $0.contains("message received [") }),
                    let first = lines[(marker + 1)...].first(where: { !$0.isEmpty }),
                    first.hasPrefix("INVITE sip:\(number)@")
                else { continue }
                callIDs.insert(lines.first { $0.lowercased().hasPrefix("call-id:") } ?? "?")
            }
            return callIDs
        }

        /// `irisgw_refused_total{what="refer_<status>"}`, 0 when absent (-1 when unreadable).
        static func refused(_ gw: GatewayProcess, _ status: Int) async -> Int {
            max(await GatewayFaultTests.metric(gw, "irisgw_refused_total{what=\"refer_\(status)\"}"), 0)
        }

        @Test(.timeLimit(.minutes(2)), arguments: cases)
        func aReferFloodIsAnsweredAndDialsOnce(_ c: Case) async throws {
            let (sipp, gw) = try await carrierAndGateway(
                TransferScenarios.referFlood(
                    count: c.count, first: c.first, then: c.then, referTo: c.referTo, targetNumber: Self.target),
                sippArguments: ["-aa"], calls: c.dials ? 2 : 1
            ) { $0.transfer = "refer: \"dial\"" }
            defer {
                gw.stop()
                sipp.stop()
            }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            // The last REFER's answer reached SIPp: every one was answered.
            let refusals = c.count - (c.first == 202 ? 1 : 0)
            #expect(
                await eventually(timeout: 30) { sipp.received("SIP/2.0 \(c.then)") >= refusals }, "\(sipp.report)")
            // SIPp's scenario expects each status in order (its exit below says they came so).
            #expect((sipp.received("SIP/2.0 202") > 0) == (c.first == 202), "\(sipp.report)")
            #expect(sipp.received("SIP/2.0 5") == 0, "\(sipp.report)")
            #expect(await Self.refused(gw, c.then) == refusals)
            for status in [400, 403, 491, 500, 503, 603] where status != c.then {
                #expect(await Self.refused(gw, status) == 0, "refer_\(status)")
            }
            // The target: one INVITE (still ringing), or none.
            if c.dials {
                #expect(await eventually(timeout: 10) { !Self.invites(to: Self.target, sipp).isEmpty })
            }
            #expect(Self.invites(to: Self.target, sipp).count == (c.dials ? 1 : 0), "\(sipp.report)")
            #expect(Self.invites(to: c.referTo, sipp).count == (c.dials ? 1 : 0), "\(sipp.report)")
            if c.dials {
                #expect(
                    await rec.waitFor { events in events.contains { $0.event == .onSessionTransfer } }, "\(rec.trace)")
            }
            let transfers = rec.events.filter { $0.event == .onSessionTransfer }
            if c.dials {
                #expect(transfers.first?.transfer?.state == .trying, "\(rec.trace)")
                #expect(transfers.allSatisfy { $0.transfer?.targetTN == Self.target && $0.transfer?.by == "carrier" })
                #expect(!transfers.contains { $0.transfer?.state == .succeeded || $0.transfer?.state == .failed })
            } else {
                #expect(transfers.isEmpty, "\(rec.trace)")
            }
            // The session and the gateway are as before: connected, healthy, and the app may
            // close the call (the ringing target is cancelled with it).
            #expect(try await session.connection.snapshot(roomId: room).status == .connected)
            #expect(try await GatewayAPIErrorTests.request(gw, "GET", "/healthz", key: nil).status == 200)
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil }, "\(rec.trace)")
            #expect(rec.ended?.reason == .completed, "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
            #expect(gw.isRunning)
            // The harness's check at stop, here since the records are read after the stop: one
            // record per session started, each finished.
            let started = await GatewayFaultTests.metric(gw, "irisgw_sessions_started_total")
            let records = try await gw.recordsAfterStop()
            #expect(started == 1 && records.count == started, "\(started) sessions, \(records.count) records")
            let record = try #require(records.first)
            #expect(record.endedAt != nil && record.endReason == "completed", "\(record)")
            // The one transfer under way is the one recorded; the refused REFERs left no trace.
            #expect(record.transferTarget == (c.dials ? Self.target : nil))
            #expect(record.transferredBy == (c.dials ? "carrier" : nil))
            // Closed while the target rang: the transfer failed, and the carrier heard so
            // (a final NOTIFY before our BYE, which its subscription needs: RFC 5057).
            #expect(record.transferOutcome == (c.dials ? "failed" : nil))
            if c.dials {
                #expect(rec.events.last { $0.event == .onSessionTransfer }?.transfer?.state == .failed)
                #expect(sipp.messages.contains("Subscription-State: terminated"), sipp.report)
            }
        }
    }
}
