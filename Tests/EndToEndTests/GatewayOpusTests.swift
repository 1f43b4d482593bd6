import Foundation
import IrisAPI
import IrisClient
import TestSupport
import Testing

extension GatewaySuites {
    /// The platform leg's Opus settings through a real `irisgw serve`: the profile's
    /// `media.opus` under every session, a create request's `opus` over it for that session
    /// only, both shown in the snapshot; a bad value is 400 naming `opus.<key>` and dials
    /// nothing.
    @Suite struct GatewayOpusTests {
        static func create(opus: String?) -> String {
            let body = GatewayAPIErrorTests.create()
            guard let opus else { return body }
            return String(body.dropLast()) + ",\"opus\":\(opus)}"
        }

        static func roomId(_ text: String) throws -> String {
            try JSONDecoder().decode(SessionResponse.self, from: Data(text.utf8)).roomId
        }

        @Test func aSessionUsesTheProfilesOpusWithItsOwnOver() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.ringUntilCancel, calls: 2) {
                $0.mediaExtra = #"opus: { complexity: 3, bitrate: 24000, application: "audio" },"#
            }
            defer { gw.stop(); sipp.stop() }
            let api = try gw.connection()

            let own = try await GatewayAPIErrorTests.request(
                gw, "POST", "/v1/sessions", body: Self.create(opus: #"{"complexity":1,"bitrate":"auto"}"#))
            #expect(own.status == 201, "\(own.text)")
            let ownRoom = try Self.roomId(own.text)
            // The trunk leg is PCMU (8 kHz PCM): automatic bandwidth is narrowband.
            let ownSettings = OpusOptions(
                complexity: 1, bitrate: .auto, fec: true, expectedLoss: 5, dtx: false, application: "audio",
                maxBandwidth: "narrowband", sampleRate: .hertz(8000))
            #expect(try await api.snapshot(roomId: ownRoom).opus == ownSettings)

            let plain = try await GatewayAPIErrorTests.request(gw, "POST", "/v1/sessions", body: Self.create(opus: nil))
            #expect(plain.status == 201, "\(plain.text)")
            let plainRoom = try Self.roomId(plain.text)
            let profileSettings = OpusOptions(
                complexity: 3, bitrate: .bitsPerSecond(24_000), fec: true, expectedLoss: 5, dtx: false,
                application: "audio", maxBandwidth: "narrowband", sampleRate: .hertz(8000))
            #expect(try await api.snapshot(roomId: plainRoom).opus == profileSettings)
            // The list shows them too.
            let listed = try await api.sessions()
            #expect(listed.first { $0.roomId == ownRoom }?.opus == ownSettings)
            #expect(listed.first { $0.roomId == plainRoom }?.opus == profileSettings)

            // Refused before anything is dialled: the two sessions above are all there is.
            for (opus, key) in [
                (#"{"complexity":11}"#, "opus.complexity"), (#"{"maxBandwidth":"hd"}"#, "opus.maxBandwidth"),
                (#"{"complexty":1}"#, "opus.complexty"), (#"{"bitrate":"max"}"#, "opus.bitrate")
            ] {
                let bad = try await GatewayAPIErrorTests.request(
                    gw, "POST", "/v1/sessions", body: Self.create(opus: opus))
                #expect(
                    bad.status == 400 && bad.code == -103 && bad.text.contains("\"\(key): "),
                    "\(opus): \(bad.status) \(bad.text)")
            }
            #expect(try await api.sessions().count == 2)

            // `irisgw call --opus-complexity`: the gateway's refusal (exit 3), a usage error (exit 2).
            let cli = try await ChildProcess.run(
                GatewayProcess.binary,
                [
                    "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL,
                    "--data-dir", gw.dataDir, "--opus-complexity", "11"
                ], timeout: 30)
            let said = cli.output
            #expect(cli.status == 3 && said.contains("opus.complexity: must be from 0 to 10, found 11"), "\(said)")
            let usage = try await GatewayCLITests.run([
                "call", "+15551230001", "--from", "+1", "--opus-complexity", "high"
            ])
            #expect(usage.status == 2)

            for room in [ownRoom, plainRoom] {
                #expect(try await GatewayAPIErrorTests.request(gw, "DELETE", "/v1/sessions/\(room)").status == 202)
            }
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
            // An ended session's snapshot keeps what it used.
            #expect(try await api.snapshot(roomId: ownRoom).opus == ownSettings)
        }

        /// An inbound call's platform leg takes its trunk's `media.opus` when the app joins.
        @Test func anInboundCallUsesItsTrunksOpus() async throws {
            var profile = GatewayProcess.Profile()
            profile.mediaExtra = #"opus: { complexity: 2, application: "audio", fec: false },"#
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let (note, sipp) = try await GatewayInboundTests.notification(gw) {
                try GatewayInboundTests.caller(gw, CallerScenarios.answered(talkMs: 3000))
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let room = try #require(n.roomid)
            let api = try gw.connection()
            // Not joined: no platform leg yet.
            #expect(try await api.snapshot(roomId: room).opus == nil)
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(connection: api, stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: room, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            let snap = try await api.snapshot(roomId: room)
            let band = snap.codec == "G722" ? "wideband" : "narrowband"
            #expect(
                snap.opus
                    == OpusOptions(
                        complexity: 2, bitrate: .auto, fec: false, expectedLoss: 5, dtx: false, application: "audio",
                        maxBandwidth: band, sampleRate: .hertz(snap.codec == "G722" ? 16_000 : 8000)), "\(snap)")
            #expect(await session.waitForEnd(timeout: 10))
        }
    }
}
