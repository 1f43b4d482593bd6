import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// The app's transfer (REFER) through a real gateway to SIPp playing the carrier: what the
    /// carrier answers and NOTIFYs becomes `onSessionTransfer`, and the session ends
    /// `transferred` only when the carrier carried it out.
    @Suite struct GatewayTransferTests {
        static func transfer(
            _ gw: GatewayProcess, _ room: String, _ body: String
        ) async throws -> (status: Int, code: Int?, text: String) {
            try await GatewayAPIErrorTests.request(gw, "POST", "/v1/sessions/\(room)/transfer", body: body)
        }

        /// The `onSessionTransfer` states in order, with their SIP codes (`ringing/180`).
        static func states(_ rec: SessionRecorder) -> [String] {
            rec.events.filter { $0.event == .onSessionTransfer }.map { e in
                (e.transfer?.state.rawValue ?? "?") + (e.sip.map { "/\($0.code)" } ?? "")
            }
        }

        struct Case: Sendable, CustomStringConvertible {
            var name: String
            var referStatus: String
            var notifies: [String]
            var notifyBefore202 = false
            var transfer = "notifyTimeoutSec: 5"
            var states: [String]
            var ends: EndReason?
            var description: String { name }
        }

        static let cases: [Case] = [
            Case(
                name: "202, NOTIFY 100, 180, 200: transferred", referStatus: "202 Accepted",
                notifies: ["SIP/2.0 100 Trying", "SIP/2.0 180 Ringing", "SIP/2.0 200 OK"],
                states: ["requested", "trying/100", "ringing/180", "succeeded/200"], ends: .transferred),
            Case(
                name: "a NOTIFY before the 202", referStatus: "202 Accepted",
                notifies: ["SIP/2.0 100 Trying", "SIP/2.0 200 OK"], notifyBefore202: true,
                states: ["requested", "trying/100", "succeeded/200"], ends: .transferred),
            Case(
                name: "405 to the REFER: failed, the call goes on", referStatus: "405 Method Not Allowed", notifies: [],
                states: ["requested", "failed/405"], ends: nil),
            Case(
                name: "603 to the REFER: failed, the call goes on", referStatus: "603 Decline", notifies: [],
                states: ["requested", "failed/603"], ends: nil),
            Case(
                name: "accepted then NOTIFY 486: failed", referStatus: "202 Accepted",
                notifies: ["SIP/2.0 100 Trying", "SIP/2.0 486 Busy Here"],
                states: ["requested", "trying/100", "failed/486"], ends: nil),
            Case(
                name: "accepted, then no NOTIFY in time: failed 408", referStatus: "202 Accepted", notifies: [],
                transfer: "notifyTimeoutSec: 1", states: ["requested", "failed/408"], ends: nil)
        ]

        @Test(arguments: cases)
        func blindTransfer(_ c: Case) async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.takesRefer(
                    referStatus: c.referStatus, notifies: c.notifies, notifyBefore202: c.notifyBefore202)
            ) { $0.transfer = c.transfer }
            defer {
                gw.stop()
                sipp.stop()
            }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let room = try #require(session.roomId)
            let answer = try await Self.transfer(gw, room, "{\"targetTN\": \"+15550100001\"}")
            #expect(answer.status == 202, "\(answer.text)")
            let last = c.states.last!
            #expect(
                await rec.waitFor(timeout: 15) { _ in Self.states(rec).contains(last) },
                "\(Self.states(rec)) \(rec.trace)\n\(sipp.report)")
            #expect(Self.states(rec) == c.states)
            let events = rec.events.filter { $0.event == .onSessionTransfer }
            #expect(events.allSatisfy { $0.transfer?.targetTN == "+15550100001" && $0.transfer?.by == "app" })
            if let ends = c.ends {
                #expect(await rec.waitFor { _ in rec.ended != nil }, "\(rec.trace)")
                #expect(rec.ended?.reason == ends)
            } else {
                // The call is as before: still connected, and the app may close it.
                let snapshot = try await session.connection.snapshot(roomId: room)
                #expect(snapshot.status == .connected)
                #expect(rec.ended == nil)
                try await session.close()
                #expect(await rec.waitFor { _ in rec.ended != nil })
                #expect(rec.ended?.reason == .completed)
            }
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let record = try #require(try await gw.recordsAfterStop().first)
            #expect(record.transferTarget == "+15550100001")
            #expect(record.transferredBy == "app")
            #expect(record.transferOutcome == (c.ends == nil ? "failed" : "succeeded"))
        }
    }
}
