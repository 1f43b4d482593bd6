import Foundation
import Glibc
import IrisAPI
import Media
import SIP
import TestSupport
import Testing

@testable import IrisClient

extension GatewaySuites {
    /// SRTP on the trunk leg (SDES keys, RFC 4568) against a real outside peer: baresip
    /// (Debian, its `srtp` module) as the carrier (a TLS server answering at once) or as the
    /// caller, `irisgw serve` in between, the Swift client as the app. Audio is checked both
    /// ways by tone: baresip plays 440 Hz (`ausine`), the app 1 kHz, which baresip's
    /// `sndfile` writes to a WAV after decrypting it.
    @Suite(
        .enabled(
            if: Baresip.isInstalled && FileManager.default.fileExists(atPath: "\(Baresip.modules)/sndfile.so"),
            "needs baresip (Debian baresip) with its srtp, sndfile, ausine and aubridge modules"))
    struct GatewaySRTPTests {
        static let target = "+15551230001"

        /// A CA, the carrier's certificate (`carrier.test`) and the gateway's listener certificate.
        final class Certificates: @unchecked Sendable {
            let pki: TestPKI
            let carrier: TestPKI.Issued
            let gateway: TestPKI.Issued
            init() async throws {
                pki = try await TestPKI()
                carrier = try await pki.issue("carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
                gateway = try await pki.issue("gw", commonName: "gw.test", altNames: ["DNS:gw.test", "IP:127.0.0.1"])
            }
            func remove() { pki.remove() }
        }

        /// baresip as a carrier over TLS that answers every call.
        static func carrier(_ certs: Certificates, mediaenc: String?) async throws -> Baresip {
            try await Baresip.tlsServer(
                account: .init(user: target, mediaenc: mediaenc, answerMode: "auto"),
                certificate: certs.carrier.certificate, key: certs.carrier.key, record: true)
        }

        /// A trunk to `carrier` over TLS, checked as carrier.test, with `media` members.
        static func profile(to carrier: Baresip, _ certs: Certificates, media: String) throws -> GatewayProcess.Profile
        {
            var p = GatewayProcess.Profile(proxyURIs: ["sip:127.0.0.1:\(try #require(carrier.tlsPort));transport=tls"])
            p.sipExtra = "tls: { caFile: \"\(certs.pki.caFile)\", serverName: \"carrier.test\" }"
            p.mediaExtra = media
            p.codecs = ["PCMU"]
            return p
        }

        /// The level of `hz` in the last second of what baresip received in its first call (or
        /// its latest, `latest`).
        static func heardByBaresip(_ phone: Baresip, hz: Double, latest: Bool = false) -> Double {
            let files = phone.recordings()
            guard let file = latest ? files.last : files.first, let wav = try? WAVFile(contentsOf: file) else {
                return 0
            }
            let tail = Array(wav.samples.suffix(wav.sampleRate))
            return ReceivedAudio.toneLevel(tail, hz: hz, sampleRate: wav.sampleRate)
        }

        /// The first live session's trunk leg, as `GET /v1/sessions` shows it.
        static func trunkStats(_ gw: GatewayProcess) -> SessionSnapshot.LegStats? {
            guard let c = try? gw.connection(), let room = (try? c.sessions())?.first?.roomId else { return nil }
            return (try? c.snapshot(roomId: room))?.trunk
        }

        /// Waits until the app hears `hz` well (its decoded audio from the gateway).
        static func appHears(_ session: IrisRtcAudioSession, hz: Double) async -> Double {
            var level = 0.0
            _ = await eventually(timeout: 6) {
                level = session.stream.leg.toneLevel(hz: hz, lastSeconds: 0.5)
                return level > 0.3
            }
            return level
        }

        /// The app takes the next call to `alice` (baresip calling) with a 1 kHz tone, and
        /// waits until it is connected.
        static func answerAsApp(
            _ gw: GatewayProcess, _ listener: IrisNotificationListener, _ phone: Baresip
        ) async throws
            -> (IrisRtcAudioSession, SessionRecorder)
        {
            let note = try #require(await listener.next(timeout: 10), "\(phone.report)\n\(gw.printed)")
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 1000, amplitude: 0.3)),
                delegate: rec)
            try await session.join(roomId: note.roomid!, roomToken: note.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(phone.report)")
            return (session, rec)
        }

