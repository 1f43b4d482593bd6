#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A radix-2 complex FFT, iterative and in place, for the audio analysis: only power
/// spectra of real signals are needed, so this is kept to that.
enum FFT {
    /// The one-sided power spectrum |X[k]|², k = 0...n/2, of `signal` zero-padded to `n`
    /// (a power of two ≥ `signal.count`).
    static func powerSpectrum(_ signal: [Double], size n: Int) -> [Double] {
        precondition(
            n > 0 && n & (n - 1) == 0 && n >= signal.count, "FFT size must be a power of two holding the signal")
        var re = signal + [Double](repeating: 0, count: n - signal.count)
        var im = [Double](repeating: 0, count: n)
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in transform(re, im) }
        }
        return [Double](unsafeUninitializedCapacity: n / 2 + 1) { out, count in
            for k in 0...(n / 2) { out[k] = re[k] * re[k] + im[k] * im[k] }
            count = n / 2 + 1
        }
    }

    /// Forward DFT of (re, im) in place; the count is a power of two.
    static func transform(_ re: UnsafeMutableBufferPointer<Double>, _ im: UnsafeMutableBufferPointer<Double>) {
        let n = re.count
        guard n > 1 else { return }
        // Bit-reversal permutation.
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                re.swapAt(i, j)
                im.swapAt(i, j)
            }
        }
        // Twiddles for the largest stage; smaller stages take every (n/len)-th.
        let half = n / 2
        var cosTable = [Double](repeating: 0, count: half)
        var sinTable = [Double](repeating: 0, count: half)
        for k in 0..<half {
            let angle = -2 * Double.pi * Double(k) / Double(n)
            cosTable[k] = cos(angle)
            sinTable[k] = sin(angle)
        }
        cosTable.withUnsafeBufferPointer { wr in
            sinTable.withUnsafeBufferPointer { wi in
                var length = 2
                while length <= n {
                    let halfLength = length / 2
                    let stride = n / length
                    var start = 0
                    while start < n {
                        var t = 0
                        for k in 0..<halfLength {
                            let a = start + k, b = a + halfLength
                            let cr = wr[t], ci = wi[t]
                            let xr = re[b] * cr - im[b] * ci
                            let xi = re[b] * ci + im[b] * cr
                            re[b] = re[a] - xr
                            im[b] = im[a] - xi
                            re[a] += xr
                            im[a] += xi
                            t += stride
                        }
                        start += length
                    }
                    length <<= 1
                }
            }
        }
    }
}
