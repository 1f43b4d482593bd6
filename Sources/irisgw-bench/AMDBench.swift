import Foundation
import Media
import Speech
import Synchronization

/// `BENCH amd`: the answering-machine set of the Speech module (people's short answers and
/// machines' greetings with a beep after, in seven espeak-ng voices, at 8 and 16 kHz, noisy,
/// quiet and through µ-law) through `AnsweringMachineDetector` with its default settings and
/// `detectBeep`. Accuracy is reported for people and for machines separately; the time to a
/// verdict is milliseconds of call audio from the answer (the detector has no clock, so the
/// figure is the same on any machine); the beep's end error is against where the sample's
/// beep truly ends. The speech is made first (espeak-ng, both cores), then timed apart.
enum AMDBench {
    /// The aims the line is judged by.
    struct Targets {
        /// Of people and of machines, each.
        var accuracy = 0.9
        var medianVerdictMs = 3_000
        var beepFoundRate = 0.9
        var medianBeepErrorMs = 100.0
    }

    /// One sample through the detector.
    struct Outcome {
        var sample: AMDSample
        var result: AMDResult?
        /// How far the reported beep end is from the true one, ms; nil when none was reported.
        var beepErrorMs: Double?
        var correct: Bool { result?.verdict == sample.expected }
    }

    /// The `BENCH amd` line for `samples` (default: every person and machine of the set), or
    /// `BENCH amd skipped="<why>"` when the speech cannot be made (no espeak-ng).
    static func run(
        samples: [AMDSample] = AMDSamples.people + AMDSamples.machines, synthesizer: SpeechSynthesizer = .shared,
        targets: Targets = Targets()
    ) -> String {
        let started = Date()
        let audio: [AMDAudio]
        do {
            audio = try render(samples, synthesizer: synthesizer)
        } catch {
            return "BENCH amd skipped=\"\(error)\""
        }
        let clock = ContinuousClock()
        var frames = 0
        var outcomes: [Outcome] = []
        let elapsed = clock.measure {
            for (sample, pcm) in zip(samples, audio) {
                let (outcome, fed) = evaluate(sample, pcm)
                outcomes.append(outcome)
                frames += fed
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return line(
            outcomes, targets: targets, usPerFrame: frames > 0 ? seconds * 1e6 / Double(frames) : 0,
            wallSeconds: Date().timeIntervalSince(started))
    }

    /// Every sample's audio, made on as many threads as there are cores (espeak-ng is a
    /// process per phrase). The first error wins.
    static func render(_ samples: [AMDSample], synthesizer: SpeechSynthesizer) throws(SpeechError) -> [AMDAudio] {
        guard synthesizer.isAvailable else { throw .synthesizerMissing(path: synthesizer.executable) }
        let made = Mutex<[Int: Result<AMDAudio, SpeechError>]>([:])
        DispatchQueue.concurrentPerform(iterations: samples.count) { index in
            let result = Result { () throws(SpeechError) in try samples[index].render(synthesizer: synthesizer) }
            made.withLock { $0[index] = result }
        }
        return try made.withLock { results throws(SpeechError) in
            try samples.indices.map { index throws(SpeechError) in try results[index]!.get() }
        }
    }

    /// One sample through a detector with `detectBeep`, 20 ms at a time: its outcome and
    /// the frames fed.
    static func evaluate(_ sample: AMDSample, _ audio: AMDAudio) -> (Outcome, Int) {
        var outcome = Outcome(sample: sample)
        guard
            var detector = try? AnsweringMachineDetector(
                sampleRate: sample.sampleRate, settings: AMDSettings(detectBeep: true))
        else { return (outcome, 0) }
        let size = sample.sampleRate / 50
        var fed = 0
        audio.pcm.withUnsafeBufferPointer { pcm in
            var start = 0
            while start + size <= pcm.count, !detector.isFinished {
                let event = detector.process(UnsafeBufferPointer(rebasing: pcm[start..<start + size]))
                fed += 1
                start += size
                switch event {
                case .verdict(let result): outcome.result = result
                case .beep(let end, _, _): outcome.beepErrorMs = audio.beepEndMs.map { abs(Double(end) - $0) }
                case .noBeep, nil: break
                }
            }
        }
        return (outcome, fed)
    }

    /// The `BENCH amd` line for `outcomes`.
    static func line(_ outcomes: [Outcome], targets: Targets, usPerFrame: Double, wallSeconds: Double) -> String {
        let people = outcomes.filter { $0.sample.expected == .human }
        let machines = outcomes.filter { $0.sample.expected == .machine }
        func share(_ part: Int, _ whole: Int) -> Double { whole > 0 ? Double(part) / Double(whole) : 0 }
        let humanAccuracy = share(people.filter(\.correct).count, people.count)
        let machineAccuracy = share(machines.filter(\.correct).count, machines.count)
        let times = outcomes.compactMap { $0.result?.milliseconds }.map(Double.init)
        let withBeep = machines.filter { $0.sample.isSpeech }
        let beepErrors = withBeep.compactMap(\.beepErrorMs)
        let beepFoundRate = share(beepErrors.count, withBeep.count)
        let medianMs = percentile(times, 0.5)
        let medianBeepError = percentile(beepErrors, 0.5)
        let pass =
            !people.isEmpty && !machines.isEmpty && humanAccuracy >= targets.accuracy
            && machineAccuracy >= targets.accuracy && medianMs <= Double(targets.medianVerdictMs)
            && beepFoundRate >= targets.beepFoundRate && medianBeepError <= targets.medianBeepErrorMs
        let wrong = outcomes.filter { !$0.correct }.map {
            "\($0.sample.name): \($0.result.map(\.description) ?? "none")"
        }
        func f2(_ v: Double) -> String { String(format: "%.2f", v) }
        func f0(_ v: Double) -> String { String(format: "%.0f", v) }
        return "BENCH amd people=\(people.count) machines=\(machines.count)"
            + " human_accuracy=\(f2(humanAccuracy)) machine_accuracy=\(f2(machineAccuracy))"
            + " target_accuracy_min=\(f2(targets.accuracy))"
            + " median_verdict_ms=\(f0(medianMs)) p90_verdict_ms=\(f0(percentile(times, 0.9)))"
            + " target_median_verdict_ms_max=\(targets.medianVerdictMs)"
            + " beep_found_rate=\(f2(beepFoundRate)) target_beep_found_rate_min=\(f2(targets.beepFoundRate))"
            + " median_beep_end_error_ms=\(f0(medianBeepError)) target_beep_end_error_ms_max=\(f0(targets.medianBeepErrorMs))"
            + " detector_us_per_frame=\(String(format: "%.1f", usPerFrame)) seconds=\(String(format: "%.1f", wallSeconds))"
            + " pass=\(pass)" + (wrong.isEmpty ? "" : " wrong=\"\(wrong.joined(separator: "; "))\"")
    }

    /// The `p` quantile (0...1) of `values` by nearest rank; 0 for none.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
