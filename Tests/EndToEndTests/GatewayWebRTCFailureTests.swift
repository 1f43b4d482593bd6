import Foundation
import Glibc
import IrisAPI
import SDP
import SIP
import TLS
import TestSupport
import Testing
import WebClient

@testable import IrisClient

extension GatewaySuites {
    /// A WebRTC app that never connects: the gateway answers its offer, no ICE check ever
    /// comes, and after the setup limit (`webrtcSetupTimeoutSec`, 3 s here, 20 by default)
    /// the session ends with an error that says so, the carrier's call is hung up, and the
    /// leg's port is free again.
    @Suite struct GatewayWebRTCFailureTests {
        static func offer(fingerprint: String) -> String {
            """
            v=0\r
            o=- 1 1 IN IP4 127.0.0.1\r
            s=-\r
            t=0 0\r
            a=group:BUNDLE 0\r
            m=audio 9 UDP/TLS/RTP/SAVPF 111\r
            c=IN IP4 0.0.0.0\r
            a=ice-ufrag:silentapp\r
            a=ice-pwd:silent-app-password-0123456\r
            a=fingerprint:\(fingerprint)\r
            a=setup:actpass\r
            a=mid:0\r
            a=rtcp-mux\r
            a=rtpmap:111 opus/48000/2\r
            a=sendrecv\r

            """
        }

        @Test(.timeLimit(.minutes(2)))
        func anAppThatNeverConnectsEndsWithAnErrorAndFreesItsPort() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [sim.port])], config: "{ webrtcSetupTimeoutSec: 3 }")
            defer { gw.stop() }
            let api = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey])
            let fingerprint = try DTLSCertificate(commonName: "silent app").fingerprint.sdpValue
            let body: [String: Any] = [
                "targetTN": "+15550100001", "sourceTN": "+15557654321",
                "media": ["sdp": Self.offer(fingerprint: fingerprint)]
            ]
            let r = try await api.request(
                method: "POST", path: "/v1/sessions", body: Array(try JSONSerialization.data(withJSONObject: body)))
            #expect(r.status == 201, "\(String(decoding: r.body, as: UTF8.self))")
            let created = try JSONDecoder().decode(SessionResponse.self, from: Data(r.body))
            let answerText = try #require(created.media?.sdp)
            let answer = try SessionDescription.parse(answerText)
            #expect(
                answer.attributes.contains(named: "ice-lite") && answer.media[0].proto == "UDP/TLS/RTP/SAVPF",
                "\(answerText)")
            let port = Int(answer.media[0].port)

            // The carrier's echo number answers; nothing comes from the app.
            var snapshot: SessionSnapshot?
            #expect(
                await eventually(timeout: 25) {
                    snapshot = try? gw.connection().snapshot(roomId: created.roomId)
                    return snapshot?.ended != nil
                }, "\(String(describing: snapshot))")
            // What the app was told: -416 and why, then the end.
            let events = try gw.connection().events(roomId: created.roomId, since: 0)
            defer { events.close() }
            var seen: [SessionEvent] = []
            while let text = try await events.receive(timeout: 2),
                let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8))
            {
                seen.append(e)
                if e.event == .onSessionEnded { break }
            }
            let error = seen.first { $0.event == .onSessionError }
            #expect(
                error?.code == -416 && error?.message?.contains("ICE: no connectivity check arrived in 3 s") == true,
                "\(seen)")
            #expect(seen.last?.event == .onSessionEnded, "\(seen)")
            // The port is the pool's again: it can be bound.
            #expect(await eventually(timeout: 5) { isPortFree(port, transport: .udp) }, "port \(port) still bound")
        }
    }
}
