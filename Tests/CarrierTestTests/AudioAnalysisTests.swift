import CarrierTest
import Foundation
import Media
import Testing

/// Synthetic signals with known answers, scored by `AudioAnalyzer`.
@Suite struct AudioAnalysisTests {
    static let rate = 48_000

    /// A sine of `hz`, `peak` of full scale (clamped to the Int16 range), `seconds` long.
    static func tone(_ hz: Double, seconds: Double, peak: Double = 0.5, rate: Int = rate) -> [Int16] {
        (0..<Int(seconds * Double(rate))).map { i in
            Int16(
                max(
                    -32_768, min(32_767, (peak * 32_767 * sin(2 * Double.pi * hz * Double(i) / Double(rate))).rounded())
                ))
        }
    }

    /// Deterministic Gaussian noise (SplitMix64 and Box-Muller) of RMS `rms`.
    static func noise(count: Int, rms: Double, seed: UInt64 = 7) -> [Double] {
        var state = seed
        func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
        return (0..<count).map { _ in rms * (-2 * log(max(next(), 1e-300))).squareRoot() * cos(2 * Double.pi * next()) }
    }

    @Test func cleanMultiToneScoresHigh() {
        let tones = [400.0, 1020, 2200]
        let signal = AudioAnalyzer.multiTone(tones, seconds: 3, sampleRate: Self.rate, pulsed: false)
        let s = AudioAnalyzer.score(signal, sampleRate: Self.rate, tones: tones)
        #expect(s.tonesFound == tones && s.tonesMissing.isEmpty, "\(s)")
        #expect((s.snrDb ?? 0) > 50, "\(s)")
        #expect(s.longestGapMs == 0 && s.silentPercent == 0 && s.clippingPercent == 0 && s.delayMs == nil, "\(s)")
        // Peak 0.5 of full scale: the level sits a few dB under the -9 dBFS of a sine that high.
        #expect(s.levelDbfs < -9 && s.levelDbfs > -16, "\(s)")
    }

    @Test func pulsedReferenceAgainstItself() {
        let tones = [400.0, 1020, 2200]
        let signal = AudioAnalyzer.multiTone(tones, seconds: 3, sampleRate: Self.rate)
        #expect(signal.count == 3 * Self.rate && signal.map { abs(Int($0)) }.max() == 16_384)
        let s = AudioAnalyzer.score(signal, sampleRate: Self.rate, tones: tones, reference: signal)
        #expect(s.delayMs == 0 && s.longestGapMs == 0 && s.silentPercent == 0, "\(s)")
        #expect((s.snrDb ?? 0) > 50 && s.tonesFound == tones, "\(s)")
        // Without the reference its own pauses read as gaps.
        let alone = AudioAnalyzer.score(signal, sampleRate: Self.rate, tones: tones)
        #expect(alone.longestGapMs >= 80, "\(alone)")
    }

    @Test(arguments: [10.0, 20.0, 30.0])
    func toneInWhiteNoise(_ snr: Double) {
        let clean = Self.tone(1000, seconds: 2, peak: 0.3)
        let rms = 0.3 * 32_767 / 2.0.squareRoot() / pow(10, snr / 20)
        let n = Self.noise(count: clean.count, rms: rms)
        let noisy = clean.indices.map { Int16((Double(clean[$0]) + n[$0]).rounded()) }
        let s = AudioAnalyzer.score(noisy, sampleRate: Self.rate, tones: [1000])
        #expect(abs((s.snrDb ?? 0) - snr) <= 2, "\(s)")
        #expect(s.tonesFound == [1000], "\(s)")
    }

