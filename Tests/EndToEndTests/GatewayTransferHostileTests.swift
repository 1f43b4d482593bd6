import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Transfer requests that are wrong: each gets the answer RFC 3515 / 3891 / 6665 asks for,
    /// and nothing changes (no transfer, no call, the session as it was).
    @Suite struct GatewayTransferHostileTests {
        static let requests: [(method: String, headers: [String], body: String?, expecting: Int)] = [
            ("REFER", [], nil, 400),  // no Refer-To
            ("REFER", ["Refer-To: <mailto:someone@example.com>"], nil, 400),
            ("REFER", ["Refer-To: <sip:+15550100001@127.0.0.1?Replaces=abc%3Bto-tag%3D1%3Bfrom-tag%3D2>"], nil, 603),
            ("REFER", ["Refer-To: <sip:+445550100001@127.0.0.1>"], nil, 403),  // outside allowedPrefixes
            ("NOTIFY", ["Content-Type: message/sipfrag;version=2.0"], "SIP/2.0 200 OK", 481),  // no Event
            (
                "NOTIFY", ["Event: refer;id=99", "Subscription-State: active", "Content-Type: message/sipfrag"],
                "SIP/2.0 200 OK", 481
            )  // no transfer of ours
        ]

        @Test func wrongReferAndNotifyInADialogChangeNothing() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.sendsInDialog(Self.requests)) {
                $0.transfer = "refer: \"dial\""
            }
            defer {
                gw.stop()
                sipp.stop()
            }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            #expect(
                await eventually(timeout: 10) { await HostileTrafficTests.refused(gw, "refer_403") == 1 }, sipp.report)
            #expect(await HostileTrafficTests.refused(gw, "refer_400") == 2)
            #expect(await HostileTrafficTests.refused(gw, "refer_603") == 1)
            #expect(rec.events.allSatisfy { $0.transfer == nil }, "\(rec.trace)")
            #expect(try await session.connection.snapshot(roomId: try #require(session.roomId)).status == .connected)
            try await session.close()
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // The ending reaches the event stream a moment after SIPp has its 200 to the BYE.
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(rec.ended?.reason == .completed)
        }

        /// An INVITE whose Replaces is unreadable is 400; one naming no dialog of ours 481, and
        /// neither starts a session.
        @Test(arguments: [("garbage", 400), ("nosuchcall@h;to-tag=a;from-tag=b", 481)])
        func anInviteWithAWrongReplacesIsRefused(replaces: String, status: Int) async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let probe = try UDPProbe()
            var text = String(
                decoding: HostileTrafficTests.request("INVITE", port: gw.sipPort, probe: probe.port), as: UTF8.self)
            text = text.replacingOccurrences(
                of: "Content-Length: 0", with: "Replaces: \(replaces)\r\nContent-Length: 0")
            probe.send(Array(text.utf8), to: gw.sipPort)
            var final: SIPMessage?
            _ = await eventually(timeout: 5) {
                guard let bytes = await probe.receive(timeout: 1), let m = try? SIPMessage.parse(bytes) else {
                    return false
                }
                if let code = m.statusCode, code >= 200 { final = m }
                return final != nil
            }
            #expect(final?.statusCode == status, "\(final.map { String(describing: $0) } ?? "nothing")")
            #expect(try await gw.connection().sessions().isEmpty)
        }
    }
}
