// Comfort noise as 20 ms frames (the RFC 3389 CN payload is ComfortNoisePayload.swift).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// White noise at an RFC 3389 level, from a seeded generator, so a silent leg still
/// sounds connected and tests are repeatable. Level 127 (-127 dBov) is digital silence.
///
/// Levels are -dBov with 0 dBov the RMS of a full-scale 16-bit square wave (32767), as
/// RFC 3389 §3 defines the reference.
public struct ComfortNoiseGenerator: Sendable {
    /// The level, 0...127, in -dBov. Default 70 (-70 dBov, a quiet room).
    public var level: UInt8 {
        didSet { level = min(level, 127) }
    }
    private var state: UInt64

    /// Noise at `level` -dBov (clamped to 127) from `seed`.
    public init(level: UInt8 = 70, seed: UInt64 = 0x1A2B_3C4D) {
        self.level = min(level, 127)
        state = seed
    }

    /// Takes the level of a received CN packet: noise continues at the new level.
    public mutating func update(with payload: ComfortNoisePayload) {
        level = payload.noiseLevel
    }

    /// The RMS amplitude for the current level (linear 16-bit).
    public var rms: Double { 32_767 * pow(10, -Double(level) / 20) }

    /// Writes `count` samples of noise into `pcm` (contents replaced, storage reused).
    public mutating func nextFrame(into pcm: inout [Int16], count: Int = 160) {
        pcm.removeAll(keepingCapacity: true)
        // Uniform noise on [-a, a] has an RMS of a/√3.
        let peak = min(rms * 3.0.squareRoot(), 32_767)
        for _ in 0..<max(count, 0) {
            let unit = Double(next() >> 11) / Double(1 << 53) * 2 - 1
            pcm.append(Int16((unit * peak).rounded()))
        }
    }

    /// Buffer form for the media loop: fills `pcm` with noise, no allocation.
    public mutating func nextFrame(into pcm: UnsafeMutableBufferPointer<Int16>) {
        let peak = min(rms * 3.0.squareRoot(), 32_767)
        for i in pcm.indices {
            let unit = Double(next() >> 11) / Double(1 << 53) * 2 - 1
            pcm[i] = Int16((unit * peak).rounded())
        }
    }

    /// Writes `count` samples of silence into `pcm` (contents replaced, storage reused).
    public static func silence(into pcm: inout [Int16], count: Int = 160) {
        pcm.removeAll(keepingCapacity: true)
        pcm.append(contentsOf: repeatElement(0, count: max(count, 0)))
    }

    /// SplitMix64: small, fast, and good enough for noise.
    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
