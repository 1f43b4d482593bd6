#if canImport(Glibc)
    import Glibc
#endif

/// What a `ClientMediaLeg` sends.
public enum AudioSource: Sendable, Equatable {
    /// Digital silence (still sent as Opus packets, so the stream keeps its timing).
    case silence
    /// A sine of `hz` Hz; `amplitude` is the peak as a fraction of full scale (0...1,
    /// clamped), e.g. 0.5 for -6 dBFS.
    case tone(hz: Double, amplitude: Double)
    /// Mono PCM at the leg's `sampleRate` (48 kHz unless the leg was made otherwise),
    /// played once from the start, then silence.
    case samples([Int16])
}

/// Renders an `AudioSource` 20 ms at a time into a caller buffer (no allocation).
struct SourcePlayer {
    private(set) var source: AudioSource
    private var phase = 0.0
    private var position = 0

    init(_ source: AudioSource) { self.source = source }

    /// True once a `.samples` source has played to its end (always false for the others).
    var isFinished: Bool {
        if case .samples(let pcm) = source { return position >= pcm.count }
        return false
    }

    /// Starts `source` from its beginning.
    mutating func replace(with source: AudioSource) {
        self.source = source
        phase = 0
        position = 0
    }

    /// Fills `out` with the next `out.count` samples at `sampleRate`.
    mutating func render(into out: UnsafeMutableBufferPointer<Int16>, sampleRate: Double) {
        switch source {
        case .silence:
            out.update(repeating: 0)
        case .tone(let hz, let amplitude):
            let peak = 32_767 * min(max(amplitude, 0), 1)
            let step = 2 * Double.pi * hz / sampleRate
            for i in out.indices {
                out[i] = Int16((peak * sin(phase)).rounded())
                phase += step
            }
            // Kept small so precision does not drift over a long call.
            phase = phase.truncatingRemainder(dividingBy: 2 * Double.pi)
        case .samples(let pcm):
            let count = max(min(out.count, pcm.count - position), 0)
            for i in 0..<count { out[i] = pcm[position + i] }
            if count < out.count { UnsafeMutableBufferPointer(rebasing: out[count...]).update(repeating: 0) }
            position += count
        }
    }
}
