import Foundation
import IrisAPI
import IrisClient
import SIP
import Testing

extension GatewaySuites {
    /// Admission by media load through the whole gateway: with a budget no call fits in
    /// (`mediaLoadBudgetPercent: 0`), an app's call is refused 503 / -503 with Retry-After and
    /// no INVITE reaches the trunk; a trunk's INVITE is answered 503 with Retry-After; both
    /// are counted in `/metrics`, which shows each media thread's load. No session is left.
    @Suite struct GatewayMediaAdmissionTests {
        @Test func newSessionsPastTheBudgetAreRefusedBeforeAnyInviteOrAnswer() async throws {
            let carrier = try UDPProbe()
            let gw = try await GatewayProcess(
                profiles: [.init(proxies: [carrier.port])], config: "{ mediaLoadBudgetPercent: 0 }")
            defer { gw.stop() }

            let client = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey])
            let r = try await client.request(
                method: "POST", path: "/v1/sessions", headers: ["Content-Type": "application/json"],
                body: Array(GatewayAPIErrorTests.create().utf8), timeout: 10)
            let body = try JSONDecoder().decode(APIErrorBody.self, from: Data(r.body))
            #expect(r.status == 503)
            #expect(body.error.code == -503, "\(body.error.message)")
            #expect(body.error.message.contains("media"), "\(body.error.message)")
            #expect(r.headers["retry-after"] == "5")
            // Nothing went to the trunk (the refusal came back first; a late INVITE would show here).
            #expect(await carrier.receive(timeout: 1) == nil)

            let caller = try UDPProbe()
            caller.send(HostileTrafficTests.request("INVITE", port: gw.sipPort, probe: caller.port), to: gw.sipPort)
            var final: SIPMessage?
            while final == nil, let bytes = await caller.receive(timeout: 10) {
                if let m = try? SIPMessage.parse(bytes), let code = m.statusCode, code >= 200 { final = m }
            }
            let answer = try #require(final)
            #expect(answer.statusCode == 503)
            #expect(answer[.retryAfter] != nil)

            #expect(try await gw.connection().sessions().isEmpty)
            let metrics = String(
                decoding: try await client.request(method: "GET", path: "/metrics", timeout: 5).body, as: UTF8.self)
            #expect(metrics.contains("irisgw_media_admission_refused_total{direction=\"outbound\"} 1"), "\(metrics)")
            #expect(metrics.contains("irisgw_media_admission_refused_total{direction=\"inbound\"} 1"))
            #expect(metrics.contains("irisgw_media_thread_load{thread=\"0\"}"))
            #expect(metrics.contains("irisgw_media_load_budget 0.0"))
        }
    }
}
