#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A frame's energy: the sum of its squared samples.
func frameEnergy(_ pcm: UnsafeBufferPointer<Int16>) -> Double {
    var energy = 0.0
    for sample in pcm { energy += Double(sample) * Double(sample) }
    return energy
}

/// The level in dBFS of `count` samples of `energy`: their RMS against full scale (32768),
/// floored at -120 for silence.
func frameLevel(energy: Double, count: Int) -> Double {
    guard count > 0 else { return -120 }
    let meanSquare = energy / Double(count)
    guard meanSquare > 0 else { return -120 }
    return max(10 * log10(meanSquare / (32_768.0 * 32_768.0)), -120)
}

/// Energy voice activity, frame by frame, as Asterisk's AMD does it, with an adaptive
/// noise floor: a frame is speech when it is louder than both the fixed threshold and the
/// floor plus a margin. The floor is the quietest frame of a sliding window, so steady line
/// noise raises it within one frame while speech, which always has gaps, barely moves it.
struct VoiceActivity {
    /// Frames the floor remembers (1.5 s at 20 ms).
    static let window = 75
    let threshold: Double
    let margin: Double
    private var levels: [Double]
    private var next = 0

    init(threshold: Double, margin: Double) {
        self.threshold = threshold
        self.margin = margin
        levels = Array(repeating: .infinity, count: Self.window)
    }

    /// The noise floor over the window, in dBFS.
    var floor: Double { levels.min() ?? threshold }

    /// The level a frame must exceed to be speech.
    var speechLevel: Double { max(threshold, floor + margin) }

    /// Records a frame's level and tells whether it is speech.
    mutating func isSpeech(level: Double) -> Bool {
        levels[next] = level
        next = (next + 1) % Self.window
        return level > speechLevel
    }
}
