/// `AnsweringMachineDetector`'s settings. The times are milliseconds of audio and the
/// defaults those of Asterisk's amd.conf, so a dial plan tuned there reads the same here.
public struct AMDSettings: Sendable, Equatable {
    /// Silence from the answer after which the callee is taken for a machine. Default 2500.
    public var initialSilence: Int
    /// Speech in all (words and the gaps under `betweenWordsSilence`) after which the
    /// greeting is a machine's. Default 1500.
    public var greeting: Int
    /// Silence after a greeting that makes it a person's. Default 800.
    public var afterGreetingSilence: Int
    /// Audio after which the detector gives up with `unknown`. Default 5000.
    public var totalAnalysisTime: Int
    /// Speech that makes a word (shorter bursts are clicks and breaths). Default 100.
    public var minimumWordLength: Int
    /// Silence that separates two words. Default 50 (at 20 ms frames: three frames).
    public var betweenWordsSilence: Int
    /// A greeting with more words than this is a machine's. Default 3.
    public var maximumNumberOfWords: Int
    /// A single word this long is a machine's. Default 5000.
    public var maximumWordLength: Int
    /// The frame level, in dBFS (RMS against a full-scale square wave), at or below which
    /// a frame is silence whatever the line noise. Default -40, about Asterisk's
    /// silence_threshold of 256 (mean absolute sample value).
    public var silenceThreshold: Double
    /// How far above the line's noise floor (the quietest frame of the last 1.5 s) a frame
    /// must be to be speech, in dB: keeps steady hiss louder than `silenceThreshold` from
    /// counting as speech. Default 6.
    public var noiseMargin: Double
    /// Listen for fax tones (CNG, CED/ANSam, V.21 preamble) and answer `fax`. Default true.
    public var detectFax: Bool
    /// After a `machine` verdict, keep listening for the greeting's end tone and report
    /// `beep` or `noBeep`. Default false.
    public var detectBeep: Bool
    /// How long after the machine verdict to wait for the beep. Default 20000.
    public var beepTimeout: Int
    /// The shortest steady tone that is a beep. Default 80.
    public var minimumBeepLength: Int
    /// The frequencies searched for the beep, in Hz. Default 400...2100.
    public var beepFrequencies: ClosedRange<Double>

    /// Settings with the documented defaults, changed where given.
    public init(
        initialSilence: Int = 2500, greeting: Int = 1500, afterGreetingSilence: Int = 800,
        totalAnalysisTime: Int = 5000, minimumWordLength: Int = 100, betweenWordsSilence: Int = 50,
        maximumNumberOfWords: Int = 3, maximumWordLength: Int = 5000, silenceThreshold: Double = -40,
        noiseMargin: Double = 6, detectFax: Bool = true, detectBeep: Bool = false, beepTimeout: Int = 20_000,
        minimumBeepLength: Int = 80, beepFrequencies: ClosedRange<Double> = 400...2100
    ) {
        self.initialSilence = initialSilence
        self.greeting = greeting
        self.afterGreetingSilence = afterGreetingSilence
        self.totalAnalysisTime = totalAnalysisTime
        self.minimumWordLength = minimumWordLength
        self.betweenWordsSilence = betweenWordsSilence
        self.maximumNumberOfWords = maximumNumberOfWords
        self.maximumWordLength = maximumWordLength
        self.silenceThreshold = silenceThreshold
        self.noiseMargin = noiseMargin
        self.detectFax = detectFax
        self.detectBeep = detectBeep
        self.beepTimeout = beepTimeout
        self.minimumBeepLength = minimumBeepLength
        self.beepFrequencies = beepFrequencies
    }
}
