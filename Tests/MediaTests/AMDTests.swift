import Speech
import Testing

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

/// Answering-machine detection on real speech (espeak-ng voices), synthesised beeps and fax
/// tones, and a dead line, each under -50 dBFS of white noise (two at -35 dBFS).
@Suite struct AMDTests {
    @Test(arguments: AMDCorpus.samples)
    func verdict(_ sample: AMDSample) async throws {
        let audio = try await AMDCorpus.shared.audio(sample)
        let run = try AMDRun(audio.pcm, sampleRate: sample.sampleRate)
        let result = try #require(run.result, "\(sample.name): no verdict")
        #expect(result.verdict == sample.expected, "\(sample.name): \(result)")
        #expect(run.events.count == 1, "\(sample.name): \(run.events)")
    }

    /// The whole set classified right: the accuracy is 100 %. None is left out.
    @Test func accuracyOverTheSet() async throws {
        var wrong: [String] = []
        for sample in AMDCorpus.samples {
            let audio = try await AMDCorpus.shared.audio(sample)
            let result = try AMDRun(audio.pcm, sampleRate: sample.sampleRate).result
            if result?.verdict != sample.expected {
                wrong.append("\(sample.name): \(result.map(\.description) ?? "none")")
            }
        }
        let accuracy = Double(AMDCorpus.samples.count - wrong.count) / Double(AMDCorpus.samples.count)
        #expect(wrong.isEmpty, "accuracy \(accuracy): \(wrong)")
    }

