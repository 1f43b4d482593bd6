import Media

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Scores received audio against a known test signal: level, SINAD at the expected tones,
/// the tones present, clipping, gaps and, against the signal played, the delay.
///
/// The SINAD comes from power spectra (a radix-2 FFT over ~2 s segments, each tapered by
/// 20 ms raised-cosine ends): the power within ±150 Hz of each expected tone is the signal
/// once the noise floor's share of those bands (the mean power per bin elsewhere) is moved
/// to the noise; all the rest above 20 Hz is noise and distortion. The pulses of
/// `multiTone` have 20 ms raised-cosine edges so their splatter stays inside ±150 Hz (a
/// clean pulsed signal scores about 65 dB). O(n log n); 3 s of 48 kHz audio scores in
/// tens of milliseconds.
public enum AudioAnalyzer {
    /// Half-width (Hz) of the band around each expected tone counted as the tone.
    static let toneHalfWidthHz = 150.0
    /// A 10 ms window under this is silence.
    static let silenceDbfs = -50.0
    /// Below this a tone is absent however clean.
    static let toneFloorDbfs = -70.0
    /// Figures clamp to ±this (dB).
    static let clampDb = 100.0
    /// The default delay search.
    static let maxDelayMs = 2000

    public static func score(
        _ samples: [Int16], sampleRate: Int, tones: [Double], reference: [Int16]? = nil
    ) -> AudioScore {
        score(samples, sampleRate: sampleRate, tones: tones, reference: reference, maxDelayMs: maxDelayMs)
    }

    /// `score` with the delay searched over 0...`maxDelayMs`.
    static func score(
        _ samples: [Int16], sampleRate: Int, tones: [Double], reference: [Int16]?, maxDelayMs: Int
    ) -> AudioScore {
        let rate = max(sampleRate, 1)
        var stretch = samples[...]
        var aligned: ArraySlice<Int16>?
        var delay: Int?
        if let reference, !reference.isEmpty,
            let lag = delaySamples(samples, reference: reference, sampleRate: rate, maxDelayMs: maxDelayMs)
        {
            delay = Int((Double(lag) * 1000 / Double(rate)).rounded())
            stretch = samples[lag..<min(samples.count, lag + reference.count)]
            aligned = reference[0..<stretch.count]
        }
        let wanted = tones.filter { $0 > 0 && $0 < Double(rate) / 2 }
        let spectral = tones.isEmpty ? nil : sinad(Array(stretch), sampleRate: rate, tones: wanted)
        var found: [Double] = [], missing: [Double] = []
        for tone in tones {
            if let i = wanted.firstIndex(of: tone), let s = spectral, s.present[i] {
                found.append(tone)
            } else {
                missing.append(tone)
            }
        }
        let gaps = gapFigures(stretch, sampleRate: rate, reference: aligned)
        return AudioScore(
            levelDbfs: round2(dbfs(meanSquare(stretch))), snrDb: spectral.map { round2($0.snrDb) },
            tonesFound: found, tonesMissing: missing, clippingPercent: round2(clipping(stretch)),
            longestGapMs: gaps.longestMs, silentPercent: round2(gaps.silentPercent), delayMs: delay)
    }

    /// A known test signal: the sum of `tones` (equal amplitude, Schroeder phases for a low
    /// crest factor), scaled so its peak is `peak` of full scale, `seconds` long. `pulsed`
    /// cuts it into bursts of 200, 300, 150, 250, 350, 200, 150, 400, 250 and 300 ms
    /// (repeating) with 100 ms pauses, each burst with 20 ms raised-cosine edges: an
    /// irregular pattern whose envelope correlates with itself at one lag only (the cycle
    /// is 3.55 s, longer than the delay search). Unpulsed, only the ends are ramped.
    public static func multiTone(
        _ tones: [Double], seconds: Double, sampleRate: Int, peak: Double = 0.5, pulsed: Bool = true
    ) -> [Int16] {
        let rate = max(sampleRate, 1)
        let n = max(Int(seconds * Double(rate)), 0)
        let freqs = tones.filter { $0 > 0 && $0 < Double(rate) / 2 }
        guard n > 0, !freqs.isEmpty else { return [Int16](repeating: 0, count: n) }
        var x = [Double](repeating: 0, count: n)
        for (k, f) in freqs.enumerated() {
            let phase = Double.pi * Double(k * k) / Double(freqs.count)
            let step = 2 * Double.pi * f / Double(rate)
            x.withUnsafeMutableBufferPointer { x in
                for i in 0..<n { x[i] += sin(step * Double(i) + phase) }
            }
        }
        let envelope =
            pulsed
            ? pulseEnvelope(count: n, sampleRate: rate)
            : rampedEnvelope(count: n, from: 0, length: n, ramp: rampSamples(rate))
        var top = 0.0
        for i in 0..<n {
            x[i] *= envelope[i]
            top = max(top, abs(x[i]))
        }
        let scale = top > 0 ? min(max(peak, 0), 1) * 32_767 / top : 0
        return x.map { Int16(max(-32_768, min(32_767, ($0 * scale).rounded()))) }
    }

