/// Who answered an outbound call, as `AnsweringMachineDetector` decides it.
public enum AMDVerdict: String, Sendable, Equatable, CaseIterable {
    /// A person: a short greeting followed by silence (Asterisk's HUMAN).
    case human
    /// An answering machine or voicemail (Asterisk's MACHINE).
    case machine
    /// A fax machine or modem: its tones were heard.
    case fax
    /// Nothing conclusive within the analysis time (Asterisk's NOTSURE).
    case unknown
}

/// Why the detector decided as it did, after Asterisk's AMDCAUSE.
public enum AMDCause: String, Sendable, Equatable, CaseIterable {
    /// Silence from the answer for `initialSilence` ms: machine (Asterisk's INITIALSILENCE).
    case initialSilence
    /// A greeting shorter than `greeting` ms, then `afterGreetingSilence` ms of silence:
    /// human (Asterisk's HUMAN).
    case humanGreeting
    /// Speech for `greeting` ms in all: machine (Asterisk's LONGGREETING).
    case longGreeting
    /// More than `maximumNumberOfWords` words: machine (Asterisk's MAXWORDS).
    case maxWords
    /// One word of `maximumWordLength` ms: machine (Asterisk's MAXWORDLENGTH).
    case maxWordLength
    /// `totalAnalysisTime` ms passed undecided: unknown (Asterisk's TOOLONG).
    case tooLong
    /// A fax's CNG (1100 Hz) was heard: fax.
    case faxCallingTone
    /// A fax's CED or a modem's ANS/ANSam (2100 Hz), or a V.21 preamble, was heard: fax.
    case faxAnswerTone
}

/// A verdict with its cause and when it was reached.
public struct AMDResult: Sendable, Equatable, CustomStringConvertible {
    /// Who answered.
    public var verdict: AMDVerdict
    /// Why.
    public var cause: AMDCause
    /// Milliseconds of audio fed up to and including the frame that decided.
    public var milliseconds: Int

    /// A result as given.
    public init(verdict: AMDVerdict, cause: AMDCause, milliseconds: Int) {
        self.verdict = verdict
        self.cause = cause
        self.milliseconds = milliseconds
    }

    /// `verdict/cause@ms`, for logs.
    public var description: String { "\(verdict.rawValue)/\(cause.rawValue)@\(milliseconds)ms" }
}

/// What one frame fed to `AnsweringMachineDetector` produced. Each kind comes at most once
/// per call: the verdict first, then (machine verdicts with `detectBeep` only) a beep or
/// its absence.
public enum AMDEvent: Sendable, Equatable {
    /// The verdict.
    case verdict(AMDResult)
    /// The greeting's end tone: it ended `endedAt` ms into the audio (where to start
    /// speaking), lasted `durationMs` ms, at about `frequency` Hz.
    case beep(endedAt: Int, durationMs: Int, frequency: Double)
    /// No beep within `beepTimeout` ms of the machine verdict; `at` is when the wait ended.
    case noBeep(at: Int)
}
