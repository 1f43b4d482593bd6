/// Between the call's rate and a consumer's when they differ by two (8 and 16 kHz): linear
/// interpolation up, a two-tap average down. Good enough for speech to an agent or a
/// transcriber; not a studio resampler.
public enum PCMRateConversion {
    /// `samples` at `from` Hz as samples at `to` Hz (8000 or 16000 each; others unchanged).
    public static func convert(_ samples: UnsafeBufferPointer<Int16>, from: Int, to: Int) -> [Int16] {
        if from == to || samples.isEmpty { return Array(samples) }
        if to == from * 2 {
            var out = [Int16](repeating: 0, count: samples.count * 2)
            for i in 0..<samples.count {
                let a = Int32(samples[i])
                let b = i + 1 < samples.count ? Int32(samples[i + 1]) : a
                out[2 * i] = samples[i]
                out[2 * i + 1] = Int16((a + b) / 2)
            }
            return out
        }
        if from == to * 2 {
            return (0..<(samples.count / 2)).map { i in Int16((Int32(samples[2 * i]) + Int32(samples[2 * i + 1])) / 2) }
        }
        return Array(samples)
    }
}
