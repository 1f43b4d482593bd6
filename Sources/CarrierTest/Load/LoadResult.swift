import Foundation

/// One call of a load run, as it went.
public struct LoadCall: Sendable, Codable, Equatable {
    /// 1-based, in the order the calls were started.
    public var index: Int
    public var target: String
    /// Seconds from the run's start to the request, and to the call's end.
    public var startSec: Double
    public var endSec: Double
    /// Seconds from the run's start to the answer (the gateway's event time).
    public var answerSec: Double?
    /// INVITE to the first 18x, and to the answer (the session events' `at`).
    public var postDialDelayMs: Int?
    public var answerMs: Int?
    public var answered: Bool
    /// The call ended before we hung up it (the carrier's BYE, a media timeout ...).
    public var dropped: Bool
    /// We cancelled it, unanswered, at `answerTimeoutSec`.
    public var cancelledByUs: Bool
    public var endReason: String?
    public var sipCode: Int?
    public var q850Cause: Int?
    /// The gateway's control API refused the request (no SIP at all): its answer.
    public var refused: String?
    /// nil: this call did not check audio (or was not answered).
    public var audioPassed: Bool?
    public var audioLevel: Double?

    public init(index: Int, target: String, startSec: Double) {
        self.index = index
        self.target = target
        self.startSec = startSec
        endSec = startSec
        answered = false
        dropped = false
        cancelledByUs = false
    }
}

/// One reading of the gateway's `/metrics` during a load run.
public struct GatewaySample: Sendable, Codable, Equatable {
    public var sec: Double
    /// The busiest media thread's share of a CPU (0-1).
    public var mediaLoad: Double?
    /// The process's CPU use since the previous sample, in % of one core.
    public var cpuPercent: Double?
    public var residentBytes: Int?
    public var sessions: Int?

    public init(
        sec: Double, mediaLoad: Double? = nil, cpuPercent: Double? = nil, residentBytes: Int? = nil,
        sessions: Int? = nil
    ) {
        self.sec = sec
        self.mediaLoad = mediaLoad
        self.cpuPercent = cpuPercent
        self.residentBytes = residentBytes
        self.sessions = sessions
    }
}

/// p50, p95 and p99 by nearest rank.
public struct Percentiles: Sendable, Codable, Equatable {
    public var count: Int
    public var p50: Int
    public var p95: Int
    public var p99: Int
    public var max: Int

    public init?(_ values: [Int]) {
        let sorted = values.sorted()
        guard let p50 = LoadStatistics.percentile(sorted: sorted, 50),
            let p95 = LoadStatistics.percentile(sorted: sorted, 95),
            let p99 = LoadStatistics.percentile(sorted: sorted, 99), let last = sorted.last
        else { return nil }
        count = sorted.count
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
        max = last
    }

    /// "1012/1040/1100 ms", or "-" for none.
    public static func text(_ p: Percentiles?) -> String { p.map { "\($0.p50)/\($0.p95)/\($0.p99) ms" } ?? "-" }
}

public enum LoadStatistics {
    /// The nearest-rank percentile: the smallest value with at least `p` % of the values at
    /// or below it (`sorted[ceil(p/100 * n) - 1]`); nil for no values. `sorted` ascending.
    public static func percentile(sorted: [Int], _ p: Double) -> Int? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p * Double(sorted.count) / 100).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }

    /// SIP codes that count as the network doing its job though nobody answered (ITU-T E.425's
    /// user busy, no answer and refusal): 486 Busy Here, 600 Busy Everywhere, 480 Temporarily
    /// Unavailable (no answer), 603 Decline. A call we cancelled at the answer timeout (487)
    /// counts too.
    public static let userCauseCodes: Set<Int> = [486, 600, 480, 603]

    /// Whether a call counts toward NER: answered, or ended by the user's side, not the network's.
    public static func networkEffective(_ c: LoadCall) -> Bool {
        c.answered || c.cancelledByUs || c.sipCode.map { userCauseCodes.contains($0) } == true
    }
}

