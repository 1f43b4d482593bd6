import Foundation
import Glibc
import IOCore
import IrisAPI
import Media
import Synchronization
import TestSupport
import Testing

@testable import IrisClient

/// The app as a plain RTP endpoint of one codec (PCMU, PCMA, G.722): its SDP offer, a paced
/// tone toward the gateway from a thread of its own, and what it hears, decoded.
final class PlainRTPApp: Sendable {
    let codec: AudioCodec
    let payloadType: UInt8
    let socket: UDPSocket
    private let received = Mutex<[[UInt8]]>([])
    private let running = Atomic<Bool>(false)

    init(_ codec: AudioCodec, payloadType: UInt8) throws {
        self.codec = codec
        self.payloadType = payloadType
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    }

    var sampleRate: Int { codec.nativeSampleRate ?? 8000 }

    /// An offer of our codec and telephone-event, nothing else.
    var offer: String {
        "v=0\r\no=app 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio \(socket.local.port) RTP/AVP \(payloadType) 101\r\n"
            + "a=rtpmap:\(payloadType) \(codec.description)/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
            + "a=ptime:20\r\na=sendrecv\r\n"
    }

    /// Sends `hz` to `port` every 20 ms and keeps what arrives, until `stop()`.
    func start(to port: Int, hz: Double) throws {
        nonisolated(unsafe) let encoder = try LegCodec(codec, sampleRate: sampleRate)
        let destination = try #require(RawSocketAddress(SocketAddress(host: "127.0.0.1", port: port)))
        running.store(true, ordering: .relaxed)
        let (pt, rate) = (payloadType, sampleRate)
        let t = Thread { [self] in
            var seq: UInt16 = 1, ts: UInt32 = 0, n = 0
            var packet = [UInt8](repeating: 0, count: 1500)
            let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { rx.deallocate() }
            var from = RawSocketAddress()
            while running.load(ordering: .relaxed) {
                let frame = rate / 50
                let pcm = (0..<frame).map {
                    Int16(8000 * sin(2 * Double.pi * hz * Double(n * frame + $0) / Double(rate)))
                }
                let size = pcm.withUnsafeBufferPointer { p in
                    packet.withUnsafeMutableBufferPointer {
                        encoder.encode(p, into: UnsafeMutableBufferPointer(rebasing: $0[12...]))
                    }
                }
                let header: [UInt8] = [
                    0x80, pt, UInt8(seq >> 8), UInt8(seq & 0xFF), UInt8(ts >> 24), UInt8((ts >> 16) & 0xFF),
                    UInt8((ts >> 8) & 0xFF), UInt8(ts & 0xFF), 0x12, 0x34, 0x56, 0x78
                ]
                packet.replaceSubrange(0..<12, with: header)
                packet.withUnsafeBytes {
                    _ = socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<(12 + size)]), to: destination)
                }
                seq &+= 1
                ts &+= 160
                n += 1
                while let got = socket.receive(into: rx, from: &from) {
                    if got > 12, rx[1] & 0x7F == pt { received.withLock { $0.append(Array(rx[12..<got])) } }
                }
                usleep(20_000)
            }
        }
        t.start()
    }

    func stop() { running.store(false, ordering: .relaxed) }

    /// The level of `hz` in the last second heard.
    func heard(hz: Double) -> Double {
        guard let decoder = try? LegCodec(codec, sampleRate: sampleRate) else { return 0 }
        let payloads = received.withLock { Array($0.suffix(50)) }
        var pcm: [Int16] = []
        var frame = [Int16](repeating: 0, count: 1920)
        for p in payloads {
            let n = p.withUnsafeBufferPointer { b in
                frame.withUnsafeMutableBufferPointer { decoder.decode(b, into: $0) }
            }
            pcm += frame[0..<n]
        }
        return ReceivedAudio.toneLevel(pcm, hz: hz, sampleRate: sampleRate)
    }
}

