import Foundation
import IOCore
import IrisClient
import SDP
import TestSupport
import Testing

/// Two ClientMediaLegs sending Opus RTP to each other over UDP on 127.0.0.1.
struct ClientMediaLegTests {
    @Test func toneIsDetectedAndMuteSilencesIt() async throws {
        let a = try ClientMediaLeg()
        let b = try ClientMediaLeg()
        defer {
            a.stop()
            b.stop()
        }
        a.setRemote(b.localAddress)
        b.setRemote(a.localAddress)
        a.source = .tone(hz: 440, amplitude: 0.5)

        #expect(await eventually(timeout: 5) { b.receivedPackets() >= 40 && a.receivedPackets() >= 40 })
        #expect(
            await eventually(timeout: 5) { b.toneLevel(hz: 440, lastSeconds: 0.5) > 0.8 },
            "440 Hz level at B: \(b.toneLevel(hz: 440, lastSeconds: 0.5))")
        #expect(b.toneLevel(hz: 1000, lastSeconds: 0.5) < 0.05)
        // B sends silence: nothing at A.
        #expect(a.toneLevel(hz: 440, lastSeconds: 0.5) < 0.05)
        #expect(a.sentPackets() >= 40)

        a.muted = true
        #expect(
            await eventually(timeout: 5) { b.toneLevel(hz: 440, lastSeconds: 0.3) < 0.1 },
            "440 Hz level at B after mute: \(b.toneLevel(hz: 440, lastSeconds: 0.3))")
        let sentWhileMuted = a.sentPackets()
        #expect(
            await eventually(timeout: 2) { a.sentPackets() > sentWhileMuted + 5 }, "muting must not stop the stream")

        a.muted = false
        #expect(await eventually(timeout: 5) { b.toneLevel(hz: 440, lastSeconds: 0.3) > 0.8 })

        // One 48 kHz sample per 1/48000 s of stream since the first packet.
        let recorded = b.recordedSamples()
        #expect(recorded.count % 960 == 0)
        #expect(recorded.count >= 48_000 / 2)
    }

    @Test func offerAndAnswerConnectTheLegs() async throws {
        let a = try ClientMediaLeg()
        let b = try ClientMediaLeg(payloadType: 96)
        defer {
            a.stop()
            b.stop()
        }
        let offer = a.sdpOffer(sessionVersion: 3)
        #expect(offer.hasPrefix("v=0\r\no=- "))
        #expect(offer.contains(" 3 IN IP4 127.0.0.1\r\n"))
        #expect(offer.contains("c=IN IP4 127.0.0.1\r\nt=0 0\r\n"))
        #expect(offer.contains("m=audio \(a.localAddress.port) RTP/AVP 111\r\n"))
        #expect(
            offer.contains(
                "a=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=20;useinbandfec=1\r\na=ptime:20\r\na=sendrecv\r\n"))
        // Line for line what the client has always offered (the SDP module writes it now).
        #expect(
            Array(offer.components(separatedBy: "\r\n").dropFirst(2)) == [
                "s=irisgw-client", "c=IN IP4 127.0.0.1", "t=0 0", "m=audio \(a.localAddress.port) RTP/AVP 111",
                "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=20;useinbandfec=1", "a=ptime:20", "a=sendrecv", ""
            ])

        // Each side answers with its own offer text: B sends with 96, A with 111... and each
        // takes the other's numbers for sending.
        let answerToA = try a.applyAnswer(b.sdpOffer())
        #expect(answerToA.remote == b.localAddress)
        #expect(answerToA.payloadType == 96)
        #expect(a.sendPayloadType == 96)
        try b.applyAnswer(a.sdpOffer())
        #expect(b.remote == a.localAddress)

        b.source = .tone(hz: 1000, amplitude: 0.3)
        #expect(
            await eventually(timeout: 5) { a.toneLevel(hz: 1000, lastSeconds: 0.4) > 0.8 },
            "1 kHz level at A: \(a.toneLevel(hz: 1000, lastSeconds: 0.4))")
        #expect(a.toneLevel(hz: 440, lastSeconds: 0.4) < 0.05)
    }

    @Test func samplesSourcePlaysOnce() async throws {
        let a = try ClientMediaLeg(sampleRate: 8_000)
        let b = try ClientMediaLeg(sampleRate: 8_000)
        defer {
            a.stop()
            b.stop()
        }
        a.setRemote(b.localAddress)
        // 0.4 s of 700 Hz at 8 kHz.
        let pcm = (0..<3_200).map { Int16(12_000 * sin(2 * Double.pi * 700 * Double($0) / 8_000)) }
        a.source = .samples(pcm)
        #expect(await eventually(timeout: 5) { a.isSourceFinished })
        #expect(await eventually(timeout: 5) { b.toneLevel(hz: 700, lastSeconds: 1) > 0.3 })
        // Then silence.
        #expect(await eventually(timeout: 5) { b.toneLevel(hz: 700, lastSeconds: 0.2) < 0.05 })
        #expect(b.recordedSamples().count % 160 == 0)
    }

    @Test func answerErrorsAreClassified() throws {
        let leg = try ClientMediaLeg()
        defer { leg.stop() }
        let good =
            "v=0\r\no=- 1 1 IN IP4 10.0.0.9\r\ns=-\r\nc=IN IP4 10.0.0.9\r\nt=0 0\r\nm=audio 40000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n"
        #expect(try SDPAudioAnswer.parse(good) == SDPAudioAnswer.parse(good))
        #expect(try SDPAudioAnswer.parse(good).remote == SocketAddress(host: "10.0.0.9", port: 40000))
        #expect(throws: AudioAnswerError.audioRejected) {
            try leg.applyAnswer(good.replacingOccurrences(of: "m=audio 40000", with: "m=audio 0"))
        }
        #expect(throws: AudioAnswerError.opusNotAccepted(formats: ["0"])) {
            try leg.applyAnswer(
                good.replacingOccurrences(of: "RTP/AVP 111", with: "RTP/AVP 0")
                    .replacingOccurrences(of: "a=rtpmap:111 opus/48000/2", with: "a=rtpmap:0 PCMU/8000"))
        }
        #expect(throws: AudioAnswerError.missingConnection) {
            try leg.applyAnswer(good.replacingOccurrences(of: "c=IN IP4 10.0.0.9\r\n", with: ""))
        }
        #expect(throws: AudioAnswerError.noAudioStream) {
            try leg.applyAnswer(good.replacingOccurrences(of: "m=audio", with: "m=video"))
        }
        // Not SDP: the module's error, naming what is missing.
        #expect(throws: AudioAnswerError.malformed(SDPError(line: 0, reason: "missing o= line"))) {
            try leg.applyAnswer("v=0\r\n")
        }
        #expect(throws: AudioAnswerError.unsupportedAddress("gw.example.com")) {
            try leg.applyAnswer(good.replacingOccurrences(of: "c=IN IP4 10.0.0.9", with: "c=IN IP4 gw.example.com"))
        }
        #expect(leg.remote == nil)
        // A media-level c= wins over the session's; LF-only lines are fine; a session-level
        // direction applies to the stream.
        let media =
            "v=0\no=- 1 1 IN IP4 10.0.0.1\ns=-\nc=IN IP4 10.0.0.1\nt=0 0\na=recvonly\n"
            + "m=audio 5004 RTP/AVP 111\nc=IN IP6 ::1\na=rtpmap:111 OPUS/48000/2\n"
        let answer = try leg.applyAnswer(media)
        #expect(answer.remote == SocketAddress(host: "::1", port: 5004))
        #expect(answer.direction == .recvonly)
        // A listed preferred payload type with no rtpmap is taken as Opus.
        #expect(
            try SDPAudioAnswer.parse(good.replacingOccurrences(of: "a=rtpmap:111 opus/48000/2\r\n", with: ""))
                .payloadType == 111)
    }
}
