/// Follows steady single tones frame by frame with a bank of Goertzel filters (12.5 Hz
/// apart, so at 20 ms frames a tone keeps 95 % of its power in its nearest filter) and
/// reports each one when it ends: the answering machine's beep. A frame holds the tone when
/// one filter has 80 % of its energy (espeak's speech in seven voices never passed 70 %, a
/// beep under -35 dBFS of noise or through µ-law stays above 90 %); where the tone starts or stops inside a frame, the
/// filter's amplitude there against the tone's full amplitude says how much of the frame
/// it filled, so the end time is finer than a frame.
struct BeepTracker {
    /// A tone that ended: when, for how long and at what frequency.
    struct Tone: Equatable {
        var endedAt: Double
        var duration: Double
        var frequency: Double
    }

    /// The share of a frame's energy one filter must hold for the frame to be tone.
    static let purity = 0.8
    /// The filters' spacing in Hz.
    static let spacing = 12.5
    /// Filters either side of the tone's that still count as the same tone (±25 Hz).
    static let drift = 2

    private let filters: [Goertzel]
    private var powers: [Double]
    private var previousPowers: [Double]
    private var previousMs = 0.0

    // The tone in progress.
    private var filter: Int?
    private var start = 0.0
    private var amplitude = 0.0

    init(frequencies: ClosedRange<Double>, sampleRate: Double) {
        let low = max(frequencies.lowerBound, Self.spacing)
        let high = min(frequencies.upperBound, sampleRate / 2 - 100)
        filters = stride(from: low, through: max(high, low), by: Self.spacing).map {
            Goertzel(frequency: $0, sampleRate: sampleRate)
        }
        powers = Array(repeating: 0, count: filters.count)
        previousPowers = powers
    }

    /// Runs one frame of `energy` (`frameEnergy`) that starts `startMs` into the audio and
    /// lasts `durationMs`; `loud` says it is above the silence threshold. Returns a tone of
    /// `minimumMs` or more that ended in this frame.
    mutating func process(
        _ pcm: UnsafeBufferPointer<Int16>, energy: Double, startMs: Double, durationMs: Double, loud: Bool,
        minimumMs: Double
    ) -> Tone? {
        defer {
            swap(&powers, &previousPowers)
            previousMs = durationMs
        }
        guard !pcm.isEmpty, !filters.isEmpty else { return nil }
        var best = 0
        for index in filters.indices {
            powers[index] = filters[index].power(pcm)
            if powers[index] > powers[best] { best = index }
        }
        let count = Double(pcm.count)
        let pure = loud && energy > 0 && 2 * powers[best] / (count * energy) >= Self.purity
        func amplitudeAt(_ index: Int, _ table: [Double]) -> Double { 2 * table[index].squareRoot() / count }

        var ended: Tone?
        if let current = filter, !pure || abs(best - current) > Self.drift {
            // The tone stopped (or changed) in this frame, after the share of it it filled.
            let filled = pure ? 0 : min(amplitudeAt(current, powers) / amplitude, 1)
            let end = startMs + filled * durationMs
            if end - start >= minimumMs {
                ended = Tone(endedAt: end, duration: end - start, frequency: filters[current].frequency)
            }
            filter = nil
        }
        if pure {
            let level = amplitudeAt(best, powers)
            if filter == nil {
                filter = best
                amplitude = level
                let before = amplitudeAt(best, previousPowers)
                start = startMs - min(before / level, 1) * previousMs
            } else {
                amplitude = max(amplitude, level)
            }
        }
        return ended
    }
}