extension GatewaySuites {
    /// Opus on the trunk (RFC 7587) against baresip (Debian, its `opus` module) as the
    /// carrier, `irisgw serve` in between, the Swift client (Opus) or a plain RTP app as the
    /// app: offered and answered both ways, passed through when both legs speak the same
    /// codec, transcoded otherwise, and switched by a re-INVITE that changes the codec.
    /// Audio is checked by tone: baresip plays 440 Hz, the app 1 kHz.
    @Suite(
        .enabled(
            if: Baresip.isInstalled
                && ["opus", "g722", "sndfile"].allSatisfy {
                    FileManager.default.fileExists(atPath: "\(Baresip.modules)/\($0).so")
                },
            "needs baresip (Debian baresip) with its opus, g722, sndfile, ausine and aubridge modules"))
    struct GatewayOpusTrunkTests {
        static let target = "+15551230001"
        /// baresip speaks Opus with in-band FEC and DTX, and says so in its fmtp.
        static let opusOptions = Baresip.Options(
            record: true, modules: ["opus", "g722"], extraConfig: "opus_inbandfec\t\tyes\nopus_dtx\t\tyes\n")
        /// baresip with FEC but without DTX, for the call where our encoder speaks to it: with
        /// `usedtx=1` our encoder (as RFC 7587 asks) stops sending once Opus's voice detector
        /// takes the app's steady tone for background noise, which is right but leaves nothing
        /// to count or record.
        static let opusWithoutDTX = Baresip.Options(
            record: true, modules: ["opus", "g722"], extraConfig: "opus_inbandfec\t\tyes\n")

        /// baresip as a carrier over UDP that answers every call with `codecs` (baresip's
        /// names: `opus/48000/2`, `G722/16000/1`). A fixed port (the profile names it), and
        /// libre also binds TLS on the next one: tried again on fresh ports if taken.
        static func carrier(codecs: String) async throws -> Baresip {
            var lastError: Error = SocketError("no free port pair")
            for _ in 0..<3 {
                let port = try freePort()
                guard isPortFree(port + 1, transport: .tcp) else { continue }
                do {
                    return try await Baresip(
                        account: .init(user: target, audioCodecs: codecs, answerMode: "auto"), options: opusOptions,
                        sipPort: port)
                } catch {
                    lastError = error
                }
            }
            throw lastError
        }

