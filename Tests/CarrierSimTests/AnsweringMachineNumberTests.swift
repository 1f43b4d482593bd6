import CarrierSim
import Foundation
import Media
import SIP
import Speech
import TestSupport
import Testing

extension SimulatorCallSuites {
    /// The answering-machine numbers over real sockets: the caller's probe takes the RTP, the
    /// test decodes it and checks its shape frame by frame (20 ms), then feeds it to Media's
    /// `AnsweringMachineDetector`. The speech is espeak-ng's, made as the simulator starts.
    @Suite struct AnsweringMachineNumberTests {
        /// "Hello?" after about 300 ms, over within 1.5 s, then silence; the call stays up
        /// until we hang up. The detector says human.
        @Test func personSaysHelloThenListens() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let (call, rec, probe) = try await h.probedCall("+15550100032")
            #expect(await rec.waitFor(.connected, timeout: 30), "\(rec.events)")
            let packets = await probe.receive(for: 15) { $0.count >= 200 }
            #expect(packets.count >= 200 && packets.allSatisfy { $0.header.payloadType == 0 })
            let pcm = decodePCMU(inOrder(packets))
            let levels = frameLevels(pcm, sampleRate: 8_000)
            let speech = levels.indices.filter { levels[$0] > -30 }
            let first = try #require(speech.first, "no speech: \(levels)")
            let last = try #require(speech.last)
            #expect((10...30).contains(first), "speech starts at \(first * 20) ms")
            #expect(last < 75, "speech lasts until \(last * 20) ms")
            // Listening: nothing but silence after its last sound, for as long as we heard.
            let sound = try #require(levels.lastIndex { $0 > -60 })
            #expect(sound < last + 5, "\(levels[last...])")
            #expect(levels.count - sound > 100)

            let events = try detect(pcm, sampleRate: 8_000)
            guard case .verdict(let result) = events.first else {
                Issue.record("no verdict: \(events)")
                return
            }
            #expect(result.verdict == .human && result.cause == .humanGreeting, "\(result)")

            // Still up: the person waits for us to speak or hang up.
            #expect(rec.end == nil)
            #expect(h.simulator.activeCalls == 1)
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
            #expect(await eventually(timeout: 5) { h.simulator.reports.count == 1 })
            let report = try #require(h.simulator.reports.first)
            #expect(report.behaviour == .answersAsPerson && report.outcome.hasPrefix("completed, caller hung up"))
        }

        /// A greeting of several seconds, then 500 ms of 1000 Hz ending where the clip says,
        /// then silence. The detector says machine, and with `detectBeep` finds the beep's end.
        @Test func voicemailGreetsThenBeeps() async throws {
            let clips = try await offThePool { () throws(SpeechError) in try SimAMDClips() }
            let h = try SimHarness()
            defer { h.stop() }
            let (call, rec, probe) = try await h.probedCall("+15550100033")
            #expect(await rec.waitFor(.connected, timeout: 30), "\(rec.events)")
            let needed = Int((clips.beepEndMs + 1_000) / 20)
            let packets = await probe.receive(for: 30) { $0.count >= needed }
            try #require(packets.count >= needed)
            let pcm = decodePCMU(inOrder(packets))
            let levels = frameLevels(pcm, sampleRate: 8_000)

            let beep = frameIndices(pcm, sampleRate: 8_000) { frame in
                level(frame) > -30 && toneShare(frame, hz: 1_000, sampleRate: 8_000) >= 0.8
            }
            let beepStart = try #require(beep.first, "no beep")
            let beepEnd = try #require(beep.last) + 1
            #expect(beep.count == beepEnd - beepStart, "one unbroken beep: \(beep)")
            #expect(abs(Double(beep.count * 20) - SimAMDClips.beepMs) <= 40)
            #expect(abs(Double(beepEnd * 20) - clips.beepEndMs) <= 40)
            // A long voiced stretch before it: the greeting.
            let voiced = levels[..<beepStart].indices.filter { levels[$0] > -35 }
            let span = Double(((voiced.last ?? 0) - (voiced.first ?? 0)) * 20)
            #expect(span >= 4_000, "greeting of \(span) ms")
            #expect(voiced.count >= 100, "\(voiced.count) voiced frames")
            // Silence from the frame after the beep's last (which may hold its end).
            #expect(levels[(beepEnd + 1)...].allSatisfy { $0 < -60 }, "\(levels[beepEnd...].prefix(5))")

            let events = try detect(pcm, sampleRate: 8_000, settings: AMDSettings(detectBeep: true))
            #expect(events.count == 2, "\(events)")
            guard case .verdict(let result) = events.first, case .beep(let end, let duration, let hz) = events.last
            else {
                Issue.record("\(events)")
                return
            }
            #expect(result.verdict == .machine, "\(result)")
            #expect(abs(Double(end) - clips.beepEndMs) <= 60, "beep ended at \(end), truly \(clips.beepEndMs)")
            #expect(abs(Double(duration) - SimAMDClips.beepMs) <= 40)
            #expect(abs(hz - SimAMDClips.beepHz) <= 15)
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }

        /// CNG in PCMA: 1100 Hz for 500 ms from the answer and again 3.5 s later, silence
        /// between. The detector says fax, by the calling tone.
        @Test func faxSendsCNG() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let (call, rec, probe) = try await h.probedCall("+15550100034", codecs: [.pcma])
            #expect(await rec.waitFor(.connected, timeout: 30), "\(rec.events)")
            let packets = await probe.receive(for: 15) { $0.count >= 210 }
            try #require(packets.count >= 210)
            #expect(packets.allSatisfy { $0.header.payloadType == 8 })
            let pcm = decodePCMA(inOrder(packets))
            let tone = frameIndices(pcm, sampleRate: 8_000) { frame in
                level(frame) > -30 && toneShare(frame, hz: 1_100, sampleRate: 8_000) >= 0.8
            }
            let bursts = runs(tone)
            #expect(bursts.count == 2, "\(bursts)")
            #expect(bursts.allSatisfy { abs($0.count - 25) <= 1 }, "\(bursts)")
            if bursts.count == 2 { #expect(abs(bursts[1].lowerBound - bursts[0].lowerBound - 175) <= 1) }
            let quiet = frameLevels(pcm, sampleRate: 8_000).enumerated().filter { !tone.contains($0.offset) }
            #expect(quiet.allSatisfy { $0.element < -60 })

            let events = try detect(pcm, sampleRate: 8_000)
            guard case .verdict(let result) = events.first else {
                Issue.record("no verdict: \(events)")
                return
            }
            #expect(result.verdict == .fax && result.cause == .faxCallingTone, "\(result)")
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }

        /// On a G.722 trunk the person speaks in wideband, as the simulator's other audio does.
        @Test func personInG722() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let (call, rec, probe) = try await h.probedCall("+15550100032", codecs: [.g722])
            #expect(await rec.waitFor(.connected, timeout: 30), "\(rec.events)")
            let packets = await probe.receive(for: 15) { $0.count >= 150 }
            try #require(packets.count >= 150)
            #expect(packets.allSatisfy { $0.header.payloadType == 9 })
            let codec = try LegCodec(.g722, sampleRate: 16_000)
            var pcm: [Int16] = []
            var frame = [Int16](repeating: 0, count: 320)
            for packet in inOrder(packets) {
                let n = packet.payload.withUnsafeBufferPointer { payload in
                    frame.withUnsafeMutableBufferPointer { codec.decode(payload, into: $0) }
                }
                pcm += frame[..<n]
            }
            let speech = frameLevels(pcm, sampleRate: 16_000).enumerated().filter { $0.element > -30 }
            #expect(!speech.isEmpty && speech.allSatisfy { $0.offset < 75 })
            let events = try detect(pcm, sampleRate: 16_000)
            guard case .verdict(let result) = events.first else {
                Issue.record("no verdict: \(events)")
                return
            }
            #expect(result.verdict == .human, "\(result)")
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }

        /// Without espeak-ng the speaking numbers refuse with a reason that names it; the fax,
        /// which needs no speech, still answers.
        @Test func withoutEspeakTheSpeakingNumbersSaySo() async throws {
            let h = try SimHarness { $0.espeak = "/nonexistent/espeak-ng" }
            defer { h.stop() }
            for number in ["+15550100032", "+15550100033"] {
                let rec = CallRecorder()
                _ = await h.call(number, recorder: rec)
                #expect(await rec.waitForEnd(timeout: 30) == .rejected(status: 500), "\(rec.events)")
                let warning = try #require(rec.endMessage?[SIPHeaderName("Warning")])
                #expect(warning.contains("espeak-ng not found at /nonexistent/espeak-ng"), "\(warning)")
            }
            let (call, rec, probe) = try await h.probedCall("+15550100034")
            #expect(await rec.waitFor(.connected, timeout: 30))
            let packets = await probe.receive(for: 10) { $0.count >= 25 }
            #expect(packets.count >= 25)
            await h.onCaller { call.hangup() }
            #expect(await rec.waitForEnd() == .localHangup)
        }
    }
}