        /// The `m=audio` line and `a=crypto` lines of an SDP body.
        static func srtpLines(_ body: String) -> (m: String, cryptos: [String]) {
            let lines = body.split(whereSeparator: \.isNewline).map(String.init)
            return (lines.first { $0.hasPrefix("m=audio") } ?? "", lines.filter { $0.hasPrefix("a=crypto:") })
        }

        @Test func outboundSRTPOverTLSCarriesAudioBothWaysThroughHoldAndOurBye() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let phone = try await Self.carrier(certs, mediaenc: "srtp-mand")
            defer { phone.stop() }
            let gw = try await GatewayProcess(profiles: [
                Self.profile(to: phone, certs, media: "encryption: \"required\"")
            ])
            defer { gw.stop() }

            let (rec, _) = try await GatewayOutboundTests.call(
                gw, target: Self.target, source: .tone(hz: 1000, amplitude: 0.3)
            ) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(phone.report)\n\(gw.printed)")
                let heard = await Self.appHears(session, hz: 440)
                #expect(heard > 0.3, "baresip's 440 Hz reached the app at \(heard)")
                let stats = Self.trunkStats(gw)
                #expect(stats?.srtp == "AES_CM_128_HMAC_SHA1_80", "\(String(describing: stats))")

                // Forged packets at the trunk port: dropped and counted, the call goes on.
                let invite = try #require(phone.sipMessages.first { $0.startLine.hasPrefix("INVITE ") }, phone.report)
                let port = try #require(
                    Self.srtpLines(invite.body).m.split(separator: " ").dropFirst().first.flatMap { Int($0) })
                let forger = try UDPProbe()
                for n in 0..<5 {
                    // An RTP header (PCMU, a sequence number near baresip's), noise and a 10-byte tag.
                    var packet: [UInt8] = [0x80, 0x00, 0x12, UInt8(n), 0, 0, 1, 0, 0xDE, 0xAD, 0xBE, 0xEF]
                    packet += (0..<170).map { _ in UInt8.random(in: 0...255) }
                    forger.send(packet, to: port)
                }
                var afterForgery = stats
                #expect(
                    await eventually(timeout: 5) {
                        afterForgery = Self.trunkStats(gw)
                        return (afterForgery?.srtpAuthFailures ?? 0) >= 5
                    }, "\(String(describing: afterForgery))")

                try await session.hold()
                #expect(await rec.waitForStatus(.hold), "\(rec.trace)\n\(phone.report)")
                try await session.unhold()
                #expect(
                    await rec.waitFor { $0.filter { $0.status == .connected }.count >= 2 },
                    "\(rec.trace)\n\(phone.report)")
                #expect(await Self.appHears(session, hz: 440) > 0.3, "audio after the unhold")
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            // What went over the wire: TLS, RTP/SAVP with our three suites, baresip's key in its answer.
            let invite = try #require(phone.sipMessages.first { $0.startLine.hasPrefix("INVITE ") }, phone.report)
            #expect(invite.route.contains("TLS"), "\(invite)")
            let offer = Self.srtpLines(invite.body)
            #expect(offer.m.contains(" RTP/SAVP "), "\(invite)")
            #expect(
                offer.cryptos.count == 3 && offer.cryptos[0].contains("AES_CM_128_HMAC_SHA1_80 inline:"),
                "\(offer.cryptos)")
            let reinvites = phone.sipMessages.filter { $0.startLine.hasPrefix("INVITE ") }
            #expect(reinvites.count == 3, "the call, the hold and the unhold: \(phone.report)")
            #expect(
                reinvites.dropFirst().allSatisfy { Self.srtpLines($0.body).cryptos.count == 1 },
                "re-offers repeat the line in force")
            #expect(
                await eventually(timeout: 5) { phone.sipMessages.contains { $0.startLine.hasPrefix("BYE ") } },
                phone.report)
            // Our SRTP reached baresip's stream (its srtp module drops what does not decrypt,
            // and logs it): nothing ever left in clear. (baresip's sndfile records nothing it
            // decodes on a call it answered itself, so the tone toward the carrier is checked
            // in the inbound tests.)
            #expect(phone.output.contains("stream: incoming rtp for 'audio' established"), phone.report)
            #expect(!phone.output.contains("failed to decrypt"), phone.report)
            let records = try await gw.recordsAfterStop()
            #expect(records.first?.endReason == "completed")
        }

        @Test func inboundSRTPOverTLSFromBaresipWhichHangsUp() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            var profile = GatewayProcess.Profile()
            profile.mediaExtra = "encryption: \"required\""
            profile.codecs = ["PCMU"]
            let gw = try await GatewayProcess(
                profiles: [profile],
                extraArguments: [
                    "--sip-tls-listen", "127.0.0.1:0", "--tls-certificate", certs.gateway.certificate, "--tls-key",
                    certs.gateway.key
                ])
            defer { gw.stop() }
            let tlsPort = try #require(gw.tlsPort, "\(gw.printed)")
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(mediaenc: "srtp-mand"), options: .init(record: true),
                dial: "sip:+15550001000@127.0.0.1:\(tlsPort);transport=tls")
            defer { phone.stop() }
            let (session, rec) = try await Self.answerAsApp(gw, listener, phone)
            defer { session.stop() }
            #expect(await Self.appHears(session, hz: 440) > 0.3, "baresip's 440 Hz at the app")
            #expect(Self.trunkStats(gw)?.srtp == "AES_CM_128_HMAC_SHA1_80")
            try await Task.sleep(nanoseconds: 1_000_000_000)  // a second of the app's tone at baresip
            phone.send("/hangup")
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(
                await eventually(timeout: 5) { Self.heardByBaresip(phone, hz: 1000) > 0.3 },
                "the app's 1 kHz at baresip: \(Self.heardByBaresip(phone, hz: 1000)) in \(phone.recordings())\n\(phone.report)"
            )
            // Our 200 answered RTP/SAVP with one line of baresip's tags, over TLS.
            let ok = try #require(phone.inviteResponses.first { $0.statusCode == 200 }, phone.report)
            #expect(ok.route.contains("TLS"), "\(ok)")
            let answer = Self.srtpLines(ok.body)
            #expect(answer.m.contains(" RTP/SAVP ") && answer.cryptos.count == 1, "\(ok)")
        }

        /// `required` toward a carrier without SRTP: it refuses our RTP/SAVP offer (baresip
        /// answers 488) and the call fails with that code; nothing is answered in clear.
        @Test func requiredToACarrierWithoutSRTPFailsWithItsRefusal() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let phone = try await Self.carrier(certs, mediaenc: nil)
            defer { phone.stop() }
            let gw = try await GatewayProcess(profiles: [
                Self.profile(to: phone, certs, media: "encryption: \"required\"")
            ])
            defer { gw.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(
                gw, target: Self.target, source: .tone(hz: 1000, amplitude: 0.3))
            let ended = try #require(rec.ended, "\(rec.trace)\n\(phone.report)")
            #expect(ended.reason == .failed && ended.sip?.code == 488, "\(rec.events)")
            let offer = Self.srtpLines(
                try #require(phone.invites.first ?? phone.sipMessages.first { $0.startLine.hasPrefix("INVITE ") }).body)
            #expect(offer.m.contains(" RTP/SAVP "), "\(offer)")
            #expect(!rec.trace.contains("Connected"), "\(rec.trace)")
        }

        /// `required`: a carrier that takes our RTP/SAVP offer but answers plain RTP/AVP with
        /// no key (SIPp, over UDP with `sdesRequiresTLS: false`) gets our ACK and BYE, and
        /// the app sees why: a local 488 "SRTP: ...".
        @Test func requiredEndsACallAnsweredWithoutKeys() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer()) { p in
                p.mediaExtra = "encryption: \"required\", sdesRequiresTLS: false"
            }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw, source: .tone(hz: 1000, amplitude: 0.3))
            let ended = try #require(rec.ended, "\(rec.trace)\n\(sipp.report)")
            #expect(ended.reason == .failed, "\(rec.events)")
            #expect(
                ended.sip?.code == 488 && ended.sip?.reason.hasPrefix("SRTP: ") == true,
                "\(String(describing: ended.sip))")
            #expect(rec.trace.contains("error:-412") && !rec.trace.contains("Connected"), "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            #expect(sipp.received("ACK ") == 1 && sipp.received("BYE ") == 1, sipp.report)
            #expect(
                sipp.messages.contains("RTP/SAVP")
                    && sipp.messages.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"), sipp.report)
            #expect(await OutsidePeerTests.metric(gw, "irisgw_srtp_refused_total") == 1)
        }

        /// `optional`: keys offered over TLS; a carrier without SRTP answers plain and the
        /// call goes on in plain RTP.
        @Test func optionalFallsBackToPlainRTP() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let phone = try await Self.carrier(certs, mediaenc: nil)
            defer { phone.stop() }
            let gw = try await GatewayProcess(profiles: [
                Self.profile(to: phone, certs, media: "encryption: \"optional\"")
            ])
            defer { gw.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(
                gw, target: Self.target, source: .tone(hz: 1000, amplitude: 0.3)
            ) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(phone.report)")
                #expect(await Self.appHears(session, hz: 440) > 0.3)
                #expect(Self.trunkStats(gw)?.srtp == nil)
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            let offer = Self.srtpLines(
                try #require(phone.invites.first ?? phone.sipMessages.first { $0.startLine.hasPrefix("INVITE ") }).body)
            #expect(offer.m.contains(" RTP/AVP ") && offer.cryptos.count == 3, "best-effort SRTP: \(offer)")
        }

        /// `optional` over UDP: the keys stay out of clear SIP (sdesRequiresTLS), and a
        /// caller's best-effort `a=crypto` offer is answered plain.
        @Test func keysNeverCrossClearSIPUnlessAllowed() async throws {
            var profile = GatewayProcess.Profile()
            profile.mediaExtra = "encryption: \"optional\""
            profile.codecs = ["PCMU"]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(mediaenc: "srtp"), dial: "sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            defer { phone.stop() }
            let (session, _) = try await Self.answerAsApp(gw, listener, phone)
            defer { session.stop() }
            #expect(await Self.appHears(session, hz: 440) > 0.3)
            let ok = try #require(phone.inviteResponses.first { $0.statusCode == 200 }, phone.report)
            let answer = Self.srtpLines(ok.body)
            #expect(answer.m.contains(" RTP/AVP ") && answer.cryptos.isEmpty, "\(ok)")
            #expect(Self.srtpLines(try #require(phone.invites.first).body).cryptos.count > 0, "baresip offered keys")
            try await session.close()
            #expect(await session.waitForEnd(timeout: 10))
        }

        /// The same caller over UDP to a trunk that allows clear SDES gets SRTP.
        @Test func clearSDESWhenTheProfileAllowsIt() async throws {
            var profile = GatewayProcess.Profile()
            profile.mediaExtra =
                "encryption: \"optional\", sdesRequiresTLS: false, srtpSuites: [\"AEAD_AES_128_GCM\", \"AES_CM_128_HMAC_SHA1_80\"]"
            profile.codecs = ["PCMU"]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(mediaenc: "srtp"), options: .init(record: true),
                dial: "sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            defer { phone.stop() }
            let (session, _) = try await Self.answerAsApp(gw, listener, phone)
            defer { session.stop() }
            #expect(await Self.appHears(session, hz: 440) > 0.3)
            let stats = Self.trunkStats(gw)
            #expect(
                stats?.srtp == "AES_CM_128_HMAC_SHA1_80" && stats?.srtpAuthFailures == 0, "\(String(describing: stats))"
            )
            let ok = try #require(phone.inviteResponses.first { $0.statusCode == 200 }, phone.report)
            #expect(Self.srtpLines(ok.body).cryptos.count == 1, "\(ok)")
            try await Task.sleep(nanoseconds: 1_000_000_000)  // a second of the app's tone at baresip
            try await session.close()
            #expect(await session.waitForEnd(timeout: 10))
            #expect(
                await eventually(timeout: 5) { Self.heardByBaresip(phone, hz: 1000) > 0.3 },
                "\(phone.recordings())\n\(phone.report)")
        }
    }
}