        static func profile(to carrier: Baresip, codecs: [String]) throws -> GatewayProcess.Profile {
            var p = GatewayProcess.Profile(proxies: [try #require(carrier.sipPort)])
            p.codecs = codecs
            return p
        }

        /// The first live session, as `GET /v1/sessions` shows it.
        static func snapshot(_ gw: GatewayProcess) -> SessionSnapshot? {
            guard let c = try? gw.connection(), let room = (try? c.sessions())?.first?.roomId else { return nil }
            return try? c.snapshot(roomId: room)
        }

        /// Waits until the gateway has sent baresip `packets` on the trunk leg (1.5 s of audio
        /// at 75), so its recording holds more than the last second it is checked on.
        static func sentToBaresip(_ gw: GatewayProcess, packets: Int) async -> Bool {
            await eventually(timeout: 10) { (snapshot(gw)?.trunk?.packetsSent ?? 0) >= packets }
        }

        /// The `a=` lines of an SDP body that start with `prefix`.
        static func lines(_ body: String, _ prefix: String) -> [String] {
            body.split(whereSeparator: \.isNewline).map(String.init).filter { $0.hasPrefix(prefix) }
        }

        static let ourFmtp =
            "maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;sprop-stereo=0;useinbandfec=1;usedtx=0"

        @Test func outboundWeOfferOpusAndPassTheAppsOpusThrough() async throws {
            let phone = try await Self.carrier(codecs: "opus/48000/2")
            defer { phone.stop() }
            let gw = try await GatewayProcess(profiles: [Self.profile(to: phone, codecs: ["opus", "PCMU"])])
            defer { gw.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(
                gw, target: Self.target, source: .tone(hz: 1000, amplitude: 0.3)
            ) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(phone.report)\n\(gw.printed)")
                let heard = await GatewaySRTPTests.appHears(session, hz: 440)
                #expect(heard > 0.3, "baresip's 440 Hz reached the app at \(heard)")
                let snap = Self.snapshot(gw)
                #expect(snap?.codec == "opus", "\(String(describing: snap))")
                #expect(
                    snap?.trunk?.playout == "relay" && snap?.platform?.playout == "relay", "\(String(describing: snap))"
                )
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            let invite = try #require(
                phone.invites.first ?? phone.sipMessages.first { $0.startLine.hasPrefix("INVITE ") })
            let m = try #require(Self.lines(invite.body, "m=audio").first)
            #expect(m.hasSuffix(" RTP/AVP 111 0 101 110"), "\(invite)")
            #expect(Self.lines(invite.body, "a=rtpmap:110") == ["a=rtpmap:110 telephone-event/48000"], "\(invite)")
            #expect(Self.lines(invite.body, "a=rtpmap:111") == ["a=rtpmap:111 opus/48000/2"], "\(invite)")
            #expect(Self.lines(invite.body, "a=fmtp:111") == ["a=fmtp:111 " + Self.ourFmtp], "\(invite)")
            let records = try await gw.recordsAfterStop()
            #expect(records.first?.codec == "opus")
        }

        /// baresip calls in offering Opus (FEC and DTX in its fmtp); the app joins with Opus:
        /// passthrough both ways, our 200 answers on baresip's payload type with our fmtp.
        @Test func inboundTheCarriersOpusPassesThroughBothWays() async throws {
            var profile = GatewayProcess.Profile()
            profile.codecs = ["opus", "PCMU"]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(audioCodecs: "opus/48000/2"), options: Self.opusOptions,
                dial: "sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            defer { phone.stop() }
            let (session, rec) = try await GatewaySRTPTests.answerAsApp(gw, listener, phone)
            defer { session.stop() }
            #expect(await GatewaySRTPTests.appHears(session, hz: 440) > 0.3, "baresip's 440 Hz at the app")
            let snap = Self.snapshot(gw)
            #expect(snap?.codec == "opus" && snap?.trunk?.playout == "relay", "\(String(describing: snap))")
            #expect(await Self.sentToBaresip(gw, packets: 75), "\(String(describing: Self.snapshot(gw)))")
            phone.send("/hangup")
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            // baresip's sndfile finishes its WAV when the call ends.
            #expect(
                await eventually(timeout: 8) { GatewaySRTPTests.heardByBaresip(phone, hz: 1000) > 0.3 },
                "the app's 1 kHz at baresip: \(GatewaySRTPTests.heardByBaresip(phone, hz: 1000))\n\(phone.report)")
            let offer = try #require(phone.invites.first, phone.report)
            let offered = try #require(
                Self.lines(offer.body, "a=rtpmap:").first { $0.lowercased().contains("opus/48000/2") })
            let pt = String(offered.dropFirst("a=rtpmap:".count).prefix { $0 != " " })
            #expect(Self.lines(offer.body, "a=fmtp:\(pt)").first?.contains("useinbandfec=1") == true, "\(offer)")
            #expect(Self.lines(offer.body, "a=fmtp:\(pt)").first?.contains("usedtx=1") == true, "\(offer)")
            let ok = try #require(phone.inviteResponses.first { $0.statusCode == 200 }, phone.report)
            #expect(Self.lines(ok.body, "a=rtpmap:\(pt) ") == ["a=rtpmap:\(pt) opus/48000/2"], "\(ok)")
            #expect(Self.lines(ok.body, "a=fmtp:\(pt) ") == ["a=fmtp:\(pt) " + Self.ourFmtp], "\(ok)")
        }

