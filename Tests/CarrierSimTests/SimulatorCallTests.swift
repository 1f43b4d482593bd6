import CarrierSim
import Foundation
import Media
import SIP
import TestSupport
import Testing

extension SimulatorCallSuites {
    /// Each behaviour family over real sockets on 127.0.0.1: the project's `SIPUserAgent` calls
    /// the simulator, a UDP probe plays the caller's RTP.
    @Suite struct SimulatorCallTests {
        @Test func answeredCallEchoesRTP() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            let call = await h.call("+15550100001", recorder: rec)
            #expect(await rec.waitFor(.provisional(180, sdp: false)))
            #expect(await rec.waitFor(.connected), "\(rec.events)")
            let sdp = try #require(await h.remoteSDP(call))
            #expect(TestSDP.codecs(sdp) == ["PCMU"])
            let media = try #require(sdp.media.first)
            #expect(media.telephoneEventPayloadType == 101)
            let target = SocketAddress(host: "127.0.0.1", port: Int(media.port))
            let sent = (0..<10).map { pcmuTone(hz: 440, frame: $0) }
            for payload in sent { probe.send(payloadType: 0, payload: payload, to: target) }
            let back = await probe.receive(for: 5) { $0.count >= 10 }
            #expect(back.count == 10)
            #expect(back.map(\.payload) == sent)
            #expect(back.allSatisfy { $0.header.payloadType == 0 && $0.header.ssrc != probe.ssrc })
            // Our sequence numbers, one step apart.
            let seqs = back.map(\.header.sequenceNumber)
            #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
            #expect(await eventually(timeout: 5) { h.simulator.reports.count == 1 })
            let report = try #require(h.simulator.reports.first)
            #expect(report.number == "+15550100001" && report.behaviour == .answerEcho)
            #expect(
                report.outcome.hasPrefix("completed, caller hung up") && report.outcome.contains("echoed 10 packets"),
                "\(report)")
        }

        @Test(arguments: [
            ("+15550100002", 486, 17), ("+15550100006", 603, 21), ("+15550100007", 404, 1), ("+15550100011", 503, nil)
        ])
        func rejectedWithStatusAndCause(_ number: String, _ status: Int, _ cause: Int?) async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call(number, recorder: rec)
            #expect(await rec.waitForEnd() == .rejected(status: status))
            let response = try #require(rec.endMessage)
            #expect(response.statusCode == status)
            #expect(response.q850Cause == cause)
            if status == 486 { #expect(response[.reason] == "Q.850;cause=17;text=\"User busy\"") }
            #expect(await eventually(timeout: 5) { h.simulator.reports.first?.outcome == "rejected \(status)" })
        }

        @Test func ringsUntilCancelThen487() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            let call = await h.call("+15550100003", recorder: rec)
            #expect(await rec.waitFor(.provisional(180, sdp: false)))
            // Well past the (scaled) answer delay: still ringing.
            // a window in which no answer may come: the behaviour, not a wait
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(!rec.events.contains(.connected))
            await h.onCaller { call.cancel() }
            #expect(await rec.waitForEnd() == .canceled)
            #expect(rec.endMessage?.statusCode == 487)
            #expect(await eventually(timeout: 5) { h.simulator.reports.first?.outcome == "canceled 487" })
        }

        @Test func earlyMediaToneBeforeTheAnswer() async throws {
            // Early media lasts the full 2 s: under load the test may start listening late, and
            // a shorter window could be over before it does.
            let h = try SimHarness(timeScale: 1)
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            _ = await h.call("+15550100004", recorder: rec)
            #expect(await rec.waitFor(.provisional(183, sdp: true)))
            let early = await probe.receive(for: 3) { _ in rec.events.contains(.connected) }
            let beforeAnswer = early.count
            #expect(beforeAnswer >= 5, "\(beforeAnswer) packets before the 200")
            #expect(early.allSatisfy { $0.header.payloadType == 0 })
            let pcm = decodePCMU(early)
            let at400 = Goertzel(frequency: 400, sampleRate: 8000).energyRatio(pcm)
            #expect(at400 > 0.8, "400 Hz share \(at400)")
            #expect(await rec.waitFor(.connected))
        }

        @Test func progressWithoutSDPThenAnswer() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call("+15550100005", recorder: rec)
            #expect(await rec.waitFor(.connected))
            #expect(rec.events.first == .provisional(183, sdp: false), "\(rec.events)")
        }

        @Test func challengeAnsweredWithCredentials() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call(
                "+15550100012", recorder: rec, credentials: DigestCredentials(username: "gw", password: "carrier-sim"))
            #expect(await rec.waitFor(.connected), "\(rec.events)")
            #expect(await eventually(timeout: 5) { h.simulator.reports.first?.outcome == "challenged 407" })

            let wrong = CallRecorder()
            _ = await h.call(
                "+15550100012", recorder: wrong, credentials: DigestCredentials(username: "gw", password: "nope"))
            #expect(await wrong.waitForEnd() == .rejected(status: 407))
            let none = CallRecorder()
            _ = await h.call("+15550100012", recorder: none)
            #expect(await none.waitForEnd() == .rejected(status: 407))
            #expect(none.endMessage?[.proxyAuthenticate]?.contains("realm=\"carrier-sim\"") == true)
        }

        @Test func reliableRingingNeedsPRACK() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call("+15550100013", recorder: rec)
            #expect(await rec.waitFor(.connected), "\(rec.events)")
            let ringing = try #require(rec.messages.first { $0.statusCode == 180 })
            #expect(ringing.require.contains("100rel") && ringing.rseq != nil)
            // Another number rings unreliably.
            let plain = CallRecorder()
            _ = await h.call("+15550100001", recorder: plain)
            #expect(await plain.waitFor(.connected))
            #expect(plain.messages.first { $0.statusCode == 180 }?.rseq == nil)
        }

        @Test func g722AnsweredWhenOffered() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            let call = await h.call(
                "+15550100014", recorder: rec, sdp: TestSDP.offer(codecs: [.pcmu, .g722], port: probe.port))
            #expect(await rec.waitFor(.connected))
            let sdp = try #require(await h.remoteSDP(call))
            #expect(TestSDP.codecs(sdp) == ["G722"] && sdp.media[0].formats.first == "9")
            let target = SocketAddress(host: "127.0.0.1", port: Int(sdp.media[0].port))
            for i in 0..<5 { probe.send(payloadType: 9, payload: [UInt8](repeating: UInt8(i), count: 160), to: target) }
            let back = await probe.receive(for: 5) { $0.count >= 5 }
            #expect(back.count == 5 && back.allSatisfy { $0.header.payloadType == 9 })

            // The same offer to a plain number gets its first codec.
            let other = CallRecorder()
            let plain = await h.call("+15550100001", recorder: other, sdp: TestSDP.offer(codecs: [.pcmu, .g722]))
            #expect(await other.waitFor(.connected))
            await #expect(TestSDP.codecs(h.remoteSDP(plain)) == ["PCMU"])
        }

        @Test func remoteByeWithCause16() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call("+15550100010", recorder: rec)
            #expect(await rec.waitFor(.connected))
            #expect(await rec.waitForEnd() == .remoteHangup)
            let bye = try #require(rec.endMessage)
            #expect(bye.method == "BYE" && bye.q850Cause == 16)
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.reports.first?.outcome.hasPrefix("completed, we hung up") == true
                })
        }

        @Test func holdThenResumeReINVITEs() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call("+15550100008", recorder: rec)
            #expect(await rec.waitFor(.connected))
            #expect(
                await eventually(timeout: 5) { rec.events.filter { $0 == .request("INVITE") }.count == 2 },
                "\(rec.events)")
            let offers = rec.messages.filter { $0.isRequest && $0.method == "INVITE" }.compactMap(\.sdp)
            #expect(offers.map { $0.direction(ofMedia: 0) } == [.sendonly, .sendrecv])
            #expect(offers.count == 2 && offers[1].origin.sessionVersion > offers[0].origin.sessionVersion)
        }

        @Test func dtmfSentThenReceivedDigitsEchoed() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            let call = await h.call("+15550100009", recorder: rec)
            #expect(await rec.waitFor(.connected))
            let first = await probe.receive(for: 5) { digits(in: $0) == "1234#" }
            #expect(digits(in: first) == "1234#")

            // Our "7" in RFC 4733 comes back as RFC 4733.
            let sdp = try #require(await h.remoteSDP(call))
            let target = SocketAddress(host: "127.0.0.1", port: Int(sdp.media[0].port))
            var sender = DTMFSender()
            try sender.enqueue("7")
            var ts: UInt32 = 50_000
            while !sender.isIdle {
                if let p = sender.tick(timestamp: ts) {
                    probe.send(
                        payloadType: 101, payload: p.report.serialize(), marker: p.marker, timestamp: p.timestamp,
                        to: target)
                }
                ts &+= 160
                try await Task.sleep(nanoseconds: 20_000_000)  // the 20 ms event pacing, not a wait
            }
            // Late end-report copies of the "#" carry its timestamp: leave them out.
            let earlier = Set(first.map(\.header.timestamp))
            let echoed = await probe.receive(for: 5) {
                digits(in: $0.filter { !earlier.contains($0.header.timestamp) }) == "7"
            }
            #expect(digits(in: echoed.filter { !earlier.contains($0.header.timestamp) }) == "7")
            await h.onCaller { call.hangup() }
            #expect(
                await eventually(timeout: 5) { h.simulator.reports.first?.outcome.contains("digits 7") == true },
                "\(h.simulator.reports)")
        }

        @Test func unlistedNumberAnswersAndEchoes() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            let call = await h.call("+15551230001", recorder: rec)
            #expect(await rec.waitFor(.connected))
            let media = try #require(await h.remoteSDP(call)?.media.first)
            probe.send(
                payloadType: 0, payload: pcmuTone(hz: 300, frame: 0),
                to: SocketAddress(host: "127.0.0.1", port: Int(media.port)))
            await #expect(probe.receive(for: 5) { !$0.isEmpty }.count == 1)
        }
    }
}
