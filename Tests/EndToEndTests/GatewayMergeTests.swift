import Foundation
import IrisAPI
import IrisClient
import Media
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Iris `merge`: two calls to two carriers whose media are real sockets of the test,
    /// each playing its own tone; after the merge each PSTN side hears the other and the
    /// app, and the app hears both.
    @Suite struct GatewayMergeTests {
        static func tone(_ hz: Double, frame n: Int) -> [UInt8] {
            var out: [UInt8] = []
            let pcm = (0..<160).map { i in Int16(6000 * sin(2 * .pi * hz * Double(n * 160 + i) / 8000)) }
            G711.encodeULaw(pcm, into: &out)
            return out
        }

        static func level(_ hz: Double, _ packets: [RTPSocketPeer.Received]) -> Double {
            var pcm: [Int16] = []
            var frame: [Int16] = []
            for p in packets.suffix(40) {
                G711.decodeULaw(p.payload, into: &frame)
                pcm += frame
            }
            return Goertzel(frequency: hz, sampleRate: 8000).energyRatio(pcm)
        }

        @Test func mergedCallsHearEachOtherAndTheApp() async throws {
            let mediaA = try RTPSocketPeer(), mediaB = try RTPSocketPeer()
            let carrierA = try await SIPp.listening(
                .inline(
                    name: "carrier-a", xml: CarrierScenarios.answer(mediaAddress: "127.0.0.1:\(mediaA.address.port)")),
                timeout: 40)
            defer { carrierA.stop() }
            let carrierB = try await SIPp.listening(
                .inline(
                    name: "carrier-b",
                    xml: CarrierScenarios.answer(
                        acceptHoldAndResume: true,
                        mediaAddress: "127.0.0.1:\(mediaB.address.port)")),
                timeout: 40)
            defer { carrierB.stop() }
            let gw = try await GatewayProcess(profiles: [
                .init(name: "a", proxies: [carrierA.port]), .init(name: "b", proxies: [carrierB.port])
            ])
            defer { gw.stop() }

            // The first call, then held by the app.
            let recB = SessionRecorder()
            let held = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: recB)
            defer { held.stop() }
            try await held.createWithTN(targetTN: "+15551230002", sourceTN: "+15557654321", profile: "b")
            #expect(await recB.waitForStatus(.connected), "\(recB.trace)\n\(carrierB.report)")
            try await held.hold()
            #expect(await recB.waitForStatus(.hold), "\(recB.trace)\n\(carrierB.report)")
            // The second, active call; the app speaks 1 kHz into it.
            let recA = SessionRecorder()
            let active = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 1000, amplitude: 0.3)),
                delegate: recA)
            defer { active.stop() }
            try await active.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", profile: "a")
            #expect(await recA.waitForStatus(.connected), "\(recA.trace)\n\(carrierA.report)")

            try await active.merge(heldSession: held)
            #expect(await recA.waitFor { $0.contains { $0.event == .onSessionMerged } }, "\(recA.trace)")
            #expect(recA.events.first { $0.event == .onSessionMerged }?.heldRoomId == held.roomId)
            // Unheld for the merge: B is Connected again.
            #expect(await recB.waitFor { $0.filter { $0.status == .connected }.count == 2 }, "\(recB.trace)")

            // The gateway's trunk sockets, learnt from what they send (symmetric RTP).
            #expect(
                await eventually(timeout: 5) {
                    mediaA.drain(); mediaB.drain(); return mediaA.lastSource != nil && mediaB.lastSource != nil
                })
            let toA = try #require(mediaA.lastSource), toB = try #require(mediaB.lastSource)
            await pacedFrames(100) { n in
                mediaA.send(payloadType: 0, payload: Self.tone(500, frame: n), to: toA)
                mediaB.send(payloadType: 0, payload: Self.tone(1500, frame: n), to: toB)
                mediaA.timestamp &+= 160
                mediaB.timestamp &+= 160
                if n % 10 == 0 { mediaA.drain(); mediaB.drain() }
            }
            mediaA.drain()
            mediaB.drain()
            let atA = mediaA.packets(payloadType: 0), atB = mediaB.packets(payloadType: 0)
            #expect(
                Self.level(1500, atA) > 0.15 && Self.level(1000, atA) > 0.15 && Self.level(500, atA) < 0.02,
                "carrier A hears 1500 \(Self.level(1500, atA)), 1000 \(Self.level(1000, atA)), own 500 \(Self.level(500, atA))"
            )
            #expect(
                Self.level(500, atB) > 0.15 && Self.level(1000, atB) > 0.15 && Self.level(1500, atB) < 0.02,
                "carrier B hears 500 \(Self.level(500, atB)), 1000 \(Self.level(1000, atB)), own 1500 \(Self.level(1500, atB))"
            )
            let app500 = active.stream.leg.toneLevel(hz: 500, lastSeconds: 0.8),
                app1500 = active.stream.leg.toneLevel(hz: 1500, lastSeconds: 0.8)
            #expect(app500 > 0.15 && app1500 > 0.15, "the app hears 500 \(app500), 1500 \(app1500)")

            // Closing the active session ends both calls.
            try await active.close()
            #expect(await active.waitForEnd(timeout: 10))
            #expect(await held.waitForEnd(timeout: 10))
            #expect(recB.ended?.reason == .completed)
            #expect(await carrierA.waitForExit(timeout: 10) == 0, carrierA.report)
            #expect(await carrierB.waitForExit(timeout: 10) == 0, carrierB.report)
        }

        @Test func mergeRefusals() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let s = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { s.stop() }
            let room = try await s.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321")
            #expect(await rec.waitForStatus(.connected))
            let api = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey])
            for (held, status) in [(room, 400), ("nosuchroom", 404)] {
                let r = try await api.request(
                    method: "POST", path: "/v1/sessions/\(room)/merge", body: Array("{\"heldRoomId\":\"\(held)\"}".utf8)
                )
                #expect(r.status == status, "\(held): \(String(decoding: r.body, as: UTF8.self))")
            }
            try await s.close()
            #expect(await s.waitForEnd(timeout: 10))
        }
    }
}
