#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A factor an upsampler cannot run at.
public struct UpsamplerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let factor: Int
    public var description: String {
        "upsampling factor \(factor) is not supported (one of \(PolyphaseUpsampler.factors.sorted()))"
    }
}

/// Raises mono 16-bit PCM by an integer factor (2, 3 or 6: 8 kHz to 16, 24 or 48 kHz, 16 kHz
/// to 48 kHz) through a polyphase FIR low-pass: a windowed sinc (Kaiser) cut at the input's
/// Nyquist frequency, 24 taps per output phase. The input is a call's audio, band-limited below
/// its Nyquist frequency (G.711 to about 3.4 kHz), so what matters is that the images the zero
/// stuffing makes above it are gone:
///
/// - passband: flat to 0.2 dB up to 0.425 of the input rate (3.4 kHz at 8 kHz);
/// - images: at least 55 dB down from 0.575 of the input rate (4.6 kHz), at least 70 dB from
///   0.625 (5 kHz) on;
/// - delay: `delay` output samples, (24 x factor - 1) / 2: 1.5 ms whatever the factor.
///
/// State (the last 23 input samples) carries over from one call of `upsample` to the next, so
/// a stream cut in frames comes out as if upsampled whole. No allocation after `init`. Not
/// thread-safe: one owner (the leg codec of one call).
public final class PolyphaseUpsampler {
    /// The factors it runs at.
    public static let factors: Set<Int> = [2, 3, 6]
    /// Taps per output phase: three 8-lane vectors (the multiply-adds run 8 at a time).
    static let tapsPerPhase = 24
    /// Kaiser window shape and cut-off (a fraction of the input rate): chosen for the image
    /// rejection above with a 1.5 ms delay (docs/media.md, "Opus settings").
    static let kaiserBeta = 6.5
    static let cutoff = 0.49

    /// Output samples per input sample.
    public let factor: Int
    /// The most input samples one `upsample` call takes (60 ms at the call's rate fits).
    public let maximumInputCount: Int
    /// The filter's delay in output samples (it is linear phase: every frequency alike).
    public var delay: Double { Double(factor * Self.tapsPerPhase - 1) / 2 }

    /// Per phase, its taps in reverse order (a dot product with the input window), 32-byte aligned.
    private let coefficients: UnsafeMutablePointer<Float>
    /// The last `tapsPerPhase - 1` input samples, then room for one call's input.
    private let window: UnsafeMutablePointer<Float>
    /// What `upsample` returns a view of.
    private let output: UnsafeMutablePointer<Int16>

    /// An upsampler by `factor` for inputs of up to `maximumInputCount` samples a call;
    /// throws `UpsamplerError` for a factor not in `factors`.
    public init(factor: Int, maximumInputCount: Int = 960) throws(UpsamplerError) {
        guard Self.factors.contains(factor) else { throw UpsamplerError(factor: factor) }
        self.factor = factor
        self.maximumInputCount = max(1, maximumInputCount)
        let taps = Self.tapsPerPhase
        coefficients = UnsafeMutableRawPointer.allocate(
            byteCount: factor * taps * MemoryLayout<Float>.stride, alignment: 32
        ).bindMemory(to: Float.self, capacity: factor * taps)
        let h = Self.design(factor: factor)
        for p in 0..<factor {
            for j in 0..<taps { (coefficients + p * taps + j).initialize(to: Float(h[(taps - 1 - j) * factor + p])) }
        }
        window = .allocate(capacity: taps - 1 + self.maximumInputCount)
        window.initialize(repeating: 0, count: taps - 1 + self.maximumInputCount)
        output = .allocate(capacity: self.maximumInputCount * factor)
        output.initialize(repeating: 0, count: self.maximumInputCount * factor)
    }

    deinit {
        coefficients.deallocate()
        window.deallocate()
        output.deallocate()
    }

    /// The low-pass at the output rate: a Kaiser-windowed sinc, its gain `factor` (each phase
    /// sums to about 1, so a level in is the same level out).
    static func design(factor: Int) -> [Double] {
        let n = factor * tapsPerPhase
        let middle = Double(n - 1) / 2
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        var h = (0..<n).map { i -> Double in
            let t = 2 * cutoff * (Double(i) - middle) / Double(factor)
            let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
            let r = (Double(i) - middle) / middle
            return sinc * besselI0(kaiserBeta * (1 - r * r).squareRoot()) / besselI0(kaiserBeta)
        }
        let scale = Double(factor) / h.reduce(0, +)
        for i in h.indices { h[i] *= scale }
        return h
    }

    /// Forgets the past input (a new stream starts from silence).
    public func reset() {
        window.update(repeating: 0, count: Self.tapsPerPhase - 1)
    }

    /// `input` (at most `maximumInputCount` samples; any more are left out) upsampled: a view of
    /// `input.count x factor` samples, valid until the next call.
    public func upsample(_ input: UnsafeBufferPointer<Int16>) -> UnsafeBufferPointer<Int16> {
        let count = min(input.count, maximumInputCount)
        let taps = Self.tapsPerPhase
        let history = taps - 1
        for i in 0..<count { window[history + i] = Float(input[i]) }
        let raw = UnsafeRawPointer(window)
        let c = UnsafeRawPointer(coefficients)
        let stride = MemoryLayout<SIMD8<Float>>.stride
        var out = output
        for i in 0..<count {
            // The window ending at input i: three unaligned vector loads, reused by every phase.
            let base = raw + i * MemoryLayout<Float>.stride
            let x0 = base.loadUnaligned(as: SIMD8<Float>.self)
            let x1 = (base + stride).loadUnaligned(as: SIMD8<Float>.self)
            let x2 = (base + 2 * stride).loadUnaligned(as: SIMD8<Float>.self)
            for p in 0..<factor {
                let k = c + p * 3 * stride
                // Plain multiply and add: `addProduct` is a fused multiply-add, which the
                // x86-64 baseline has no instruction for (a libm call per lane, 12x slower).
                var acc = x0 * k.load(as: SIMD8<Float>.self)
                acc += x1 * (k + stride).load(as: SIMD8<Float>.self)
                acc += x2 * (k + 2 * stride).load(as: SIMD8<Float>.self)
                // The lanes summed pairwise, rounded half away from zero without a libm call.
                let half = acc.lowHalf + acc.highHalf
                let quarter = half.lowHalf + half.highHalf
                let v = quarter[0] + quarter[1]
                out.pointee = Int16(clamping: Int32(v < 0 ? v - 0.5 : v + 0.5))
                out += 1
            }
        }
        // Keep the last inputs for the next call.
        window.update(from: window + count, count: history)
        return UnsafeBufferPointer(start: output, count: count * factor)
    }
}
