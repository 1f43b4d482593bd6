import Foundation

/// Sample-rate conversion for prepared audio (speech made at 22050 Hz for calls at 8 or
/// 16 kHz); not for a media thread, it allocates and is O(32) per output sample.
public enum Resampler {
    /// Windowed-sinc resampling: the low-pass (at 0.45 of the lower rate) and the
    /// interpolation in one Hann-windowed filter of 16 input samples each side.
    public static func resample(_ input: [Double], from inRate: Double, to outRate: Double) -> [Double] {
        let cutoff = 0.45 * min(inRate, outRate) / inRate  // cycles per input sample
        let half = 16
        let count = Int(Double(input.count) * outRate / inRate)
        var output = [Double](repeating: 0, count: count)
        for n in 0..<count {
            let position = Double(n) * inRate / outRate
            let center = Int(position)
            var sum = 0.0
            for k in (center - half + 1)...(center + half) where k >= 0 && k < input.count {
                let x = position - Double(k)
                let sinc = x == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * x) / (Double.pi * x)
                let window = 0.5 + 0.5 * cos(Double.pi * x / Double(half))
                sum += input[k] * sinc * window
            }
            output[n] = sum
        }
        return output
    }
}

/// Deterministic white noise in -1...1 (SplitMix64), so every run hears the same line.
public struct WhiteNoise: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The next sample, uniform in -1...1.
    public mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 52) - 1
    }
}
