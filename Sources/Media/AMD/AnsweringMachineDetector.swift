/// Tells from the callee's audio alone, after the answer of an outbound call, whether a
/// person, an answering machine or a fax answered, as Asterisk's `AMD()` does; then, if
/// asked, when the machine's beep ends.
///
/// Feed consecutive PCM frames (20 ms at 8 or 16 kHz; any length works, decisions are per
/// frame) to `process`; it returns each event once: the verdict (with its cause and the ms
/// of audio it took), then for a machine with `detectBeep` a `beep` or a `noBeep`. After
/// that `isFinished` is true and frames are ignored.
///
/// The analysis is Asterisk's: each frame is speech or silence by its energy
/// (`VoiceActivity`, with an adaptive noise floor added); runs of speech of
/// `minimumWordLength` are words, split by `betweenWordsSilence`. Silence before any word
/// for `initialSilence` is a machine (a dead line too, as in Asterisk); a greeting followed
/// by `afterGreetingSilence` of silence is a person; too much speech in all (`greeting`),
/// too many words or too long a word is a machine; `totalAnalysisTime` undecided is
/// `unknown`. Fax tones (spandsp, `FaxToneDetector`) win over all of it while undecided.
///
/// No clock and no thread: time is the audio fed. Not thread-safe, and a copy shares the
/// fax detector's state with the original: one owner per call (its media thread).
public struct AnsweringMachineDetector {
    /// The settings' type, under the name the detector's users look for.
    public typealias Settings = AMDSettings

    /// The settings in use.
    public let settings: AMDSettings
    /// The PCM sample rate, 8000 or 16000.
    public let sampleRate: Int

    private var voice: VoiceActivity
    private var beeps: BeepTracker?
    private let fax: FaxToneDetector?

    private var samples = 0
    private var silenceMs = 0.0
    private var wordMs = 0.0
    private var speechMs = 0.0
    private var words = 0
    private var inWord = false
    private var inInitialSilence = true
    private var inGreeting = false

    /// The verdict, once given.
    public private(set) var result: AMDResult?
    /// True once every event this call can produce has been returned.
    public private(set) var isFinished = false

    /// A detector for PCM at `sampleRate` (8000 or 16000). Throws if the rate is neither or
    /// spandsp cannot allocate the fax detector.
    public init(sampleRate: Int = 8_000, settings: AMDSettings = AMDSettings()) throws(SpanDSPError) {
        guard sampleRate == 8_000 || sampleRate == 16_000 else { throw .unsupportedSampleRate(Int32(sampleRate)) }
        self.sampleRate = sampleRate
        self.settings = settings
        voice = VoiceActivity(threshold: settings.silenceThreshold, margin: settings.noiseMargin)
        beeps =
            settings.detectBeep
            ? BeepTracker(frequencies: settings.beepFrequencies, sampleRate: Double(sampleRate)) : nil
        fax = settings.detectFax ? try FaxToneDetector() : nil
    }

    /// Milliseconds of audio fed so far.
    public var elapsedMs: Int { samples * 1000 / sampleRate }

    /// Analyses the next frame; returns what it decided, if anything.
    public mutating func process(_ pcm: [Int16]) -> AMDEvent? {
        pcm.withUnsafeBufferPointer { process($0) }
    }

    /// Analyses the next frame; returns what it decided, if anything.
    public mutating func process(_ pcm: UnsafeBufferPointer<Int16>) -> AMDEvent? {
        guard !isFinished, !pcm.isEmpty else { return nil }
        let startMs = Double(samples) * 1000 / Double(sampleRate)
        let frameMs = Double(pcm.count) * 1000 / Double(sampleRate)
        samples += pcm.count
        let energy = frameEnergy(pcm)
        let level = frameLevel(energy: energy, count: pcm.count)
        let speech = voice.isSpeech(level: level)
        // The tracker runs from the start so a beep under way at the verdict is whole. It
        // takes the fixed threshold, not the noise floor: a long beep would become the floor.
        let tone = beeps?.process(
            pcm, energy: energy, startMs: startMs, durationMs: frameMs, loud: level > settings.silenceThreshold,
            minimumMs: Double(settings.minimumBeepLength))

        guard let result else {
            let decided = faxTone(pcm).map { decide(.fax, $0) } ?? analyse(speech: speech, frameMs: frameMs)
            guard let decided else { return nil }
            self.result = decided
            isFinished = decided.verdict != .machine || beeps == nil
            return .verdict(decided)
        }
        if let tone {
            isFinished = true
            return .beep(
                endedAt: Int(tone.endedAt.rounded()), durationMs: Int(tone.duration.rounded()),
                frequency: tone.frequency)
        }
        if elapsedMs - result.milliseconds >= settings.beepTimeout {
            isFinished = true
            return .noBeep(at: elapsedMs)
        }
        return nil
    }

    // MARK: - Private

    private func decide(_ verdict: AMDVerdict, _ cause: AMDCause) -> AMDResult {
        AMDResult(verdict: verdict, cause: cause, milliseconds: elapsedMs)
    }

    /// The fax cause for a tone heard in this frame.
    private func faxTone(_ pcm: UnsafeBufferPointer<Int16>) -> AMDCause? {
        guard let fax else { return nil }
        let tone: FaxTone?
        if sampleRate == 8_000 {
            tone = fax.process(pcm)
        } else {
            // spandsp works at 8 kHz: average sample pairs (a gentle low-pass, enough for
            // tones at 1100 and 2100 Hz).
            let half = pcm.count / 2
            tone = withUnsafeTemporaryAllocation(of: Int16.self, capacity: max(half, 1)) { narrow in
                for index in 0..<half {
                    narrow[index] = Int16((Int32(pcm[2 * index]) + Int32(pcm[2 * index + 1])) / 2)
                }
                return fax.process(UnsafeBufferPointer(rebasing: narrow[0..<half]))
            }
        }
        switch tone {
        case .callingTone: return .faxCallingTone
        case .answerTone, .preamble: return .faxAnswerTone
        case nil: return nil
        }
    }

    /// Asterisk's word and silence counting for one frame.
    private mutating func analyse(speech: Bool, frameMs: Double) -> AMDResult? {
        if speech {
            silenceMs = 0
            wordMs += frameMs
            speechMs += frameMs
            if wordMs >= Double(settings.minimumWordLength), !inWord {
                words += 1
                inWord = true
            }
            if wordMs >= Double(settings.maximumWordLength) { return decide(.machine, .maxWordLength) }
            if words > settings.maximumNumberOfWords { return decide(.machine, .maxWords) }
            if inGreeting, speechMs >= Double(settings.greeting) { return decide(.machine, .longGreeting) }
            if wordMs >= Double(settings.minimumWordLength) {
                inInitialSilence = false
                inGreeting = true
            }
        } else {
            silenceMs += frameMs
            if silenceMs >= Double(settings.betweenWordsSilence) {
                inWord = false
                wordMs = 0
            }
            if inInitialSilence, silenceMs >= Double(settings.initialSilence) {
                return decide(.machine, .initialSilence)
            }
            if inGreeting, silenceMs >= Double(settings.afterGreetingSilence) {
                return decide(.human, .humanGreeting)
            }
        }
        if elapsedMs >= settings.totalAnalysisTime { return decide(.unknown, .tooLong) }
        return nil
    }
}
