import Foundation
import Media

/// Builds one call's audio at one rate, piece by piece (silence, tones, speech), as Double
/// samples in Int16 scale; `pcm(noise:seed:)` adds line noise and rounds. The tone's phase
/// runs from the start of the audio, as a continuous oscillator's would.
public struct CallAudioBuilder: Sendable {
    /// Samples per second.
    public let sampleRate: Int
    /// The audio so far.
    public private(set) var samples: [Double] = []

    public init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Milliseconds of audio so far.
    public var milliseconds: Double { Double(samples.count) * 1000 / Double(sampleRate) }

    private func count(_ ms: Double) -> Int { Int(ms * Double(sampleRate) / 1000) }

    /// Appends `ms` of digital silence.
    public mutating func appendSilence(ms: Double) {
        samples += [Double](repeating: 0, count: count(ms))
    }

    /// Appends `ms` of a `hz` sine at `dBFS` (peak against full scale); `amplitudeModulation`
    /// adds V.8 ANSam's 15 Hz, ±20 % envelope.
    public mutating func appendTone(hz: Double, ms: Double, dBFS: Double, amplitudeModulation: Bool = false) {
        let peak = 32_767 * pow(10, dBFS / 20)
        let rate = Double(sampleRate)
        let base = samples.count
        for n in 0..<count(ms) {
            let t = Double(base + n) / rate
            let envelope = amplitudeModulation ? 1 + 0.2 * sin(2 * Double.pi * 15 * t) : 1
            samples.append(peak * envelope * sin(2 * Double.pi * hz * t))
        }
    }

    /// Appends speech already at this rate (`SpeechSynthesizer.speech(_:sampleRate:peak:)`).
    public mutating func append(speech: [Double]) { samples += speech }

    /// The audio as PCM, with uniform white noise of RMS `noise` dBFS under it (none for
    /// -infinity), the same for the same `seed`.
    public func pcm(noise: Double = -.infinity, seed: UInt64 = 1) -> [Int16] {
        guard noise > -.infinity else { return samples.map { Int16(clamping: Int($0.rounded())) } }
        var generator = WhiteNoise(seed: seed)
        // Uniform noise of peak a has RMS a/√3.
        let noisePeak = 32_768 * pow(10, noise / 20) * 3.0.squareRoot()
        return samples.map { Int16(clamping: Int(($0 + generator.next() * noisePeak).rounded())) }
    }
}
