import Foundation

/// The `audioQuality` step: a measured stretch of audio judged against thresholds.
///
/// ```json5
/// { audioQuality: "echo", tones: [400, 1020, 2200], durationSec: 3, withinSec: 10,
///   minLevelDb: -30, minSnrDb: 15, maxClippingPercent: 1, maxGapMs: 100, maxDelayMs: 500,
///   maxLossPercent: 2, maxJitterMs: 30, minMos: 3.5 }
/// { audioQuality: "carrier", tones: [400], durationSec: 2, minSnrDb: 15 }
/// ```
public struct AudioQualityStep: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// The client plays `AudioAnalyzer.multiTone(tones)` and scores what comes back
        /// through an echoing number, delay included.
        case echo
        /// Scores what the carrier sends (a known signal made of `tones`), no delay.
        case carrier
    }

    public var mode: Mode
    /// The tones of the signal (Hz). Default 400, 1020, 2200 for `echo` (inside G.711's
    /// band); none for `carrier` (then no SNR and no tone check, only level, clipping, gaps).
    public var tones: [Double]
    /// How long a stretch is scored (s). Default 3.
    public var durationSec: Double
    /// How long to wait for the signal's first arrival (s); the scored stretch starts there.
    public var within: Double
    public var thresholds: AudioThresholds

    public init(
        mode: Mode, tones: [Double]? = nil, durationSec: Double = 3, within: Double = 10,
        thresholds: AudioThresholds = AudioThresholds()
    ) {
        self.mode = mode
        self.tones = tones ?? (mode == .echo ? Self.defaultEchoTones : [])
        self.durationSec = durationSec
        self.within = within
        self.thresholds = thresholds
    }

    public static let defaultEchoTones: [Double] = [400, 1020, 2200]
}

/// What an `audioQuality` step accepts. Every figure is optional in the suite file; these
/// are the defaults.
public struct AudioThresholds: Sendable, Equatable {
    public var minLevelDb: Double = -35
    public var minSnrDb: Double = 15
    public var maxClippingPercent: Double = 1
    public var maxGapMs: Double = 120
    /// Echo only (the round trip through the echoing number).
    public var maxDelayMs: Double = 1000
    /// The trunk leg's loss over the stretch (gateway statistics).
    public var maxLossPercent: Double = 3
    public var maxJitterMs: Double = 40
    /// The E-model MOS from the measured loss and delay; not judged unless given.
    public var minMos: Double?

    public init() {}
}

/// One `audioQuality` step's outcome, kept in `TestCallResult.audio`.
public struct AudioCheck: Sendable, Codable, Equatable {
    /// The step (1-based).
    public var step: Int
    /// `echo` or `carrier`.
    public var mode: String
    public var score: AudioScore
    /// The trunk leg's packet loss over the stretch (%), jitter at its end (ms), and the
    /// E-model MOS from that loss and the delay; nil without gateway statistics.
    public var lossPercent: Double?
    public var jitterMs: Double?
    public var mos: Double?
    public var passed: Bool
    /// Each threshold broken, e.g. `SNR 9.8 dB under the 15 dB floor`.
    public var failures: [String]

    public init(
        step: Int, mode: String, score: AudioScore, lossPercent: Double? = nil, jitterMs: Double? = nil,
        mos: Double? = nil,
        passed: Bool, failures: [String]
    ) {
        self.step = step
        self.mode = mode
        self.score = score
        self.lossPercent = lossPercent
        self.jitterMs = jitterMs
        self.mos = mos
        self.passed = passed
        self.failures = failures
    }

    /// The step's failure message: what was measured and each threshold broken, with the
    /// trunk's loss and jitter in brackets.
    public var message: String {
        let subject = mode == AudioQualityStep.Mode.echo.rawValue ? "echoed audio" : "audio from the carrier"
        var extras: [String] = []
        if let v = lossPercent { extras.append(String(format: "packet loss %.1f %%", v)) }
        if let v = jitterMs { extras.append(String(format: "jitter %.0f ms", v)) }
        return "\(subject): " + failures.joined(separator: "; ")
            + (extras.isEmpty ? "" : " (\(extras.joined(separator: ", ")))")
    }

