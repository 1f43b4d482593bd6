import Foundation
import Gateway
import IrisAPI
import IrisClient
import SIP
import Testing

extension GatewaySuites {
    /// Call records and metrics after a mix of outcomes: one record per session, with the
    /// session's end reason and SIP code; `/metrics` counts the same.
    @Suite struct GatewayRecordsTests {
        @Test func recordsMatchSessionsOneToOne() async throws {
            let busy = try await SIPp.listening(
                .inline(name: "busy", xml: CarrierScenarios.reject("486 Busy Here", q850: 17)), calls: 2, timeout: 30)
            defer { busy.stop() }
            let answer = try await SIPp.listening(
                .inline(name: "answer", xml: CarrierScenarios.answer(byeAfterMs: 500)), timeout: 30)
            defer { answer.stop() }
            var b = GatewayProcess.Profile(name: "busy", proxies: [busy.port])
            b.routes = [("+15550001000", "alice")]
            var a = GatewayProcess.Profile(name: "answer", proxies: [answer.port])
            a.routes = [("+15550002000", "bob")]
            let gw = try await GatewayProcess(profiles: [a, b])
            defer { gw.stop() }
            var ended: [String: SessionEvent] = [:]
            for profile in ["busy", "answer", "busy"] {
                let rec = SessionRecorder()
                let session = IrisRtcAudioSession(
                    connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
                let room = try await session.createWithTN(
                    targetTN: "+15551230001", sourceTN: "+15557654321", profile: profile)
                #expect(await session.waitForEnd(timeout: 15))
                session.stop()
                ended[room] = rec.ended
            }
            // A refused request leaves no record.
            #expect(throws: IrisError.self) {
                try IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
                    .createWithTN(targetTN: "+447911123456", sourceTN: "+15557654321")
            }
            let metrics = try await HTTPClient(
                baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey]
            )
            .request(method: "GET", path: "/metrics")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(metrics.status == 200)
            #expect(text.contains("irisgw_sessions_ended_total{reason=\"busy\"} 2"), "\(text)")
            #expect(text.contains("irisgw_sessions_ended_total{reason=\"completed\"} 1"), "\(text)")
            #expect(text.contains("irisgw_sessions_started_total 3"), "\(text)")
            // The control API's own HTTP server counters.
            #expect(text.contains("\nirisgw_http_connections "), "\(text)")
            #expect(text.contains("\nirisgw_websockets "), "\(text)")
            #expect(text.contains("irisgw_http_refused_total{reason=\"header_timeout\"} 0"), "\(text)")
            #expect(text.contains("irisgw_sip_invite_final_responses_total{code=\"486\"} 2"), "\(text)")
            #expect(text.contains("irisgw_sip_invite_final_responses_total{code=\"200\"} 1"), "\(text)")

            let records = try await gw.recordsAfterStop()
            #expect(records.count == 3)
            for r in records {
                let e = try #require(ended[r.roomId], "a record without a session: \(r)")
                #expect(r.endReason == e.reason?.rawValue)
                #expect(r.sipCode == e.sip?.code)
                #expect(r.q850Cause == e.sip?.cause)
                #expect(r.direction == "outbound" && r.targetTN == "+15551230001" && r.sourceTN == "+15557654321")
                #expect(r.endedAt != nil && r.ringingAt != nil)
                if r.endReason == "completed" {
                    #expect(
                        r.profile == "answer" && r.answeredAt != nil && (r.durationSec ?? 0) > 0.3 && r.codec == "PCMU")
                    #expect((r.postDialDelayMs ?? -1) >= 0)
                } else {
                    #expect(r.profile == "busy" && r.answeredAt == nil && r.q850Cause == 17)
                }
            }
        }

        @Test func interruptEndsLiveCallsWithTheirEventsAndRecords() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            // SIGINT: the call gets its BYE, the app its final events, the record its end.
            #expect(await gw.signal(SIGINT) == 0, "\(gw.printed)")
            #expect(await session.waitForEnd(timeout: 5))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let records = try await gw.recordsAfterStop()
            #expect(records.count == 1 && records.first?.endReason == "completed")
        }
    }
}
