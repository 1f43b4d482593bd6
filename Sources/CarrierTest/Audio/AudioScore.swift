import Media

/// What a stretch of received audio measured against the signal that was played.
///
/// Every figure is finite (JSON cannot carry infinities): levels and ratios are clamped to
/// ±100 dB, so digital silence reads -100 dBFS and an SNR of -100 dB.
public struct AudioScore: Sendable, Codable, Equatable {
    /// RMS level of the whole stretch, dBFS (a full-scale sine reads -3.01).
    public var levelDbfs: Double
    /// Power at the expected tones (each ±150 Hz) over everything else (noise and
    /// distortion: this is SINAD), in dB; nil when no tones were expected.
    public var snrDb: Double?
    /// Expected tones present: at least -70 dBFS, within 10 dB of the strongest expected
    /// tone, and 10 dB over the noise that falls in their own ±150 Hz.
    public var tonesFound: [Double]
    /// Expected tones not present by that rule.
    public var tonesMissing: [Double]
    /// Share (%) of samples clipped: within 1 of full scale (≥ 32766 or ≤ -32767), or in a
    /// run of 3 or more equal samples at the stretch's own peak magnitude when that peak is
    /// at least half of full scale (a flat top clipped below full scale).
    public var clippingPercent: Double
    /// The longest run of silence (10 ms windows under -50 dBFS) after the first signal
    /// onset, in ms. Against a reference, only windows where the reference had signal
    /// count (the pauses of a pulsed signal are no gap).
    public var longestGapMs: Int
    /// Share (%) of those 10 ms windows that were silent (after the onset; against a
    /// reference, of the windows where the reference had signal).
    public var silentPercent: Double
    /// With a reference: where the played signal starts in the received audio (best
    /// correlation of 1 ms envelopes, searched 0...2000 ms), in ms; nil without a
    /// reference or when nothing correlates (no echo).
    public var delayMs: Int?

    public init(
        levelDbfs: Double, snrDb: Double?, tonesFound: [Double], tonesMissing: [Double], clippingPercent: Double,
        longestGapMs: Int, silentPercent: Double, delayMs: Int?
    ) {
        self.levelDbfs = levelDbfs
        self.snrDb = snrDb
        self.tonesFound = tonesFound
        self.tonesMissing = tonesMissing
        self.clippingPercent = clippingPercent
        self.longestGapMs = longestGapMs
        self.silentPercent = silentPercent
        self.delayMs = delayMs
    }
}