/// What a load run measured, and the figures of its report.
public struct LoadResult: Sendable, Codable {
    public var name: String
    public var profile: String?
    /// The plan as run.
    public var targets: [String]
    public var concurrent: Int
    public var cps: Double
    public var rampSec: Double
    public var holdSec: Double
    public var audioEvery: Int
    /// Wall-clock start (seconds since 1970) and the run's length.
    public var startedAt: Double
    public var durationSec: Double
    public var calls: [LoadCall]
    public var gateway: [GatewaySample]
    public var summary: LoadSummary

    public init(
        name: String, profile: String?, plan: LoadPlan, startedAt: Double, durationSec: Double,
        calls: [LoadCall], gateway: [GatewaySample]
    ) {
        self.name = name
        self.profile = profile
        targets = plan.targets
        concurrent = plan.concurrent
        cps = plan.cps
        rampSec = plan.rampSec
        holdSec = plan.holdSec
        audioEvery = plan.audioEvery
        self.startedAt = startedAt
        self.durationSec = durationSec
        self.calls = calls.sorted { $0.index < $1.index }
        self.gateway = gateway
        summary = LoadSummary(calls: self.calls, gateway: gateway, plan: plan)
    }

    /// `load: 40 attempts, 40 answered, ASR 100.0 %, NER 100.0 %, PDD p50/p95/p99 ... ms, ...`
    public var summaryLine: String {
        let s = summary
        var line =
            "load: \(s.attempts) attempts, \(s.answered) answered, ASR \(String(format: "%.1f", s.asrPercent)) %, "
            + "NER \(String(format: "%.1f", s.nerPercent)) %, PDD p50/p95/p99 \(Percentiles.text(s.postDialDelay)), "
            + "answer p50/p95/p99 \(Percentiles.text(s.answer))"
        if s.audioChecksRun > 0 { line += ", audio \(s.audioChecksPassed)/\(s.audioChecksRun)" }
        line += ", gateway load peak " + (s.gatewayMediaLoadPeakPercent.map { "\(Int($0.rounded())) %" } ?? "unknown")
        return line
    }
}

/// The run's figures.
public struct LoadSummary: Sendable, Codable, Equatable {
    public var attempts: Int
    public var answered: Int
    /// answered / attempts, in %.
    public var asrPercent: Double
    /// (answered + busy, no answer, decline) / attempts, in % (`LoadStatistics.networkEffective`).
    public var nerPercent: Double
    public var postDialDelay: Percentiles?
    public var answer: Percentiles?
    /// Unanswered calls by the SIP code they ended with ("none": no final response, "API":
    /// refused by the control API).
    public var failuresBySIPCode: [String: Int]
    /// Unanswered calls by the Q.850 cause of their end ("none": no cause given).
    public var failuresByCause: [String: Int]
    /// Answered calls that ended before we hung up.
    public var dropped: Int
    public var audioChecksRun: Int
    public var audioChecksPassed: Int
    /// Most calls in progress at once.
    public var peakConcurrent: Int
    /// The busiest media thread's load at its peak (%), the process's CPU peak (% of one
    /// core) and resident memory peak; nil when the gateway's `/metrics` did not say.
    public var gatewayMediaLoadPeakPercent: Double?
    public var gatewayCPUPeakPercent: Double?
    public var gatewayResidentPeakBytes: Int?
    /// "gateway media load peaked at 12 %; the gateway was not the bottleneck".
    public var gatewayVerdict: String
    /// The thresholds broken, each as a sentence; empty when all held (or none given).
    public var broken: [String]

    /// Over this media load (%), the gateway may be what limited the run.
    public static let bottleneckPercent = 80.0