        /// The app joins with PCMU only: the call transcodes PCMU <-> Opus (our encoder toward
        /// baresip, as its fmtp asks), and both tones cross.
        @Test func inboundOpusTrunkToAPCMUAppTranscodes() async throws {
            var profile = GatewayProcess.Profile()
            profile.codecs = ["opus"]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(audioCodecs: "opus/48000/2"), options: Self.opusWithoutDTX,
                dial: "sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            defer { phone.stop() }
            let note = try #require(await listener.next(timeout: 10), "\(phone.report)\n\(gw.printed)")
            let app = try PlainRTPApp(.pcmu, payloadType: 0)
            defer { app.stop() }
            let sdp = app.offer.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            let joined = try await GatewayAPIErrorTests.request(
                gw, "POST", "/v1/sessions/\(note.roomid!)/join",
                body: "{\"roomToken\":\"\(note.roomtoken!)\",\"media\":{\"sdp\":\"\(sdp)\"}}")
            #expect(joined.status == 200, "\(joined.text)")
            let answer = try JSONDecoder().decode(SessionResponse.self, from: Data(joined.text.utf8))
            let port = try #require(
                Self.lines(answer.media?.sdp ?? "", "m=audio").first?.split(separator: " ").dropFirst().first
                    .flatMap { Int($0) })
            #expect(Self.lines(answer.media?.sdp ?? "", "a=rtpmap:0 ") == ["a=rtpmap:0 PCMU/8000"])
            try app.start(to: port, hz: 1000)
            var level = 0.0
            #expect(
                await eventually(timeout: 8) {
                    level = app.heard(hz: 440)
                    return level > 0.3
                }, "baresip's 440 Hz at the PCMU app: \(level)")
            let snap = Self.snapshot(gw)
            #expect(snap?.codec == "opus" && snap?.trunk?.playout != "relay", "\(String(describing: snap))")
            #expect(await Self.sentToBaresip(gw, packets: 75), "\(String(describing: Self.snapshot(gw)))")
            phone.send("/hangup")
            #expect(await eventually(timeout: 10) { (try? gw.connection().sessions())?.isEmpty ?? false })
            #expect(
                await eventually(timeout: 8) { GatewaySRTPTests.heardByBaresip(phone, hz: 1000) > 0.3 },
                "the app's 1 kHz at baresip: \(GatewaySRTPTests.heardByBaresip(phone, hz: 1000))\n\(phone.report)")
        }

        /// The app offers the trunk's own codec (G.722 or PCMA, besides PCMU): the platform
        /// leg takes it, the call passes packets through, and baresip's tone reaches the app.
        @Test(arguments: [("G722", AudioCodec.g722, UInt8(9), "G722/16000/1"), ("PCMA", .pcma, 8, "PCMA")])
        func outboundTheAppsCodecPassesThrough(
            name: String, codec: AudioCodec, pt: UInt8, baresip: String
        )
            async throws
        {
            let phone = try await Self.carrier(codecs: baresip)
            defer { phone.stop() }
            let gw = try await GatewayProcess(profiles: [Self.profile(to: phone, codecs: [name, "PCMU"])])
            defer { gw.stop() }
            let app = try PlainRTPApp(codec, payloadType: pt)
            defer { app.stop() }
            let offer = app.offer.replacingOccurrences(of: " RTP/AVP \(pt) 101", with: " RTP/AVP 0 \(pt) 101")
            let created = try await GatewayAPIErrorTests.request(
                gw, "POST", "/v1/sessions", body: GatewayAPIErrorTests.create(target: Self.target, sdp: offer))
            #expect(created.status == 201, "\(created.text)")
            let answer = try JSONDecoder().decode(SessionResponse.self, from: Data(created.text.utf8))
            let sdp = answer.media?.sdp ?? ""
            #expect(Self.lines(sdp, "m=audio").first?.contains(" RTP/AVP \(pt)") == true, "\(sdp)")
            let port = try #require(
                Self.lines(sdp, "m=audio").first?.split(separator: " ").dropFirst().first.flatMap { Int($0) })
            try app.start(to: port, hz: 1000)
            var level = 0.0
            #expect(
                await eventually(timeout: 10) {
                    level = app.heard(hz: 440)
                    return level > 0.3
                }, "baresip's 440 Hz at the \(name) app: \(level)\n\(phone.report)")
            let snap = Self.snapshot(gw)
            #expect(snap?.codec == name && snap?.trunk?.playout == "relay", "\(String(describing: snap))")
            _ = try await GatewayAPIErrorTests.request(gw, "DELETE", "/v1/sessions/\(answer.roomId)")
        }

        /// The carrier answers PCMU (transcoding to the app's Opus), then re-INVITEs to Opus
        /// (passthrough) and back to PCMU (transcoding): each answer of ours names the codec
        /// offered, and the call follows it.
        @Test func aReinviteThatChangesTheCodecSwitchesPassthrough() async throws {
            let (sipp, gw) = try await carrierAndGateway(Self.reinvitingCarrier) { $0.codecs = ["PCMU", "opus"] }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw, target: Self.target) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
                var seen: [String] = []
                // PCMU transcoded, then Opus relayed, then PCMU transcoded again.
                for (codec, relay) in [("PCMU", false), ("opus", true), ("PCMU", false)] {
                    let ok = await eventually(timeout: 10) {
                        let s = Self.snapshot(gw)
                        let now = "\(s?.codec ?? "-")/\(s?.trunk?.playout ?? "-")"
                        if seen.last != now { seen.append(now) }
                        return s?.codec == codec && (s?.trunk?.playout == "relay") == relay
                    }
                    #expect(ok, "\(codec) relay=\(relay): went \(seen)\n\(sipp.report)")
                }
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
        }

        /// SIPp answers PCMU, then re-INVITEs offering only Opus, then only PCMU (each after
        /// a second, each ACKed), then waits for our BYE.
        static var reinvitingCarrier: String {
            func reinvite(_ cseq: Int, version: Int, media: String) -> String {
                """
                  <pause milliseconds="1500"/>
                  <send retrans="500"><![CDATA[
                INVITE [$contact] SIP/2.0
                Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                From:[$to];tag=[pid]c[call_number]
                To:[$from]
                [last_Call-ID:]
                CSeq: \(cseq) INVITE
                Contact: <sip:carrier@[local_ip]:[local_port]>
                Max-Forwards: 70
                Content-Type: application/sdp
                Content-Length: [len]

                v=0
                o=carrier 1 \(version) IN IP4 [local_ip]
                s=-
                c=IN IP4 [media_ip]
                t=0 0
                \(media)
                a=ptime:20
                a=sendrecv

                ]]></send>
                  <recv response="200"/>
                  <send><![CDATA[
                ACK [$contact] SIP/2.0
                Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                From:[$to];tag=[pid]c[call_number]
                [last_To:]
                [last_Call-ID:]
                CSeq: \(cseq) ACK
                Max-Forwards: 70
                Content-Length: 0

                ]]></send>

                """
            }
            let answer = CarrierScenarios.answer(byeAfterMs: 0)
            let head = answer.components(separatedBy: "  <pause milliseconds=\"0\"/>")[0]
            return head
                + reinvite(
                    1, version: 2,
                    media: "m=audio [media_port] RTP/AVP 96\na=rtpmap:96 opus/48000/2\na=fmtp:96 useinbandfec=1")
                + reinvite(2, version: 3, media: "m=audio [media_port] RTP/AVP 0\na=rtpmap:0 PCMU/8000")
                + "  <recv request=\"BYE\"/>\n  <send><![CDATA[\nSIP/2.0 200 OK\n[last_Via:]\n[last_From:]\n[last_To:]\n"
                + "[last_Call-ID:]\n[last_CSeq:]\nContent-Length: 0\n\n]]></send>\n</scenario>\n"
        }
    }
}
