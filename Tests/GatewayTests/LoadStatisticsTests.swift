import CarrierTest
import Foundation
import Testing

@Suite struct LoadStatisticsTests {
    /// Nearest rank: the smallest value with at least p % of the values at or below it.
    @Test(arguments: [
        ([15, 20, 35, 40, 50], 5.0, 15), ([15, 20, 35, 40, 50], 30.0, 20), ([15, 20, 35, 40, 50], 40.0, 20),
        ([15, 20, 35, 40, 50], 50.0, 35), ([15, 20, 35, 40, 50], 100.0, 50),
        ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 25.0, 7), ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 50.0, 8),
        ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 75.0, 15), ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 95.0, 20),
        ([7], 50.0, 7), ([7], 99.0, 7),
        (Array(1...100), 50.0, 50), (Array(1...100), 95.0, 95), (Array(1...100), 99.0, 99),
        (Array(1...200), 99.0, 198)
    ])
    func nearestRankPercentile(_ values: [Int], _ p: Double, _ expected: Int) {
        #expect(LoadStatistics.percentile(sorted: values, p) == expected)
    }

    @Test func noValuesNoPercentile() {
        #expect(LoadStatistics.percentile(sorted: [], 50) == nil)
        #expect(Percentiles([]) == nil)
        #expect(Percentiles([30, 10, 20]) == Percentiles([10, 20, 30]))
        #expect(Percentiles([30, 10, 20])?.p50 == 20)
    }

    static func call(
        _ i: Int, answered: Bool, code: Int? = nil, cause: Int? = nil, cancelled: Bool = false, pdd: Int? = nil
    ) -> LoadCall {
        var c = LoadCall(index: i, target: "+1555", startSec: Double(i))
        c.endSec = Double(i) + 2
        c.answered = answered
        c.sipCode = code
        c.q850Cause = cause
        c.cancelledByUs = cancelled
        c.postDialDelayMs = pdd
        return c
    }

    /// ASR counts answers; NER also the user's refusals (486, 480, 603, 600, our cancel),
    /// not the network's (503, 404, no answer at all).
    @Test func asrNerAndFailureTables() {
        let calls = [
            Self.call(1, answered: true, pdd: 100), Self.call(2, answered: true, pdd: 300),
            Self.call(3, answered: false, code: 486, cause: 17, pdd: 200),
            Self.call(4, answered: false, code: 603, cause: 21),
            Self.call(5, answered: false, code: 487, cancelled: true),
            Self.call(6, answered: false, code: 480, cause: 19),
            Self.call(7, answered: false, code: 503, cause: 34), Self.call(8, answered: false, code: 404, cause: 1)
        ]
        var plan = LoadPlan()
        plan.targets = ["+1555"]
        plan.minASR = 50
        plan.maxPostDialDelayMs = 250
        let s = LoadSummary(
            calls: calls, gateway: [GatewaySample(sec: 1, mediaLoad: 0.12), GatewaySample(sec: 2, mediaLoad: 0.09)],
            plan: plan)
        #expect(s.attempts == 8 && s.answered == 2)
        #expect(s.asrPercent == 25 && s.nerPercent == 75)
        #expect(s.failuresBySIPCode == ["486": 1, "603": 1, "487": 1, "480": 1, "503": 1, "404": 1])
        #expect(s.failuresByCause == ["17": 1, "21": 1, "none": 1, "19": 1, "34": 1, "1": 1])
        #expect(s.postDialDelay == Percentiles([100, 200, 300]))
        #expect(s.gatewayMediaLoadPeakPercent == 12)
        #expect(s.gatewayVerdict == "gateway media load peaked at 12 %; the gateway was not the bottleneck")
        #expect(
            s.broken == [
                "ASR 25.0 % is below the minimum 50.0 %", "post-dial delay p95 300 ms is over the maximum 250 ms"
            ])
        #expect(s.peakConcurrent == 2)
        let busy = LoadSummary(calls: calls, gateway: [GatewaySample(sec: 1, mediaLoad: 0.85)], plan: LoadPlan())
        #expect(busy.gatewayVerdict.hasSuffix("the gateway may have been the bottleneck") && busy.broken.isEmpty)
    }

    @Test func rampRisesLinearlyFromOne() {
        var plan = LoadPlan()
        plan.cps = 11
        plan.rampSec = 10
        #expect(plan.rate(at: 0) == 1 && plan.rate(at: 5) == 6 && plan.rate(at: 10) == 11 && plan.rate(at: 60) == 11)
        plan.audioEvery = 3
        #expect((0..<9).filter(plan.checksAudio) == [2, 5, 8])
    }

    @Test func loadSectionParses() throws {
        let (name, plan) = try LoadSuite.parse(
            """
            { name: "mixed", load: { target: ["+15550100001", "+15550100002"], concurrent: 20, cps: 10, rampSec: 2, calls: 40,
                                     holdSec: 1, audioEvery: 10, maxPostDialDelayMs: 3000, minASR: 50 } }
            """, file: "load.json5")
        #expect(
            name == "mixed" && plan.targets == ["+15550100001", "+15550100002"] && plan.concurrent == 20
                && plan.cps == 10)
        #expect(
            plan.calls == 40 && plan.holdSec == 1 && plan.audioEvery == 10 && plan.maxPostDialDelayMs == 3000
                && plan.minASR == 50)
        #expect(plan.target(of: 0) == "+15550100001" && plan.target(of: 3) == "+15550100002")
    }

    @Test(arguments: [
        ("{ name: \"s\" }", "load"),
        ("{ name: \"s\", load: { cps: 2 } }", "load.target"),
        ("{ name: \"s\", load: { target: [] } }", "load.target"),
        ("{ name: \"s\", load: { target: \"1\", concurrent: 0 } }", "load.concurrent"),
        ("{ name: \"s\", load: { target: \"1\", concurrent: 2.5 } }", "load.concurrent"),
        ("{ name: \"s\", load: { target: \"1\", calls: 5, durationSec: 10 } }", "load"),
        ("{ name: \"s\", load: { target: \"1\", cpz: 5 } }", "load.cpz"),
        ("{ name: \"s\", load: { target: \"1\", minASR: 101 } }", "load.minASR"),
        ("{ name: \"s\", load: { target: \"1\", holdSec: true } }", "load.holdSec")
    ])
    func badLoadSectionsNameTheKey(_ text: String, _ key: String) {
        do {
            _ = try LoadSuite.parse(text, file: "load.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.keyPath == key, "\(error)")
        }
    }

    /// A suite file may carry both: `tests` for `irisgw test`, `load` for `--load`.
    @Test func aSuiteWithALoadSectionStillLoadsItsTests() throws {
        let suite = try TestSuite.parse(
            """
            { name: "both", tests: [ { name: "t", target: "1", steps: [ { hangup: true } ] } ], load: { target: "1" } }
            """, file: "both.json5")
        #expect(suite.tests.count == 1)
    }

    @Test func prometheusSamplesReadsLabelsAndValues() {
        let m = PrometheusSamples(
            """
            # HELP irisgw_media_thread_load x
            irisgw_media_thread_load{thread="0"} 0.12
            irisgw_media_thread_load{thread="1"} 0.3
            process_cpu_seconds_total 4.5
            """)
        #expect(m.values("irisgw_media_thread_load") == [0.12, 0.3])
        #expect(
            m.value("process_cpu_seconds_total") == 4.5
                && m.value("irisgw_media_thread_load", labels: "thread=\"1\"") == 0.3)
    }
}