    public init(calls: [LoadCall], gateway: [GatewaySample], plan: LoadPlan) {
        attempts = calls.count
        answered = calls.filter(\.answered).count
        asrPercent = attempts > 0 ? 100 * Double(answered) / Double(attempts) : 0
        nerPercent =
            attempts > 0 ? 100 * Double(calls.filter(LoadStatistics.networkEffective).count) / Double(attempts) : 0
        postDialDelay = Percentiles(calls.compactMap(\.postDialDelayMs))
        answer = Percentiles(calls.compactMap(\.answerMs))
        var bySIP: [String: Int] = [:], byCause: [String: Int] = [:]
        for c in calls where !c.answered {
            let code = c.refused != nil ? "API" : c.sipCode.map(String.init) ?? "none"
            bySIP[code, default: 0] += 1
            byCause[c.q850Cause.map(String.init) ?? "none", default: 0] += 1
        }
        failuresBySIPCode = bySIP
        failuresByCause = byCause
        dropped = calls.filter(\.dropped).count
        audioChecksRun = calls.filter { $0.audioPassed != nil }.count
        audioChecksPassed = calls.filter { $0.audioPassed == true }.count
        peakConcurrent = LoadSeries.inProgress(calls, step: 0.1).map(\.value).max().map { Int($0) } ?? 0
        gatewayMediaLoadPeakPercent = gateway.compactMap(\.mediaLoad).max().map { ($0 * 1000).rounded() / 10 }
        gatewayCPUPeakPercent = gateway.compactMap(\.cpuPercent).max().map { ($0 * 10).rounded() / 10 }
        gatewayResidentPeakBytes = gateway.compactMap(\.residentBytes).max()
        if let peak = gatewayMediaLoadPeakPercent {
            let cpu =
                gatewayCPUPeakPercent.map { String(format: " (process CPU peaked at %.0f %% of one core)", $0) } ?? ""
            gatewayVerdict =
                peak > Self.bottleneckPercent
                ? String(
                    format: "gateway media load peaked at %.0f %%%@; the gateway may have been the bottleneck", peak,
                    cpu)
                : String(
                    format: "gateway media load peaked at %.0f %%%@; the gateway was not the bottleneck", peak, cpu)
        } else {
            gatewayVerdict = "the gateway's load is unknown (its /metrics could not be read)"
        }
        var broken: [String] = []
        if let min = plan.minASR, asrPercent < min {
            broken.append(String(format: "ASR %.1f %% is below the minimum %.1f %%", asrPercent, min))
        }
        if let min = plan.minNER, nerPercent < min {
            broken.append(String(format: "NER %.1f %% is below the minimum %.1f %%", nerPercent, min))
        }
        if let max = plan.maxPostDialDelayMs {
            if let p = postDialDelay, p.p95 > max {
                broken.append("post-dial delay p95 \(p.p95) ms is over the maximum \(max) ms")
            }
            if postDialDelay == nil, attempts > 0 {
                broken.append("no call measured a post-dial delay (maximum \(max) ms)")
            }
        }
        if audioChecksPassed < audioChecksRun {
            broken.append("\(audioChecksRun - audioChecksPassed) of \(audioChecksRun) audio checks failed")
        }
        self.broken = broken
    }
}

/// Time series for the report's plots, from the calls.
public enum LoadSeries {
    public struct Point: Sendable, Equatable {
        public var sec: Double
        public var value: Double
    }

    /// Calls in progress every `step` seconds (started, not yet ended).
    public static func inProgress(_ calls: [LoadCall], step: Double) -> [Point] {
        guard let end = calls.map(\.endSec).max() else { return [] }
        var out: [Point] = []
        var t = 0.0
        while t <= end {
            out.append(Point(sec: t, value: Double(calls.filter { $0.startSec <= t && t < $0.endSec }.count)))
            t += step
        }
        out.append(Point(sec: end, value: 0))
        return out
    }

    /// Events per whole second (the second they fell in), from second 0 to the last.
    public static func perSecond(_ times: [Double]) -> [Point] {
        guard let last = times.max() else { return [] }
        var counts = [Double](repeating: 0, count: Int(last) + 1)
        for t in times where t >= 0 { counts[Int(t)] += 1 }
        return counts.enumerated().map { Point(sec: Double($0.offset), value: $0.element) }
    }
}