    @Test func clippedToneIsFlagged() {
        // 1.5 times full scale, clamped: a third of the samples at the rails.
        let hard = Self.tone(1000, seconds: 1, peak: 1.5)
        let s = AudioAnalyzer.score(hard, sampleRate: Self.rate, tones: [1000])
        #expect(s.clippingPercent > 20, "\(s)")
        // Clipped at 20000, under full scale: flat tops.
        let soft = Self.tone(1000, seconds: 1, peak: 0.9).map { max(-20_000, min(20_000, $0)) }
        #expect(AudioAnalyzer.score(soft, sampleRate: Self.rate, tones: [1000]).clippingPercent > 20)
        // An unclipped tone is not.
        #expect(
            AudioAnalyzer.score(Self.tone(1000, seconds: 1, peak: 0.9), sampleRate: Self.rate, tones: [1000])
                .clippingPercent == 0)
    }

    @Test func holeInAToneIsTheLongestGap() {
        var x = Self.tone(1000, seconds: 2)
        let from = Int(0.733 * Double(Self.rate))
        for i in from..<(from + Self.rate / 5) { x[i] = 0 }
        let s = AudioAnalyzer.score(x, sampleRate: Self.rate, tones: [1000])
        #expect(abs(s.longestGapMs - 200) <= 20, "\(s)")
        #expect(s.silentPercent > 8 && s.silentPercent < 11, "\(s)")
    }

    @Test func silence() {
        let s = AudioAnalyzer.score([Int16](repeating: 0, count: Self.rate), sampleRate: Self.rate, tones: [400, 1020])
        #expect(s.levelDbfs <= -99 && s.tonesFound.isEmpty && s.tonesMissing == [400, 1020], "\(s)")
        #expect(s.snrDb == -100 && s.silentPercent == 100, "\(s)")
        // Every figure is finite: the score survives JSON.
        let data = try? JSONEncoder().encode(s)
        #expect(data.flatMap { try? JSONDecoder().decode(AudioScore.self, from: $0) } == s)
    }

    @Test func delayedCopyOfThePulsedReference() {
        let tones = [400.0, 1020, 2200]
        let reference = AudioAnalyzer.multiTone(tones, seconds: 3, sampleRate: Self.rate)
        let lag = 137 * Self.rate / 1000
        let n = Self.noise(count: lag + reference.count + Self.rate / 2, rms: 100)
        var received = n.map { Int16($0.rounded()) }
        for i in reference.indices { received[lag + i] &+= Int16(Double(reference[i]) * 0.7) }
        let s = AudioAnalyzer.score(received, sampleRate: Self.rate, tones: tones, reference: reference)
        #expect(abs((s.delayMs ?? -100) - 137) <= 5, "\(s)")
        #expect(s.longestGapMs == 0 && s.tonesFound == tones && (s.snrDb ?? 0) > 20, "\(s)")
    }

    @Test func wrongTone() {
        let s = AudioAnalyzer.score(Self.tone(1500, seconds: 1), sampleRate: Self.rate, tones: [1000])
        #expect(s.tonesMissing == [1000] && s.tonesFound.isEmpty, "\(s)")
        #expect((s.snrDb ?? 0) < 0, "\(s)")
        // One of two present: found and missing split, the SNR near 0 dB (equal powers).
        let both = AudioAnalyzer.score(Self.tone(1500, seconds: 1), sampleRate: Self.rate, tones: [1500, 3000])
        #expect(both.tonesFound == [1500] && both.tonesMissing == [3000], "\(both)")
    }

    @Test func noTonesExpectedGivesNoSNR() {
        let s = AudioAnalyzer.score(Self.tone(700, seconds: 1), sampleRate: Self.rate, tones: [])
        #expect(
            s.snrDb == nil && s.tonesFound.isEmpty && s.tonesMissing.isEmpty && abs(s.levelDbfs - -9.03) < 0.1, "\(s)")
    }

    @Test func threeSecondsAt48kScoreWellUnderASecond() {
        let tones = [400.0, 1020, 2200]
        let reference = AudioAnalyzer.multiTone(tones, seconds: 3, sampleRate: Self.rate)
        let received = [Int16](repeating: 0, count: Self.rate / 5) + reference
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            _ = AudioAnalyzer.score(received, sampleRate: Self.rate, tones: tones, reference: reference)
        }
        #expect(elapsed < .seconds(1), "\(elapsed)")  // about 0.3 s alone; parallel tests slow it
        print("AUDIO score of 3.2 s at 48 kHz with a reference: \(elapsed)")
    }

    @Test func onsetFindsTheTonesNotOtherSound() {
        let other = Self.tone(1000, seconds: 0.3)
        let ours = AudioAnalyzer.multiTone([400, 1020, 2200], seconds: 1, sampleRate: Self.rate)
        let x = [Int16](repeating: 0, count: Self.rate / 10) + other + ours
        let found = AudioAnalyzer.onset(x, sampleRate: Self.rate, tones: [400, 1020, 2200])
        let expected = Self.rate / 10 + other.count
        #expect(found.index.map { abs($0 - expected) <= Self.rate / 50 } == true, "\(found) \(expected)")
        #expect(AudioAnalyzer.onset(x, sampleRate: Self.rate, tones: []).index == Self.rate / 10)
        #expect(
            AudioAnalyzer.onset([Int16](repeating: 0, count: Self.rate), sampleRate: Self.rate, tones: [400]).index
                == nil)
    }
}