    /// Judges a score and the trunk figures against the thresholds: the failures, one per
    /// threshold broken (and one per missing tone, and for an echo whose delay cannot be
    /// measured).
    static func judge(
        _ s: AudioScore, mode: AudioQualityStep.Mode, lossPercent: Double?, jitterMs: Double?, mos: Double?,
        _ t: AudioThresholds
    ) -> [String] {
        func fmt(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v) }
        var f: [String] = []
        if s.levelDbfs < t.minLevelDb {
            f.append("level \(fmt(s.levelDbfs)) dBFS under the \(fmt(t.minLevelDb)) dBFS floor")
        }
        if let snr = s.snrDb, snr < t.minSnrDb { f.append("SNR \(fmt(snr)) dB under the \(fmt(t.minSnrDb)) dB floor") }
        if !s.tonesMissing.isEmpty {
            f.append("tones missing: " + s.tonesMissing.map { "\(fmt($0)) Hz" }.joined(separator: ", "))
        }
        if s.clippingPercent > t.maxClippingPercent {
            f.append("clipping \(fmt(s.clippingPercent)) % over \(fmt(t.maxClippingPercent)) %")
        }
        if Double(s.longestGapMs) > t.maxGapMs {
            f.append("longest gap \(s.longestGapMs) ms over \(fmt(t.maxGapMs)) ms")
        }
        if mode == .echo {
            if let d = s.delayMs {
                if Double(d) > t.maxDelayMs { f.append("delay \(d) ms over \(fmt(t.maxDelayMs)) ms") }
            } else {
                f.append("delay not measurable (what came back does not match what was played)")
            }
        }
        if let v = lossPercent, v > t.maxLossPercent {
            f.append(String(format: "packet loss %.1f %% over ", v) + "\(fmt(t.maxLossPercent)) %")
        }
        if let v = jitterMs, v > t.maxJitterMs {
            f.append("jitter \(fmt(v.rounded())) ms over \(fmt(t.maxJitterMs)) ms")
        }
        if let floor = t.minMos, let v = mos, v < floor {
            f.append(String(format: "MOS %.2f under ", v) + "\(fmt(floor))")
        }
        return f
    }
}

extension SuiteReader {
    /// The keys an `audioQuality` step may have besides `audioQuality` and `withinSec`.
    static let audioKeys = [
        "tones", "durationSec", "minLevelDb", "minSnrDb", "maxClippingPercent", "maxGapMs", "maxDelayMs",
        "maxLossPercent", "maxJitterMs", "minMos"
    ]

    func audioQuality(_ o: [String: Any], _ path: String, within: Double) throws(SuiteError) -> TestStep {
        let m = try string(o, "audioQuality", path) ?? ""
        guard let mode = AudioQualityStep.Mode(rawValue: m) else {
            throw fail(join(path, "audioQuality"), "must be echo or carrier")
        }
        var tones: [Double]?
        if let v = o["tones"] {
            guard let list = v as? [Any], list.count <= 8, mode == .carrier || !list.isEmpty else {
                throw fail(
                    join(path, "tones"),
                    mode == .echo
                        ? "must be an array of 1 to 8 frequencies (Hz)" : "must be an array of up to 8 frequencies (Hz)"
                )
            }
            var found: [Double] = []
            for (i, t) in list.enumerated() {
                guard let n = t as? NSNumber, !Self.isBoolean(t), (50.0...7000).contains(n.doubleValue) else {
                    throw fail(join(path, "tones[\(i)]"), "must be a number from 50.0 to 7000.0")
                }
                guard !found.contains(n.doubleValue) else {
                    throw fail(join(path, "tones[\(i)]"), "repeats an earlier tone")
                }
                found.append(n.doubleValue)
            }
            tones = found
        }
        var t = AudioThresholds()
        if let v = try number(o, "minLevelDb", path, in: -100...0) { t.minLevelDb = v }
        if let v = try number(o, "minSnrDb", path, in: -20...100) { t.minSnrDb = v }
        if let v = try number(o, "maxClippingPercent", path, in: 0...100) { t.maxClippingPercent = v }
        if let v = try number(o, "maxGapMs", path, in: 0...60_000) { t.maxGapMs = v }
        if let v = try number(o, "maxDelayMs", path, in: 0...10_000) {
            guard mode == .echo else {
                throw fail(
                    join(path, "maxDelayMs"),
                    "applies to audioQuality: \"echo\" only (no delay is measured from the carrier)")
            }
            t.maxDelayMs = v
        }
        if let v = try number(o, "maxLossPercent", path, in: 0...100) { t.maxLossPercent = v }
        if let v = try number(o, "maxJitterMs", path, in: 0...10_000) { t.maxJitterMs = v }
        t.minMos = try number(o, "minMos", path, in: 1...5)
        let duration = try number(o, "durationSec", path, in: 0.5...60) ?? 3
        return .audioQuality(
            AudioQualityStep(mode: mode, tones: tones, durationSec: duration, within: within, thresholds: t))
    }
}
