import CarrierSim
import Foundation
import Media
import SDP
import SIP
import TestSupport
import Testing

extension SimulatorCallSuites {
    /// The misbehaving numbers (016-023) over real sockets: each does on the wire what the table
    /// in docs/carrier-testing.md says, so a carrier test tool has something real to catch.
    @Suite struct MisbehaviourTests {
        /// Connects `number` with the project's UA and a probe as its RTP; returns the
        /// simulator's RTP address.
        static func connect(
            _ h: SimHarness, _ number: String, probe: RTPProbe, rec: CallRecorder,
            sdp: SessionDescription? = nil
        ) async throws -> (SIPCall, SocketAddress) {
            rec.mediaPort = probe.port
            let call = await h.call(number, recorder: rec, sdp: sdp)
            #expect(await rec.waitFor(.connected), "\(rec.events)")
            let media = try #require(await h.remoteSDP(call)?.media.first)
            return (call, SocketAddress(host: "127.0.0.1", port: Int(media.port)))
        }

        @Test func oneWaySendsItsOwnToneAndNeverEchoes() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            let (call, target) = try await Self.connect(h, "+15550100016", probe: probe, rec: rec)
            // Our 700 Hz goes in; what comes back is the carrier's 400 + 1020 Hz, never ours.
            let (_, received) = await pump(probe, to: target, count: 50, interval: 0.02, hz: 700, drain: 0.2)
            let packets = received.map(\.packet)
            #expect(packets.count >= 30, "\(packets.count) packets")
            #expect(packets.allSatisfy { $0.header.payloadType == 0 && $0.header.ssrc != probe.ssrc })
            let sentPayloads = Set(
                (0..<50).map { i -> [UInt8] in
                    var p = pcmuTone(hz: 700, frame: i)
                    p[0] = UInt8(i >> 8)
                    p[1] = UInt8(truncatingIfNeeded: i)
                    return p
                })
            #expect(!packets.contains { sentPayloads.contains($0.payload) }, "an echo of ours came back")
            let pcm = decodePCMU(packets)
            let at400 = Goertzel(frequency: 400, sampleRate: 8000).energyRatio(pcm)
            let at1020 = Goertzel(frequency: 1020, sampleRate: 8000).energyRatio(pcm)
            let at700 = Goertzel(frequency: 700, sampleRate: 8000).energyRatio(pcm)
            #expect(at400 > 0.35 && at1020 > 0.35 && at400 + at1020 > 0.9, "400 Hz \(at400), 1020 Hz \(at1020)")
            #expect(at700 < 0.02, "700 Hz \(at700)")
            // Each tone at -15 dBFS: peak 0.178 of full scale, so the sum's RMS is 0.178 * 32767.
            let rms = (pcm.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(pcm.count, 1))).squareRoot()
            #expect(abs(rms - 5827) < 600, "RMS \(rms)")
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.reports.first?.outcome.contains("echoed 0 packets") == true
                }, "\(h.simulator.reports)")
        }

        @Test func lateMediaStartsItsEchoSecondsAfterThe200() async throws {
            let h = try SimHarness(timeScale: 0.5)  // RTP 1.5 s after the 200
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            let (call, target) = try await Self.connect(h, "+15550100017", probe: probe, rec: rec)
            let answeredAt = try #require(rec.connectedAt)
            let (_, received) = await pump(probe, to: target, count: 200, interval: 0.02, drain: 0) { $0.count >= 5 }
            let first = try #require(received.first, "no RTP within 4 s")
            let late = first.at - answeredAt
            // 3 s scaled by 0.5, less a little for when the 200 was seen: at least 2.5 s scaled.
            // (No upper bound: a loaded machine only makes it later.)
            #expect(late >= 2.5 * 0.5, "first RTP \(late) s after the 200")
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }

        @Test func wrongCauseIs486WithCause1() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = CallRecorder()
            _ = await h.call("+15550100018", recorder: rec)
            #expect(await rec.waitForEnd() == .rejected(status: 486))
            let response = try #require(rec.endMessage)
            #expect(response.statusCode == 486 && response.q850Cause == 1, "\(response[.reason] ?? "no Reason")")
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.reports.first.map { "\($0)" } == "+15550100018 wrong-cause rejected 486"
                })
        }

        @Test func codecMismatchAnswersPCMUAndSendsPCMAAsPayload8() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            // PCMA offered first: any other number would answer PCMA.
            let (call, target) = try await Self.connect(
                h, "+15550100019", probe: probe, rec: rec,
                sdp: TestSDP.offer(codecs: [.pcma, .pcmu], port: probe.port))
            let sdp = try #require(await h.remoteSDP(call))
            #expect(TestSDP.codecs(sdp) == ["PCMU"] && sdp.media[0].formats.first == "0", "\(sdp.serialize())")
            for i in 0..<10 { probe.send(payloadType: 0, payload: pcmuTone(hz: 440, frame: i), to: target) }
            let back = await probe.receive(for: 5) { $0.count >= 10 }
            #expect(back.count == 10)
            #expect(back.allSatisfy { $0.header.payloadType == 8 }, "\(back.map(\.header.payloadType))")
            // The payload is our tone in A-law: decoded as PCMA it is the 440 Hz we sent.
            let at440 = Goertzel(frequency: 440, sampleRate: 8000).energyRatio(decodePCMA(back))
            #expect(at440 > 0.8, "440 Hz share \(at440) as A-law")
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }

        @Test func endlessEarlyMediaUntilCancelThen487() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            rec.mediaPort = probe.port
            let call = await h.call("+15550100020", recorder: rec)
            #expect(await rec.waitFor(.provisional(183, sdp: true)))
            // Far past every scaled delay (answer 0.1 s): still early media, still no 200.
            let early = await probe.receive(for: 2.5)
            #expect(!rec.events.contains(.connected))
            #expect(early.count >= 80, "\(early.count) packets in 2.5 s")
            let pcm = decodePCMU(early)
            #expect(Goertzel(frequency: 400, sampleRate: 8000).energyRatio(pcm) > 0.8)
            await h.onCaller { call.cancel() }
            #expect(await rec.waitForEnd() == .canceled)
            #expect(rec.endMessage?.statusCode == 487)
            #expect(await eventually(timeout: 5) { h.simulator.reports.first?.outcome == "canceled 487" })
        }

        @Test func ignoresACKRetransmitsThe200ThenSendsBYEWithCause16() async throws {
            // Scaled by 0.2: T1 0.1 s doubling to T2 0.8 s, BYE 1.0 s after the 200 (5 s unscaled).
            let h = try SimHarness(timeScale: 0.2)
            defer { h.stop() }
            let probe = try RTPProbe()
            let raw = try RawSIPCaller(to: h.simPeer.address)
            let number = "+15550100021"
            raw.send(raw.invite(number, sdp: TestSDP.offer(port: probe.port)))
            var oks: [(at: Double, message: SIPMessage)] = []
            var bye: SIPMessage?
            let deadline = SIPEventLoop.now() + 5
            while bye == nil, SIPEventLoop.now() < deadline {
                for (at, m) in await raw.receive(for: 0.05) {
                    if m.statusCode == 200, m.cseq?.method == "INVITE" {
                        oks.append((at, m))
                        raw.send(raw.ack(for: m, number: number))  // every time: the carrier ignores it
                    } else if m.method == "BYE", m.statusCode == nil {
                        bye = m
                        raw.send(raw.ok(to: m))
                    }
                }
            }
            let byeRequest = try #require(bye, "no BYE; \(oks.count) 200s")
            #expect(oks.count >= 4, "the 200 and at least 3 retransmissions despite our ACKs: \(oks.count)")
            #expect(byeRequest.q850Cause == 16, "\(byeRequest[.reason] ?? "no Reason")")
            #expect(oks.first?.message.sdp != nil)
            if let first = oks.first?.at, let last = oks.last?.at {
                #expect(last - first >= 0.5, "200s spread over \(last - first) s")
            }
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.reports.first?.outcome.contains("ignoring the ACK") == true
                },
                "\(h.simulator.reports)")
        }

        @Test func ignoresACKEchoesWhileUp() async throws {
            let h = try SimHarness(timeScale: 2)  // up 10 s: time to hear the echo on a loaded machine
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            let (_, target) = try await Self.connect(h, "+15550100021", probe: probe, rec: rec)
            let (_, received) = await pump(probe, to: target, count: 400, interval: 0.02, drain: 0) { $0.count >= 10 }
            #expect(received.count >= 10)
            // Our UA's ACK is ignored: the carrier ends the call with BYE, cause 16.
            #expect(await rec.waitForEnd(timeout: 20) == .remoteHangup)
            #expect(rec.endMessage?.method == "BYE" && rec.endMessage?.q850Cause == 16)
        }

        @Test func slowTryingIsSilentAbsorbsRetransmissionsThenRingsAndAnswers() async throws {
            let h = try SimHarness(timeScale: 0.25)  // silent 1 s, answer 0.25 s after the 180
            defer { h.stop() }
            let probe = try RTPProbe()
            let raw = try RawSIPCaller(to: h.simPeer.address)
            let invite = raw.invite("+15550100022", sdp: TestSDP.offer(port: probe.port))
            let start = SIPEventLoop.now()
            raw.send(invite)
            var got: [(at: Double, message: SIPMessage)] = []
            // Retransmit as a UDP client does (T1 0.1 s here, doubling) while nothing comes.
            var next = 0.1, interval = 0.1, retransmissions = 0
            while got.isEmpty, SIPEventLoop.now() - start < 3 {
                await got += raw.receive(for: 0.01)
                if got.isEmpty, SIPEventLoop.now() - start >= next {
                    raw.send(invite)
                    retransmissions += 1
                    interval *= 2
                    next += interval
                }
            }
            let first = try #require(got.first, "nothing at all in 3 s")
            #expect(first.at - start >= 3.5 * 0.25, "first response after \(first.at - start) s")
            #expect(retransmissions >= 3)
            await got += raw.receive(for: 3) { list in list.contains { $0.message.statusCode == 200 } }
            let codes = got.compactMap(\.message.statusCode)
            #expect(codes.first == 100, "\(codes)")
            #expect(codes.contains(180) && codes.contains(200), "\(codes)")
            // One 100 and one 180: the retransmissions made no second call or response.
            #expect(codes.filter { $0 == 100 }.count == 1 && codes.filter { $0 == 180 }.count == 1, "\(codes)")
            if let ok = got.first(where: { $0.message.statusCode == 200 }),
                let ring = got.first(where: { $0.message.statusCode == 180 })
            {
                #expect(ok.at - ring.at >= 0.2, "200 \(ok.at - ring.at) s after the 180")
                raw.send(raw.ack(for: ok.message, number: "+15550100022"))
            }
            #expect(h.simulator.activeCalls == 1)
        }

        @Test func lossyDropsAndJittersItsEcho() async throws {
            let h = try SimHarness()  // the defaults: 5 % loss, 0-40 ms jitter
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            let (call, target) = try await Self.connect(h, "+15550100023", probe: probe, rec: rec)
            let count = 250
            let (sent, received) = await pump(probe, to: target, count: count, interval: 0.005, drain: 0.3)
            let lost = count - received.count
            // 5 % of 250 is 12.5 (sd 3.4): a sane band around it.
            #expect(lost >= 2 && lost <= 30, "\(lost) of \(count) lost")
            // Each echo's delay, matched by the index in its payload: spread by the jitter.
            let delays = received.compactMap { r -> Double? in
                let i = Int(r.packet.payload[0]) << 8 | Int(r.packet.payload[1])
                return i < sent.count ? r.at - sent[i] : nil
            }
            let mean = delays.reduce(0, +) / Double(max(delays.count, 1))
            let sd = (delays.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(delays.count, 1))).squareRoot()
            #expect(
                (delays.max() ?? 0) - (delays.min() ?? 0) >= 0.02, "delays \(delays.min() ?? 0)...\(delays.max() ?? 0)")
            #expect(sd >= 0.005, "delay sd \(sd) s")
            // Sequence numbers: gaps for the drops, and reordering allowed.
            let seqs = Set(received.map(\.packet.header.sequenceNumber))
            #expect(seqs.count == received.count)
            await h.onCaller { call.hangup() }
            #expect(
                await eventually(timeout: 5) { h.simulator.reports.first?.outcome.contains("dropped") == true },
                "\(h.simulator.reports)")
        }

        @Test func lossAndJitterComeFromTheConfiguration() async throws {
            let h = try SimHarness {
                $0.lossPercent = 0; $0.jitterMs = 0
            }
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = CallRecorder()
            let (call, target) = try await Self.connect(h, "+15550100023", probe: probe, rec: rec)
            let (_, received) = await pump(probe, to: target, count: 50, interval: 0.005, drain: 0.3)
            #expect(received.count == 50)
            // No jitter: in order.
            let seqs = received.map(\.packet.header.sequenceNumber)
            #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }
    }
}
