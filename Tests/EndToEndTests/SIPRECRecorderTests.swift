import Foundation
import Gateway
import IOCore
import Media
import SIP
import Synchronization
import TestSupport
import Testing

/// The SIPREC client (RFC 7866) against SIPp as the recording server, over real UDP on
/// 127.0.0.1: the INVITE's headers, SDP and metadata checked by SIPp, both streams' RTP
/// counted on the test's own sockets and one decoded, metadata updates, the BYE, and what
/// a refusing or confused recording server gets reported as.
@Suite(.timeLimit(.minutes(2)))
struct SIPRECRecorderTests {
    /// The 200's SDP: stream 1 to `port1`, stream 2 to `port2` (0: rejected).
    static func answer(port1: Int, port2: Int?) -> String {
        var sdp = "v=0\r\no=srs 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        sdp += "m=audio \(port1) RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=recvonly\r\na=label:1\r\n"
        if let port2 { sdp += "m=audio \(port2) RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=recvonly\r\na=label:2\r\n" }
        return sdp
    }

    static func ok(_ body: String, tag: Bool) -> String {
        """
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:]\(tag ? ";tag=srs[call_number]" : "")
        [last_Call-ID:]
        [last_CSeq:]
        Contact: <sip:srs@[local_ip]:[local_port]>
        \(body.isEmpty ? "" : "Content-Type: application/sdp\n")Content-Length: [len]

        \(body.replacingOccurrences(of: "\r\n", with: "\n"))]]></send>
        """
    }

    /// Checks on a request SIPp received: each regular expression must match the message.
    static func recv(_ method: String, checks: [(String, String)] = []) -> String {
        guard !checks.isEmpty else { return "  <recv request=\"\(method)\"/>" }
        let actions = checks.map { name, regexp in
            "      <ereg regexp=\"\(regexp)\" search_in=\"msg\" check_it=\"true\" assign_to=\"\(name)\"/>"
        }
        // SIPp refuses variables that are assigned and never used: Reference uses them.
        let names = checks.map(\.0).joined(separator: ",")
        return "  <recv request=\"\(method)\">\n    <action>\n" + actions.joined(separator: "\n")
            + "\n    </action>\n  </recv>\n  <Reference variables=\"\(names)\"/>"
    }

    static let byeOK = """
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
        """

    /// What the first INVITE must show (RFC 7866 §6.1.1, §7.1.1, §9.1).
    static let inviteChecks = [
        ("require", "Require: siprec"), ("multipart", "Content-Type: multipart/mixed;boundary="),
        ("srcTag", "Contact: [^\\r\\n]*;\\+sip\\.src"), ("label1", "a=label:1"), ("label2", "a=label:2"),
        ("sendonly1", "a=sendonly[[:space:]]+a=label:1"), ("sendonly2", "a=sendonly[[:space:]]+a=label:2"),
        ("metadata", "Content-Type: application/rs-metadata\\+xml"),
        ("disposition", "Content-Disposition: recording-session"),
        ("recording", "&lt;recording xmlns='urn:ietf:params:xml:ns:recording:1'&gt;"),
        ("carrier", "aor=\\\"sip:\\+15551230001@carrier.example\\\""), ("app", "aor=\\\"sip:agent@app.example\\\"")
    ]

    /// The recording server: 200 with the test's sockets, then the update, the final update
    /// (with the stop time), the BYE.
    static func srs(port1: Int, port2: Int?) -> String {
        let sdp = answer(port1: port1, port2: port2)
        return """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="SIPREC recording server">
            \(recv("INVITE", checks: inviteChecks))
            \(ok(sdp, tag: true))
              <recv request="ACK"/>
            \(recv("INVITE", checks: [("update", "aor=\\\"sip:\\+15559990000@carrier.example\\\""), ("metadata2", "recording-session"),
                    ("srcTag2", "Contact: [^\\r\\n]*;\\+sip\\.src")]))
            \(ok(sdp, tag: false))
              <recv request="ACK"/>
            \(recv("INVITE", checks: [("stop", "&lt;stop-time&gt;"), ("gone", "&lt;disassociate-time&gt;")]))
            \(ok(sdp, tag: false))
              <recv request="ACK"/>
              <recv request="BYE"/>
            \(byeOK)
            </scenario>
            """
    }

    /// Events as they arrive (on the SIP loop).
    final class Events: Sendable {
        private let list = Mutex<[SIPRECEvent]>([])
        func append(_ e: SIPRECEvent) { list.withLock { $0.append(e) } }
        var all: [SIPRECEvent] { list.withLock { $0 } }
        var ended: SIPRECEndReason? {
            for case .ended(let r) in all { return r }
            return nil
        }
    }