    // MARK: - Pulses

    static let burstMs = [200, 300, 150, 250, 350, 200, 150, 400, 250, 300]
    static let pauseMs = 100
    static let rampMs = 20

    static func rampSamples(_ rate: Int) -> Int { rate * rampMs / 1000 }

    static func pulseEnvelope(count n: Int, sampleRate rate: Int) -> [Double] {
        var env = [Double](repeating: 0, count: n)
        var position = 0, burst = 0
        while position < n {
            let length = burstMs[burst % burstMs.count] * rate / 1000
            let part = rampedEnvelope(
                count: min(length, n - position), from: 0, length: length, ramp: rampSamples(rate))
            for i in 0..<part.count { env[position + i] = part[i] }
            position += length + pauseMs * rate / 1000
            burst += 1
        }
        return env
    }

    /// Gains for samples `from..<from+count` of a burst of `length` with raised-cosine edges.
    static func rampedEnvelope(count: Int, from: Int, length: Int, ramp: Int) -> [Double] {
        (0..<count).map { i in
            let p = from + i
            let edge = min(p, length - 1 - p)
            guard ramp > 0, edge < ramp else { return 1 }
            return 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(ramp))
        }
    }

    // MARK: - Level, clipping

    static func meanSquare(_ x: ArraySlice<Int16>) -> Double {
        guard !x.isEmpty else { return 0 }
        var sum = 0.0
        x.withUnsafeBufferPointer { for s in $0 { sum += Double(s) * Double(s) } }
        return sum / Double(x.count)
    }

    /// dBFS of a mean square, full scale 32768 (a full-scale sine: -3.01), clamped.
    static func dbfs(_ meanSquare: Double) -> Double {
        meanSquare > 0 ? clamp(10 * log10(meanSquare / (32_768.0 * 32_768.0))) : -clampDb
    }

    static func clamp(_ db: Double) -> Double { db.isNaN ? -clampDb : max(-clampDb, min(clampDb, db)) }

    static func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }

    static func clipping(_ x: ArraySlice<Int16>) -> Double {
        guard !x.isEmpty else { return 0 }
        return x.withUnsafeBufferPointer { x -> Double in
            var top = 0
            for s in x { top = max(top, abs(Int(s))) }
            var clipped = 0
            var i = 0
            while i < x.count {
                let s = x[i]
                if s >= 32_766 || s <= -32_767 {
                    clipped += 1
                    i += 1
                    continue
                }
                // A flat top at the stretch's own peak (clipped below full scale).
                var j = i + 1
                while j < x.count && x[j] == s { j += 1 }
                if j - i >= 3 && top >= 16_384 && abs(Int(s)) == top { clipped += j - i }
                i = j
            }
            return 100 * Double(clipped) / Double(x.count)
        }
    }

    // MARK: - Gaps

    /// Levels (dBFS) of consecutive 10 ms windows (a last partial window included when at
    /// least 5 ms).
    static func windowLevels(_ x: ArraySlice<Int16>, sampleRate: Int) -> [Double] {
        let size = max(sampleRate / 100, 1)
        var levels: [Double] = []
        var start = x.startIndex
        while start < x.endIndex {
            let end = min(start + size, x.endIndex)
            if end - start < size / 2 && !levels.isEmpty { break }
            levels.append(dbfs(meanSquare(x[start..<end])))
            start = end
        }
        return levels
    }

    static func gapFigures(
        _ x: ArraySlice<Int16>, sampleRate: Int, reference: ArraySlice<Int16>?
    ) -> (longestMs: Int, silentPercent: Double) {
        let levels = windowLevels(x, sampleRate: sampleRate)
        let silent = levels.map { $0 < silenceDbfs }
        // Which windows must carry signal: after the onset, or where the reference has it.
        var expected: [Bool]
        if let reference {
            let ref = windowLevels(reference, sampleRate: sampleRate)
            let floor = max(silenceDbfs, (ref.max() ?? -clampDb) - 20)
            expected = levels.indices.map { $0 < ref.count && ref[$0] >= floor }
        } else {
            let onset = silent.firstIndex(of: false) ?? silent.count
            expected = levels.indices.map { $0 >= onset }
            if onset == silent.count { return (0, levels.isEmpty ? 0 : 100) }
        }
        var longest = 0, run = 0, gaps = 0, counted = 0
        for i in levels.indices {
            guard expected[i] else { run = 0; continue }
            counted += 1
            if silent[i] {
                gaps += 1
                run += 1
                longest = max(longest, run)
            } else {
                run = 0
            }
        }
        return (longest * 10, counted > 0 ? 100 * Double(gaps) / Double(counted) : 0)
    }

    // MARK: - SINAD

    struct Spectral {
        var snrDb: Double
        /// Per wanted tone.
        var present: [Bool]
    }

    static func sinad(_ x: [Int16], sampleRate rate: Int, tones: [Double]) -> Spectral {
        guard !x.isEmpty, !tones.isEmpty else { return Spectral(snrDb: -clampDb, present: tones.map { _ in false }) }
        var segmentLength = 1
        while segmentLength < 2 * rate { segmentLength <<= 1 }
        var signal = 0.0, noise = 0.0
        var toneEnergy = [Double](repeating: 0, count: tones.count)
        var toneNoise = [Double](repeating: 0, count: tones.count)
        // Equal segments of at most segmentLength samples.
        let segments = (x.count + segmentLength - 1) / segmentLength
        for segment in 0..<segments {
            let start = segment * x.count / segments, end = (segment + 1) * x.count / segments
            let s = segmentFigures(x[start..<end], sampleRate: rate, tones: tones)
            signal += s.tones.reduce(0, +)
            noise += s.noise
            for i in tones.indices {
                toneEnergy[i] += s.tones[i] * s.energyPerPower
                toneNoise[i] += s.noiseInBand[i] * s.energyPerPower
            }
        }
        let snr: Double = signal <= 0 ? -clampDb : noise <= 0 ? clampDb : clamp(10 * log10(signal / noise))
        let strongest = toneEnergy.max() ?? 0
        let present = tones.indices.map { i in
            let level = dbfs(toneEnergy[i] / Double(x.count))
            return toneEnergy[i] > 0 && level >= toneFloorDbfs && toneEnergy[i] >= strongest / 10
                && toneEnergy[i] >= 10 * toneNoise[i]
        }
        return Spectral(snrDb: snr, present: present)
    }

    /// One segment's spectral split: the tones' power (noise floor removed), the noise, the
    /// floor's share inside each tone band, and the factor turning spectral power into
    /// sum-of-squares of the (untapered) samples.
    static func segmentFigures(
        _ x: ArraySlice<Int16>, sampleRate rate: Int, tones: [Double]
    )
        -> (tones: [Double], noise: Double, noiseInBand: [Double], energyPerPower: Double)
    {
        let n = x.count
        var size = 1
        while size < n { size <<= 1 }
        let taper = min(rate * 20 / 1000, n / 4)
        var energy = 0.0
        let windowed = x.enumerated().map { i, s -> Double in
            let v = Double(s)
            energy += v * v
            let edge = min(i, n - 1 - i)
            guard taper > 0, edge < taper else { return v }
            return v * (0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(taper)))
        }
        let power = FFT.powerSpectrum(windowed, size: size)
        let binHz = Double(rate) / Double(size)
        let dcBins = Int((20 / binHz).rounded(.up))
        var owner = [Int](repeating: -1, count: power.count)
        var inBand = [Double](repeating: 0, count: tones.count), binsIn = [Int](repeating: 0, count: tones.count)
        for (t, f) in tones.enumerated() {
            let lo = max(dcBins, Int(((f - toneHalfWidthHz) / binHz).rounded(.up)))
            let hi = min(power.count - 1, Int(((f + toneHalfWidthHz) / binHz).rounded(.down)))
            guard lo <= hi else { continue }
            for k in lo...hi where owner[k] < 0 { owner[k] = t }
        }
        var outside = 0.0, binsOut = 0, total = 0.0
        for k in power.indices {
            total += power[k]
            guard k >= dcBins else { continue }
            if owner[k] >= 0 {
                inBand[owner[k]] += power[k]
                binsIn[owner[k]] += 1
            } else {
                outside += power[k]
                binsOut += 1
            }
        }
        let density = binsOut > 0 ? outside / Double(binsOut) : 0
        let floorIn = tones.indices.map { min(inBand[$0], density * Double(binsIn[$0])) }
        let toneOnly = tones.indices.map { inBand[$0] - floorIn[$0] }
        return (toneOnly, outside + floorIn.reduce(0, +), floorIn, total > 0 ? energy / total : 0)
    }

    // MARK: - Delay

    /// Where `reference` starts in `samples`: the lag (samples, a multiple of 1 ms) of the
    /// best normalised correlation of 1 ms envelopes (mean |x|, smoothed over 5 ms), over
    /// 0...`maxDelayMs`, at least half the reference overlapping; nil under 0.4.
    static func delaySamples(_ samples: [Int16], reference: [Int16], sampleRate rate: Int, maxDelayMs: Int) -> Int? {
        let block = max(rate / 1000, 1)
        let a = envelope(reference, block: block), b = envelope(samples, block: block)
        guard a.count >= 20, b.count >= 20 else { return nil }
        let minOverlap = max(20, a.count / 2)
        var prefixB = [Double](repeating: 0, count: b.count + 1), prefixB2 = prefixB
        for i in b.indices {
            prefixB[i + 1] = prefixB[i] + b[i]
            prefixB2[i + 1] = prefixB2[i] + b[i] * b[i]
        }
        var prefixA = [Double](repeating: 0, count: a.count + 1), prefixA2 = prefixA
        for i in a.indices {
            prefixA[i + 1] = prefixA[i] + a[i]
            prefixA2[i + 1] = prefixA2[i] + a[i] * a[i]
        }
        var best: (lag: Int, r: Double)?
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for lag in 0...max(0, maxDelayMs) {
                    let m = min(a.count, b.count - lag)
                    guard m >= minOverlap else { break }
                    var ab = 0.0
                    for i in 0..<m { ab += a[i] * b[lag + i] }
                    let n = Double(m)
                    let sa = prefixA[m], sa2 = prefixA2[m]
                    let sb = prefixB[lag + m] - prefixB[lag], sb2 = prefixB2[lag + m] - prefixB2[lag]
                    let cov = ab - sa * sb / n
                    let va = sa2 - sa * sa / n, vb = sb2 - sb * sb / n
                    guard va > 0, vb > 0 else { continue }
                    let r = cov / (va * vb).squareRoot()
                    if r > (best?.r ?? -2) { best = (lag, r) }
                }
            }
        }
        guard let best, best.r >= 0.4 else { return nil }
        return best.lag * block
    }

    /// Mean |x| per `block` samples, then a 5-block moving average.
    static func envelope(_ x: [Int16], block: Int) -> [Double] {
        let count = x.count / block
        var raw = [Double](repeating: 0, count: count)
        x.withUnsafeBufferPointer { x in
            for i in 0..<count {
                var sum = 0
                for j in (i * block)..<((i + 1) * block) { sum += abs(Int(x[j])) }
                raw[i] = Double(sum) / Double(block)
            }
        }
        return raw.indices.map { i in
            let lo = max(0, i - 2), hi = min(count - 1, i + 2)
            var s = 0.0
            for j in lo...hi { s += raw[j] }
            return s / Double(hi - lo + 1)
        }
    }

    // MARK: - Onset

    /// The first 10 ms window from `from` that is over -50 dBFS and, when `tones` are given,
    /// starts 100 ms whose energy lies mostly (≥ 50 %) at those tones (Goertzel, exact
    /// frequencies): where the expected signal begins. `scannedTo` is where a later call with
    /// more samples can resume (windows whose 100 ms are not all there yet are not judged).
    public static func onset(
        _ samples: [Int16], sampleRate: Int, tones: [Double], from: Int = 0
    ) -> (index: Int?, scannedTo: Int) {
        let rate = max(sampleRate, 1)
        let window = max(rate / 100, 1), block = max(rate / 10, 1)
        var start = max(0, from)
        while start + window <= samples.count {
            let level = dbfs(meanSquare(samples[start..<(start + window)]))
            if level >= silenceDbfs {
                if tones.isEmpty { return (start, start) }
                guard start + block <= samples.count else { return (nil, start) }
                if toneShare(samples[start..<(start + block)], sampleRate: rate, tones: tones) >= 0.5 {
                    return (start, start)
                }
            }
            start += window
        }
        return (nil, start)
    }

    /// The share (0...1) of the block's energy at `tones` (Goertzel at each exact frequency).
    static func toneShare(_ x: ArraySlice<Int16>, sampleRate rate: Int, tones: [Double]) -> Double {
        let energy = meanSquare(x) * Double(x.count)
        guard energy > 0 else { return 0 }
        var share = 0.0
        for f in tones where f > 0 && f < Double(rate) / 2 {
            share += 2 * Goertzel(frequency: f, sampleRate: Double(rate)).power(x) / (Double(x.count) * energy)
        }
        return share
    }
}
