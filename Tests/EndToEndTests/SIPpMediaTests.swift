import Foundation
import Media
import SDP
import SIP
import Synchronization
import TestSupport
import Testing

/// SIPp as a real media peer of the engine: its INVITE is answered with SDP pointing at a
/// `MediaCall`'s trunk leg; SIPp plays its RTP pcaps (G.711 A-law speech, RFC 4733 digits)
/// or echoes RTP back (`-rtp_echo`), and an "app" UDP socket on the platform leg decodes
/// what the engine sends it as Opus. Serialized: these run in real time.
@Suite(.serialized) struct SIPpMediaTests {
    static let pcaps = "/usr/share/sip-tester"

    /// SIPp calls us, plays g711a.pcap (7 s of speech, 30 ms A-law packets) after the ACK:
    /// the app gets a contiguous 20 ms Opus stream whose audio has speech energy for
    /// about the pcap's length, and nothing of it is lost.
    @Test func g711aSpeechReachesTheAppAsOpus() async throws {
        try #require(SIPp.isInstalled && FileManager.default.fileExists(atPath: "\(Self.pcaps)/g711a.pcap"))
        let media = try MediaAnswerer(trunk: .pcma, payloadType: 8)
        defer { media.shutdown() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        await agent.ua.loop.run { agent.ua.delegate = media }
        agent.delegate = media
        let sipp = try SIPp(
            .inline(
                name: "play-g711a",
                xml: SIPpMediaScenarios.uac(codec: "8 PCMA/8000", plays: ["g711a.pcap"], pauseMs: 7400)),
            remote: agent.local, timeout: 15)
        defer { sipp.stop() }

        #expect(await sipp.waitForExit(timeout: 15) == 0, "\(sipp.report)")
        _ = await eventually(timeout: 2) { media.ended }
        media.app.drain()

        let out = media.app.packets(payloadType: 111)
        // 236 packets of 30 ms = 7.08 s = 354 frames of 20 ms (and silence after, until the BYE).
        #expect(out.count >= 340, "\(out.count) Opus packets")
        #expect(
            zip(out, out.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 960
            })
        let decoder = try OpusDecoder(sampleRate: 8000)
        var pcm: [Int16] = []
        let levels = try out.map { p -> Double in
            _ = try decoder.decode(p.payload, into: &pcm)
            return (pcm.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(pcm.count, 1))).squareRoot()
        }
        // Speech: loud frames (RMS over 300, the pcap peaks at several thousand) spread
        // over the 7 s, not one burst.
        let loud = levels.indices.filter { levels[$0] > 300 }
        #expect(loud.count >= 150, "\(loud.count) loud frames of \(levels.count)")
        #expect(
            (loud.last ?? 0) - (loud.first ?? 0) >= 250, "speech spans frames \(loud.first ?? -1)...\(loud.last ?? -1)")
        let stats = try #require(media.statistics?[.trunk])
        #expect(stats.packetsReceived == 236)
        #expect(stats.packetsLost == 0)
        #expect(stats.concealed <= 5, "\(stats)")
    }

    /// SIPp plays RFC 4733 pcaps one after another (digit 1, 5, #): the engine reports
    /// each digit on the trunk leg, in order, and regenerates them toward the app.
    @Test func rfc4733PcapDigitsAreReported() async throws {
        try #require(SIPp.isInstalled && FileManager.default.fileExists(atPath: "\(Self.pcaps)/dtmf_2833_1.pcap"))
        let media = try MediaAnswerer(trunk: .pcmu, payloadType: 0)
        defer { media.shutdown() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        await agent.ua.loop.run { agent.ua.delegate = media }
        agent.delegate = media
        let plays = ["dtmf_2833_1.pcap", "dtmf_2833_5.pcap", "dtmf_2833_pound.pcap"]
        let sipp = try SIPp(
            .inline(name: "play-dtmf", xml: SIPpMediaScenarios.uac(codec: "0 PCMU/8000", plays: plays, pauseMs: 400)),
            remote: agent.local, timeout: 10)
        defer { sipp.stop() }

        #expect(await sipp.waitForExit(timeout: 10) == 0, "\(sipp.report)")
        _ = await eventually(timeout: 2) { media.digits.count >= 3 }
        #expect(media.digits == "15#", "\(media.events)")
        // Each pcap holds one event whose end reports say 2240 units (280 ms at 8 kHz).
        let durations = media.events.compactMap { if case .dtmf(_, _, let ms) = $0 { ms } else { nil } }
        #expect(durations == [280, 280, 280])
        _ = await eventually(
            timeout: 2,
            {
                media.app.drain(); return media.regeneratedDigits.count >= 3
            })
        #expect(media.regeneratedDigits == "15#")
    }

    /// SIPp as UAS with `-rtp_echo`: we call it with an offer pointing at the trunk leg;
    /// the app's 1 kHz Opus tone goes out as PCMU, SIPp sends it straight back, and the
    /// app hears the tone again.
    @Test func echoedToneComesBack() async throws {
        try #require(SIPp.isInstalled)
        let media = try MediaAnswerer(trunk: .pcmu, payloadType: 0)
        defer { media.shutdown() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try SIPp(.builtIn("uas"), timeout: 10, arguments: ["-rtp_echo"])
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")

        let call = try media.open(remote: nil)
        let recorder = CallRecorder()
        let offer = SessionDescription(
            origin: SDPOrigin(sessionID: "5151", sessionVersion: 1, addrType: "IP4", address: "127.0.0.1"),
            connection: .ip4(call.trunkAddress.host),
            media: [
                .audio(
                    port: UInt16(call.trunkAddress.port), codecs: [.pcmu], telephoneEvent: .telephoneEvent(), ptime: 20)
            ])
        let sip = await agent.call(sipp, recorder: recorder, sdp: offer)
        #expect(await recorder.waitFor(.connected, timeout: 5), "\(recorder.events)\n\(sipp.report)")
        let answer = try await #require(agent.onLoop { sip.remoteSDP }, "no SDP in SIPp's answer")
        let remote = try #require(MediaAnswerer.rtpAddress(answer))
        call.setRemote(.trunk, remote)

        let encoder = try OpusEncoder(sampleRate: 8000)
        let frames = try (0..<50).map { n in
            let pcm = (0..<160).map { Int16(8000 * sin(2 * Double.pi * 1000 * Double(n * 160 + $0) / 8000)) }
            var packet: [UInt8] = []
            _ = try encoder.encode(pcm, into: &packet)
            return packet
        }
        let app = media.app
        await pacedFrames(frames.count) { n in
            app.send(payloadType: 111, payload: frames[n], to: call.platformAddress)
            app.timestamp &+= 960
        }
        _ = await eventually(timeout: 1) {
            app.drain(); return app.packets(payloadType: 111).count >= 40
        }
        await agent.onLoop { sip.hangup() }
        _ = await recorder.waitForEnd(timeout: 5)

        let out = app.packets(payloadType: 111)
        #expect(out.count >= 40, "\(out.count) packets back")
        let decoder = try OpusDecoder(sampleRate: 8000)
        var pcm: [Int16] = []
        var all: [Int16] = []
        for p in out.dropFirst(10) {
            _ = try decoder.decode(p.payload, into: &pcm)
            all += pcm
        }
        // The tone dominates its neighbours (a share of total energy would count a frame
        // concealed on a busy machine against it).
        let at1000 = Goertzel(frequency: 1000, sampleRate: 8000).power(all)
        for other in [700.0, 1400] {
            #expect(
                at1000 > 20 * Goertzel(frequency: other, sampleRate: 8000).power(all),
                "1 kHz after the echo vs \(other) Hz")
        }
        let stats = call.statistics()
        #expect((stats[.trunk]?.packetsReceived ?? 0) >= 40, "\(stats)")
        #expect(stats[.trunk]?.remote == remote)
        call.close()
    }
}