    static func recorder(
        _ agent: TestAgent, srs: SIPp, events: Events, answerTimeout: Double = 5
    ) async throws -> SIPRECRecorder {
        let ua = agent.ua
        let settings = SIPRECSettings(srs: srs.uri, answerTimeout: answerTimeout, rtpBindHost: "127.0.0.1")
        return try await ua.loop.run { () -> Result<SIPRECRecorder, any Error> in
            Result {
                try SIPRECRecorder(
                    ua: ua, settings: settings, sipSessionID: "c9c1c24abd2e5d05@127.0.0.1",
                    participants: [
                        .carrier(aor: "sip:+15551230001@carrier.example", name: "Carrier <A>"),
                        .application(aor: "sip:agent@app.example")
                    ], onEvent: { events.append($0) })
            }.map { r in
                r.start()
                return r
            }
        }.get()
    }

    /// A 20 ms frame of a sine at `frequency`, 8 kHz, starting at sample `n * 160`.
    static func tone(_ frequency: Double, frame n: Int) -> [Int16] {
        (0..<160).map { i in Int16(8000 * sin(2 * Double.pi * frequency * Double(n * 160 + i) / 8000)) }
    }

    @Test func recordsBothStreamsUpdatesAndStops() async throws {
        try #require(SIPp.isInstalled)
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let inbound = try RTPSocketPeer(), outbound = try RTPSocketPeer()
        let sipp = try await SIPp.listening(
            .inline(name: "srs", xml: Self.srs(port1: inbound.address.port, port2: outbound.address.port)))
        defer { sipp.stop() }
        let events = Events()
        let recorder = try await Self.recorder(agent, srs: sipp, events: events)
        #expect(await eventually(timeout: 10) { events.all.contains(.recording(streams: 2)) }, sipp.report)

        // The media thread's part: frames of two tones, paced as the engine paces them.
        await pacedFrames(50) { n in
            let a = Self.tone(1000, frame: n), b = Self.tone(400, frame: n)
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in recorder.mediaAudio(inbound: x, outbound: y, sampleRate: 8000) }
            }
        }
        let arrived = await eventually(
            timeout: 5,
            drain: {
                inbound.drain(); outbound.drain()
            }
        ) {
            inbound.packets(payloadType: 0).count >= 45 && outbound.packets(payloadType: 0).count >= 45
        }
        #expect(
            arrived,
            "inbound \(inbound.packets(payloadType: 0).count), outbound \(outbound.packets(payloadType: 0).count)")
        #expect(recorder.packetsSent == [50, 50])
        for (peer, frequency) in [(inbound, 1000.0), (outbound, 400.0)] {
            let packet = try #require(peer.packets(payloadType: 0).dropFirst(10).first)
            #expect(packet.payload.count == 160)
            var pcm: [Int16] = []
            G711.decodeULaw(packet.payload, into: &pcm)
            #expect(Goertzel(frequency: frequency, sampleRate: 8000).energyRatio(pcm) > 0.8, "\(frequency) Hz")
            let sequence = peer.packets(payloadType: 0).map(\.sequenceNumber)
            #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        }

        // A transfer: the carrier's side is someone else now.
        await agent.ua.loop.run {
            recorder.update(participants: [
                .carrier(aor: "sip:+15559990000@carrier.example"), .application(aor: "sip:agent@app.example")
            ])
        }
        await agent.ua.loop.run { recorder.stop() }
        #expect(await eventually(timeout: 10) { events.ended != nil }, sipp.report)
        #expect(events.ended == .stopped)
        #expect(!events.all.contains { if case .updateRefused = $0 { true } else { false } })
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        #expect(sipp.received("BYE ") == 1)
        // Stopped means no more RTP.
        let before = recorder.packetsSent
        let silence = [Int16](repeating: 0, count: 160)
        silence.withUnsafeBufferPointer { recorder.mediaAudio(inbound: $0, outbound: $0, sampleRate: 8000) }
        #expect(recorder.packetsSent == before)
    }

    /// A 16 kHz call (G.722 trunk) is sent as PCMU at 8 kHz; a stream the answer rejects
    /// (port 0) is not sent at all.
    @Test func sendsOnlyTheStreamsTheAnswerTakesAt8kHz() async throws {
        try #require(SIPp.isInstalled)
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let inbound = try RTPSocketPeer()
        let sdp = Self.answer(port1: inbound.address.port, port2: 0)
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="SIPREC server taking one stream">
            \(Self.recv("INVITE"))
            \(Self.ok(sdp, tag: true))
              <recv request="ACK"/>
            \(Self.recv("INVITE"))
            \(Self.ok(sdp, tag: false))
              <recv request="ACK"/>
              <recv request="BYE"/>
            \(Self.byeOK)
            </scenario>
            """
        let sipp = try await SIPp.listening(.inline(name: "srs-one", xml: xml))
        defer { sipp.stop() }
        let events = Events()
        let recorder = try await Self.recorder(agent, srs: sipp, events: events)
        #expect(await eventually(timeout: 10) { events.all.contains(.recording(streams: 1)) }, sipp.report)
        let wide = (0..<320).map { i in Int16(8000 * sin(2 * Double.pi * 1000 * Double(i) / 16000)) }
        for _ in 0..<10 {
            wide.withUnsafeBufferPointer { recorder.mediaAudio(inbound: $0, outbound: $0, sampleRate: 16000) }
        }
        #expect(await eventually(timeout: 5, drain: inbound.drain) { inbound.packets(payloadType: 0).count == 10 })
        #expect(recorder.packetsSent == [10, 0])
        let packet = try #require(inbound.packets(payloadType: 0).last)
        #expect(packet.payload.count == 160)
        var pcm: [Int16] = []
        G711.decodeULaw(packet.payload, into: &pcm)
        #expect(Goertzel(frequency: 1000, sampleRate: 8000).energyRatio(pcm) > 0.8)
        await agent.ua.loop.run { recorder.stop() }
        #expect(await eventually(timeout: 10) { events.ended == .stopped }, sipp.report)
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
    }

    @Test func aRefusalIsReported() async throws {
        try #require(SIPp.isInstalled)
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="SIPREC server refusing">
            \(Self.recv("INVITE", checks: [("require", "Require: siprec")]))
              <send><![CDATA[
            SIP/2.0 488 Not Acceptable Here
            [last_Via:]
            [last_From:]
            [last_To:];tag=srs[call_number]
            [last_Call-ID:]
            [last_CSeq:]
            Content-Length: 0

            ]]></send>
              <recv request="ACK"/>
            </scenario>
            """
        let sipp = try await SIPp.listening(.inline(name: "srs-488", xml: xml))
        defer { sipp.stop() }
        let events = Events()
        let recorder = try await Self.recorder(agent, srs: sipp, events: events)
        #expect(await eventually(timeout: 10) { events.ended != nil }, sipp.report)
        #expect(events.all == [.ended(.refused(status: 488))])
        // Frames after the refusal go nowhere; update and stop change nothing.
        let silence = [Int16](repeating: 0, count: 160)
        silence.withUnsafeBufferPointer { recorder.mediaAudio(inbound: $0, outbound: $0, sampleRate: 8000) }
        #expect(recorder.packetsSent == [0, 0])
        await agent.ua.loop.run {
            recorder.update(participants: [])
            recorder.stop()
        }
        #expect(events.all == [.ended(.refused(status: 488))])
        #expect(await agent.ua.loop.run { recorder.phase } == .ended)
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
    }

    @Test func aSilentServerTimesOut() async throws {
        try #require(SIPp.isInstalled)
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="SIPREC server saying nothing">
            \(Self.recv("INVITE"))
            </scenario>
            """
        let sipp = try await SIPp.listening(.inline(name: "srs-silent", xml: xml))
        defer { sipp.stop() }
        let events = Events()
        let recorder = try await Self.recorder(agent, srs: sipp, events: events, answerTimeout: 0.5)
        #expect(await eventually(timeout: 10) { events.ended != nil })
        #expect(events.all == [.ended(.timeout)])
        #expect(await agent.ua.loop.run { recorder.phase } == .ended)
    }

    /// Answers the recorder cannot use: reported, and the session ended with BYE.
    static let badAnswers: [(name: String, body: String, reason: String)] = [
        ("no SDP", "", "no SDP in the answer"),
        (
            "one m= line",
            "v=0\r\no=srs 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                + "m=audio 40000 RTP/AVP 0\r\na=recvonly\r\n", "1 m= line(s) in the answer, 2 offered"
        ),
        ("both streams rejected", answer(port1: 0, port2: 0), "no stream to send to")
    ]

    @Test(arguments: badAnswers.indices)
    func aMalformedAnswerIsReported(_ index: Int) async throws {
        try #require(SIPp.isInstalled)
        let row = Self.badAnswers[index]
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="SIPREC server answering badly">
            \(Self.recv("INVITE"))
            \(Self.ok(row.body, tag: true))
              <recv request="ACK"/>
              <recv request="BYE"/>
            \(Self.byeOK)
            </scenario>
            """
        let sipp = try await SIPp.listening(.inline(name: "srs-bad", xml: xml))
        defer { sipp.stop() }
        let events = Events()
        let recorder = try await Self.recorder(agent, srs: sipp, events: events)
        #expect(await eventually(timeout: 10) { events.ended != nil }, sipp.report)
        #expect(events.all == [.ended(.badAnswer(row.reason))], "\(row.name)")
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        #expect(recorder.packetsSent == [0, 0])
    }
}
