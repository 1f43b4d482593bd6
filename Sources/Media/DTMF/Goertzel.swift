#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Goertzel single-frequency detector: the power of one DFT bin in O(n), no FFT.
///
/// Used to prove a tone survives a codec chain (what share of a block's energy sits at
/// 1 kHz?) and usable for simple tone detection. Pure Swift, no state between calls.
public struct Goertzel: Sendable, Equatable {
    /// The frequency examined, in Hz.
    public let frequency: Double
    /// The sample rate of the PCM examined, in Hz.
    public let sampleRate: Double

    /// A detector for `frequency` Hz in PCM sampled at `sampleRate` Hz.
    public init(frequency: Double, sampleRate: Double) {
        self.frequency = frequency
        self.sampleRate = sampleRate
    }

    /// |X(f)|² over `samples`: the squared magnitude of the DFT at `frequency`.
    public func power(_ samples: some Collection<Int16>) -> Double {
        // s[n] = x[n] + 2cos(ω)s[n-1] - s[n-2];  |X|² = s1² + s2² - 2cos(ω)s1s2
        let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
        var s1 = 0.0, s2 = 0.0
        for sample in samples {
            let s0 = Double(sample) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        return max(s1 * s1 + s2 * s2 - coefficient * s1 * s2, 0)
    }

    /// The amplitude of a sine at `frequency` in `samples` (2|X|/N): a sine of peak A
    /// spanning whole cycles gives A.
    public func amplitude(_ samples: some Collection<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return 2 * power(samples).squareRoot() / Double(samples.count)
    }

    /// The share (0...1, roughly) of the block's energy found at `frequency`: near 1 for
    /// a clean tone, near 0 when the tone is absent. 0 for silence.
    public func energyRatio(_ samples: some Collection<Int16>) -> Double {
        var energy = 0.0
        for sample in samples { energy += Double(sample) * Double(sample) }
        guard energy > 0 else { return 0 }
        // A sine's bin power is A²N²/4 and its energy A²N/2, hence the 2/N.
        return 2 * power(samples) / (Double(samples.count) * energy)
    }
}