/// The test signal through the Media module's codecs.
@Suite struct AudioCodecRoundTripTests {
    static let tones = [400.0, 1020, 2200]

    static func ulaw(_ x: [Int16]) -> [Int16] {
        var bytes: [UInt8] = [], out: [Int16] = []
        G711.encodeULaw(x, into: &bytes)
        G711.decodeULaw(bytes, into: &out)
        return out
    }

    @Test func g711KeepsTheSignalAndLossHurts() {
        let reference = AudioAnalyzer.multiTone(Self.tones, seconds: 3, sampleRate: 8_000)
        let decoded = Self.ulaw(reference)
        let clean = AudioAnalyzer.score(decoded, sampleRate: 8_000, tones: Self.tones, reference: reference)
        #expect(
            (clean.snrDb ?? 0) > 25 && clean.tonesFound == Self.tones && clean.longestGapMs == 0 && clean.delayMs == 0,
            "\(clean)")
        print("AUDIO G.711 u-law multi-tone: SNR \(clean.snrDb ?? 0) dB, level \(clean.levelDbfs) dBFS")

        // Every 10th 20 ms frame lost, no concealment.
        var lossy = decoded
        for frame in stride(from: 0, to: lossy.count, by: 1_600) {
            for i in frame..<min(frame + 160, lossy.count) { lossy[i] = 0 }
        }
        let hurt = AudioAnalyzer.score(lossy, sampleRate: 8_000, tones: Self.tones, reference: reference)
        #expect((hurt.snrDb ?? 100) < (clean.snrDb ?? 0) - 8, "\(hurt)")
        #expect(hurt.longestGapMs >= 10 && hurt.silentPercent > 3, "\(hurt)")
        print(
            "AUDIO G.711 with 10 % frames zeroed: SNR \(hurt.snrDb ?? 0) dB, longest gap \(hurt.longestGapMs) ms, silent \(hurt.silentPercent) %"
        )
    }

    @Test func g722KeepsTheSignal() throws {
        let reference = AudioAnalyzer.multiTone(Self.tones, seconds: 3, sampleRate: 16_000)
        var bytes: [UInt8] = [], decoded: [Int16] = []
        try G722Encoder().encode(reference, into: &bytes)
        try G722Decoder().decode(bytes, into: &decoded)
        let s = AudioAnalyzer.score(decoded, sampleRate: 16_000, tones: Self.tones, reference: reference)
        #expect((s.snrDb ?? 0) > 25 && s.tonesFound == Self.tones && (s.delayMs ?? 100) <= 3, "\(s)")
        print("AUDIO G.722 multi-tone: SNR \(s.snrDb ?? 0) dB, delay \(s.delayMs ?? -1) ms")
    }
}