/// SIPp scenarios for the media tests.
enum SIPpMediaScenarios {
    /// SIPp as UAC offering `codec` ("8 PCMA/8000") and telephone-event 101; after the ACK
    /// it plays each pcap of `plays` (from /usr/share/sip-tester), waiting `pauseMs` after
    /// each, then hangs up.
    static func uac(codec: String, plays: [String], pauseMs: Int) -> String {
        let pt = codec.split(separator: " ")[0]
        let media = plays.map {
            """
              <nop><action><exec play_pcap_audio="\(SIPpMediaTests.pcaps)/\($0)"/></action></nop>
              <pause milliseconds="\(pauseMs)"/>
            """
        }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="uac-play">
              <send retrans="500"><![CDATA[
            INVITE sip:service@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]play[call_number]
            To: <sip:service@[remote_ip]:[remote_port]>
            Call-ID: [call_id]
            CSeq: 1 INVITE
            Contact: <sip:sipp@[local_ip]:[local_port]>
            Max-Forwards: 70
            Content-Type: application/sdp
            Content-Length: [len]

            v=0
            o=sipp 1 1 IN IP4 [local_ip]
            s=-
            c=IN IP4 [media_ip]
            t=0 0
            m=audio [media_port] RTP/AVP \(pt) 101
            a=rtpmap:\(codec)
            a=rtpmap:101 telephone-event/8000
            a=fmtp:101 0-16
            a=ptime:20

              ]]></send>
              <recv response="100" optional="true"/>
              <recv response="180" optional="true"/>
              <recv response="200" rtd="true"/>
              <send><![CDATA[
            ACK sip:service@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]play[call_number]
            [last_To:]
            Call-ID: [call_id]
            CSeq: 1 ACK
            Max-Forwards: 70
            Content-Length: 0

              ]]></send>
            \(media)
              <send retrans="500"><![CDATA[
            BYE sip:service@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]play[call_number]
            [last_To:]
            Call-ID: [call_id]
            CSeq: 2 BYE
            Max-Forwards: 70
            Content-Length: 0

              ]]></send>
              <recv response="200"/>
            </scenario>
            """
    }
}

/// The application side of the media tests: a media engine, and a delegate that answers
/// incoming calls with a `MediaCall` whose trunk leg takes `trunk` (telephone-event 101)
/// and whose platform leg (Opus 111, telephone-event 101) sends to `app`.
final class MediaAnswerer: SIPUserAgentDelegate, SIPCallDelegate, @unchecked Sendable {
    let engine: MediaEngine
    let app: RTPSocketPeer
    let trunk: AudioCodec
    let payloadType: UInt8
    private let state = Mutex<
        (calls: [MediaCall], events: [MediaEvent], ended: Bool, statistics: [MediaLeg: MediaLegStatistics]?)
    >(([], [], false, nil))

    init(trunk: AudioCodec, payloadType: UInt8) throws {
        // 40 ports the OS says are free now (the engine skips a pair taken later).
        engine = try MediaEngine(
            configuration: .init(threads: 1, portRange: try freePortRange(count: 40), portQuarantine: 0))
        app = try RTPSocketPeer()
        self.trunk = trunk
        self.payloadType = payloadType
    }

    func shutdown() {
        for call in state.withLock({ $0.calls }) { call.close() }
        engine.shutdown()
    }

    var events: [MediaEvent] { state.withLock { $0.events } }
    var ended: Bool { state.withLock { $0.ended } }
    /// The trunk leg's statistics when the call ended.
    var statistics: [MediaLeg: MediaLegStatistics]? { state.withLock { $0.statistics } }
    var digits: String { String(events.compactMap { if case .dtmf(.trunk, let d, _) = $0 { d } else { nil } }) }

    /// The digits in the telephone-events the app received (48 kHz clock, beside Opus).
    var regeneratedDigits: String {
        var receiver = DTMFReceiver(configuration: .init(clockRate: 48_000))
        var digits = ""
        for (i, p) in app.packets(payloadType: 101).enumerated() {
            guard let report = try? TelephoneEvent.parse(p.payload) else { continue }
            for case .ended(let d, _) in receiver.receive(
                report, timestamp: p.timestamp, sequenceNumber: p.sequenceNumber, now: Double(i) * 0.02)
            {
                digits.append(d.character)
            }
        }
        for case .ended(let d, _) in receiver.reset() { digits.append(d.character) }
        return digits
    }

    /// Opens a call's media with the trunk leg sending to `remote` (nil: not known yet).
    func open(remote: SocketAddress?) throws -> MediaCall {
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: trunk, payloadType: payloadType, telephoneEventPayloadType: 101, remote: remote),
                platform: .init(
                    codec: .opus(.init()), payloadType: 111, telephoneEventPayloadType: 101, remote: app.address)),
            events: { [weak self] e in self?.state.withLock { $0.events.append(e) } })
        state.withLock { $0.calls.append(call) }
        return call
    }

    /// The RTP address of the first audio stream of `sdp`.
    static func rtpAddress(_ sdp: SessionDescription) -> SocketAddress? {
        guard let index = sdp.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }),
            let connection = sdp.connection(ofMedia: index)
        else { return nil }
        return SocketAddress(host: connection.address, port: Int(sdp.media[index].port))
    }

    func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        call.delegate = self
        guard let offer = call.remoteSDP ?? call.invite.sdp, let remote = Self.rtpAddress(offer),
            let media = try? open(remote: remote)
        else {
            call.reject(status: 488)
            return
        }
        let map = trunk == .pcma ? RTPMap.pcma : RTPMap.pcmu
        let answer = SessionDescription(
            origin: SDPOrigin(sessionID: "6161", sessionVersion: 1, addrType: "IP4", address: media.trunkAddress.host),
            connection: .ip4(media.trunkAddress.host),
            media: [
                .audio(
                    port: UInt16(media.trunkAddress.port), codecs: [map], telephoneEvent: .telephoneEvent(), ptime: 20)
            ])
        call.answer(sdp: answer)
    }

    /// On the SIP loop: the statistics come back from the media thread (a loop never waits
    /// on another), and the call counts as ended once they are in.
    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        guard let last = state.withLock({ $0.calls.last }) else { return ended(with: nil) }
        last.statistics { [self] in ended(with: $0) }
    }

    private func ended(with stats: [MediaLeg: MediaLegStatistics]?) {
        state.withLock {
            $0.statistics = stats
            $0.ended = true
        }
    }
}

/// The app's UDP socket: sends RTP it builds and keeps what arrives.
final class RTPSocketPeer: @unchecked Sendable {
    struct Received: Sendable {
        let bytes: [UInt8]
        var payloadType: UInt8 { bytes[1] & 0x7F }
        var sequenceNumber: UInt16 { UInt16(bytes[2]) << 8 | UInt16(bytes[3]) }
        var timestamp: UInt32 { bytes[4...7].reduce(0) { $0 << 8 | UInt32($1) } }
        var payload: [UInt8] { Array(bytes[12...]) }
    }

    let socket: UDPSocket
    var address: SocketAddress { socket.local }
    let ssrc = UInt32.random(in: 1...UInt32.max)
    var sequenceNumber = UInt16.random(in: 0...UInt16.max)
    var timestamp = UInt32.random(in: 0...UInt32.max)
    private let lock = NSLock()
    private var received: [Received] = []
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)

    init() throws {
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    }

    deinit { buffer.deallocate() }

    func send(payloadType: UInt8, payload: [UInt8], to: SocketAddress) {
        var packet: [UInt8] = [
            0x80, payloadType, UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF),
            UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xFF), UInt8((timestamp >> 8) & 0xFF),
            UInt8(timestamp & 0xFF),
            UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)
        ]
        packet += payload
        sequenceNumber &+= 1
        guard let raw = RawSocketAddress(to) else { return }
        packet.withUnsafeBytes { _ = socket.send($0, to: raw) }
    }

    /// Where the last datagram came from (the far end's RTP socket, for symmetric RTP).
    private(set) var lastSource: SocketAddress?

    /// Keeps whatever has arrived since the last call.
    func drain() {
        lock.withLock {
            var from = RawSocketAddress()
            while let n = socket.receive(into: buffer, from: &from) {
                if n >= 12 { received.append(Received(bytes: Array(buffer[0..<n]))) }
                lastSource = from.address
            }
        }
    }

    func packets(payloadType: UInt8) -> [Received] {
        lock.withLock { received.filter { $0.payloadType == payloadType } }
    }
}

/// Runs `body(n)` for n = 0..<count every 20 ms on a thread of its own (the cooperative pool
/// may be busy with other tests), against the monotonic clock.
func pacedFrames(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            var next = timespec()
            clock_gettime(CLOCK_MONOTONIC, &next)
            for n in 0..<count {
                body(n)
                next.tv_nsec += 20_000_000
                if next.tv_nsec >= 1_000_000_000 {
                    next.tv_nsec -= 1_000_000_000
                    next.tv_sec += 1
                }
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
            }
            done.resume()
        }
        thread.start()
    }
}
