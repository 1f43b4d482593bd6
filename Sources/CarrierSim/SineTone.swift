import Foundation

/// A sine tone rendered 20 ms at a time at any PCM rate, with the phase carried across
/// frames so the joins are seamless. Plain value: no allocation per frame.
public struct SineTone: Sendable {
    /// Frequency in Hz.
    public let hz: Double
    /// Peak amplitude as a fraction of full scale (0...1).
    public let amplitude: Double
    private var phase = 0.0

    public init(hz: Double, amplitude: Double = 0.3) {
        self.hz = hz
        self.amplitude = min(max(amplitude, 0), 1)
    }

    /// A tone at `dBFS` (0 is a full-scale sine's peak; -15 dBFS is 0.178 of full scale).
    public init(hz: Double, dBFS: Double) {
        self.init(hz: hz, amplitude: pow(10, dBFS / 20))
    }

    /// Adds the next `pcm.count` samples at `sampleRate` to what `pcm` holds (clamped).
    public mutating func mix(into pcm: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) {
        let step = 2 * Double.pi * hz / Double(sampleRate)
        let peak = amplitude * 32_767
        for i in pcm.indices {
            pcm[i] = Int16(clamping: Int32(pcm[i]) + Int32(peak * sin(phase)))
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
    }

    /// Overwrites `pcm` with the next `pcm.count` samples at `sampleRate`.
    public mutating func render(into pcm: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) {
        let step = 2 * Double.pi * hz / Double(sampleRate)
        let peak = amplitude * 32_767
        for i in pcm.indices {
            pcm[i] = Int16(peak * sin(phase))
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
    }
}