    /// Causes, as Asterisk's AMDCAUSE: a dead line is a machine by its initial silence at
    /// 2500 ms, fax tones say which, a person's short greeting is followed by silence.
    @Test func causes() async throws {
        let expected: [(String, AMDCause)] = [
            ("dead line", .initialSilence), ("fax CNG", .faxCallingTone), ("fax CED", .faxAnswerTone),
            ("modem ANSam", .faxAnswerTone), ("en-us Hello?", .humanGreeting)
        ]
        for (name, cause) in expected {
            let sample = try #require(AMDCorpus.samples.first { $0.name == name })
            let audio = try await AMDCorpus.shared.audio(sample)
            let result = try #require(try AMDRun(audio.pcm, sampleRate: sample.sampleRate).result)
            #expect(result.cause == cause, "\(name): \(result)")
            if cause == .initialSilence { #expect(result.milliseconds == 2500) }
        }
        let machines = [AMDCause.longGreeting, .maxWords, .maxWordLength]
        for sample in AMDCorpus.machines {
            let audio = try await AMDCorpus.shared.audio(sample)
            let result = try #require(try AMDRun(audio.pcm, sampleRate: sample.sampleRate).result)
            #expect(machines.contains(result.cause), "\(sample.name): \(result)")
            // Decided within the greeting, not by the silence after it.
            #expect(result.milliseconds <= 4_000, "\(sample.name): \(result)")
        }
    }

    /// With `detectBeep`, a machine's beep is reported with the time it ended, within 100 ms.
    @Test(arguments: AMDCorpus.machines)
    func beepEnd(_ sample: AMDSample) async throws {
        let audio = try await AMDCorpus.shared.audio(sample)
        let run = try AMDRun(audio.pcm, sampleRate: sample.sampleRate, settings: AMDSettings(detectBeep: true))
        #expect(run.result?.verdict == .machine)
        let truth = try #require(audio.beepEndMs)
        let end = try #require(run.beepEnd, "\(sample.name): \(run.events)")
        #expect(abs(Double(end) - truth) <= 100, "\(sample.name): beep ended at \(end), truly at \(truth)")
        #expect(run.events.count == 2)
    }

    /// Beeps of several pitches and lengths after a dead line's machine verdict (2500 ms):
    /// each reported once, ending where it ended (one longer than the noise floor's 1.5 s
    /// window too); one shorter than `minimumBeepLength` is none.
    @Test(arguments: [(425.0, 100.0), (1000, 80), (1000, 1_000), (1400, 300), (2000, 300), (1000, 2_500), (1000, 60)])
    func syntheticBeep(frequency: Double, lengthMs: Double) throws {
        var pcm = [Int16](repeating: 0, count: 8 * 3_013)
        for n in 0..<Int(lengthMs * 8) {
            pcm.append(Int16(8_000 * sin(2 * Double.pi * frequency * Double(n) / 8_000)))
        }
        pcm += [Int16](repeating: 0, count: 8 * 4_000)
        var noise = WhiteNoise(seed: 7)
        pcm = pcm.map { Int16(clamping: Int($0) + Int(noise.next() * 180)) }  // about -50 dBFS
        let settings = AMDSettings(detectBeep: true, beepTimeout: 4_000)
        let run = try AMDRun(pcm, sampleRate: 8_000, settings: settings)
        #expect(run.result == AMDResult(verdict: .machine, cause: .initialSilence, milliseconds: 2_500))
        if lengthMs < Double(settings.minimumBeepLength) {
            #expect(run.events.last == .noBeep(at: 6_500))
            return
        }
        let truth = 3_013 + lengthMs
        guard case .beep(let end, let duration, let heard) = run.events.last else {
            Issue.record("no beep: \(run.events)")
            return
        }
        #expect(abs(Double(end) - truth) <= 20)
        #expect(abs(Double(duration) - lengthMs) <= 20)
        #expect(abs(heard - frequency) <= 12.5)
    }

    /// The rest of a greeting is no beep: without one, the wait ends in `noBeep`.
    @Test(arguments: AMDCorpus.machines)
    func greetingWithoutBeep(_ sample: AMDSample) async throws {
        let audio = try await AMDCorpus.shared.audio(sample, beep: false)
        let settings = AMDSettings(detectBeep: true, beepTimeout: 4_000)
        let run = try AMDRun(audio.pcm, sampleRate: sample.sampleRate, settings: settings)
        let result = try #require(run.result)
        #expect(run.events == [.verdict(result), .noBeep(at: result.milliseconds + 4_000)], "\(sample.name)")
    }

    /// The adaptive noise floor is what keeps hiss louder than `silenceThreshold` from being
    /// speech: with it off (Asterisk's fixed threshold) the noisy line's person is a machine.
    @Test func noiseFloor() async throws {
        let sample = try #require(AMDCorpus.people.first { $0.noise > -40 })
        let audio = try await AMDCorpus.shared.audio(sample)
        let adaptive = try AMDRun(audio.pcm, sampleRate: 8_000).result
        let fixed = try AMDRun(audio.pcm, sampleRate: 8_000, settings: AMDSettings(noiseMargin: -.infinity)).result
        #expect(adaptive?.verdict == .human)
        #expect(fixed?.verdict == .machine)
    }

    /// A person's verdict ends the analysis even with `detectBeep`; frames after are ignored.
    @Test func humanEndsTheAnalysis() async throws {
        let sample = try #require(AMDCorpus.people.first)
        let audio = try await AMDCorpus.shared.audio(sample)
        var detector = try AnsweringMachineDetector(settings: AMDSettings(detectBeep: true))
        var events: [AMDEvent] = []
        for start in stride(from: 0, to: audio.pcm.count - 160, by: 160) {
            if let event = detector.process(Array(audio.pcm[start..<start + 160])) { events.append(event) }
        }
        #expect(events.count == 1)
        #expect(detector.result?.verdict == .human)
        #expect(detector.isFinished)
    }

    /// Without fax detection a fax's tones are sounds like any other: no `fax` verdict.
    @Test func faxDetectionOff() async throws {
        let sample = try #require(AMDCorpus.faxes.first)
        let audio = try await AMDCorpus.shared.audio(sample)
        let run = try AMDRun(audio.pcm, sampleRate: 8_000, settings: AMDSettings(detectFax: false))
        #expect(run.result?.verdict != .fax)
    }

    /// Nothing decides a line that never goes quiet and never says a word: `unknown`,
    /// `tooLong`, at the total analysis time. (Clicks of 60 ms every 120 ms: no word, no
    /// silence long enough for anything.)
    @Test func tooLong() throws {
        var detector = try AnsweringMachineDetector()
        var last: AMDEvent?
        for index in 0..<400 where last == nil {
            let loud = index % 6 < 3
            last = detector.process(
                [Int16](repeating: loud ? 3_000 : 0, count: 160).enumerated().map {
                    $0.offset.isMultiple(of: 2) ? $0.element : -$0.element
                })
        }
        #expect(last == .verdict(AMDResult(verdict: .unknown, cause: .tooLong, milliseconds: 5_000)))
    }

    @Test func rejectsOtherRates() {
        #expect(throws: SpanDSPError.unsupportedSampleRate(11_025)) {
            _ = try AnsweringMachineDetector(sampleRate: 11_025)
        }
    }
}