/// Packets in the order they were sent (by sequence number, from the first that came).
private func inOrder(_ packets: [RTPPacket]) -> [RTPPacket] {
    guard let first = packets.first?.header.sequenceNumber else { return [] }
    return packets.sorted { $0.header.sequenceNumber &- first < $1.header.sequenceNumber &- first }
}

/// 20 ms frames of `pcm`.
private func frames(_ pcm: [Int16], sampleRate: Int) -> [ArraySlice<Int16>] {
    let size = sampleRate / 50
    return stride(from: 0, to: pcm.count - size + 1, by: size).map { pcm[$0..<$0 + size] }
}

/// A frame's RMS level in dBFS (-120 for digital silence).
private func level(_ frame: ArraySlice<Int16>) -> Double {
    let energy = frame.reduce(0.0) { $0 + Double($1) * Double($1) }
    guard energy > 0 else { return -120 }
    return 10 * log10(energy / Double(frame.count) / (32_768.0 * 32_768.0))
}

private func frameLevels(_ pcm: [Int16], sampleRate: Int) -> [Double] {
    frames(pcm, sampleRate: sampleRate).map(level)
}

/// The share of a frame's energy at `hz` (1 for a pure tone there).
private func toneShare(_ frame: ArraySlice<Int16>, hz: Double, sampleRate: Int) -> Double {
    let energy = frame.reduce(0.0) { $0 + Double($1) * Double($1) }
    guard energy > 0 else { return 0 }
    return 2 * Goertzel(frequency: hz, sampleRate: Double(sampleRate)).power(frame) / (Double(frame.count) * energy)
}

/// The indices of the 20 ms frames that `holds`.
private func frameIndices(_ pcm: [Int16], sampleRate: Int, _ holds: (ArraySlice<Int16>) -> Bool) -> [Int] {
    frames(pcm, sampleRate: sampleRate).enumerated().filter { holds($0.element) }.map(\.offset)
}

/// Consecutive runs in sorted indices.
private func runs(_ indices: [Int]) -> [Range<Int>] {
    var out: [Range<Int>] = []
    for index in indices {
        if let last = out.last, last.upperBound == index {
            out[out.count - 1] = last.lowerBound..<index + 1
        } else {
            out.append(index..<index + 1)
        }
    }
    return out
}

/// What an answering-machine detector says about `pcm`, fed 20 ms at a time.
private func detect(_ pcm: [Int16], sampleRate: Int, settings: AMDSettings = AMDSettings()) throws -> [AMDEvent] {
    var detector = try AnsweringMachineDetector(sampleRate: sampleRate, settings: settings)
    var events: [AMDEvent] = []
    for frame in frames(pcm, sampleRate: sampleRate) where !detector.isFinished {
        if let event = detector.process(Array(frame)) { events.append(event) }
    }
    return events
}
