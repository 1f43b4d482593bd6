import Foundation
import Testing

@testable import CarrierTest

@Suite struct AudioQualityStepTests {
    static func suite(_ step: String) -> String {
        "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ \(step) ] } ] }"
    }

    @Test func fullStepParses() throws {
        let text = Self.suite(
            """
            { audioQuality: "echo", tones: [400, 1020, 2200], durationSec: 3, withinSec: 10,
              minLevelDb: -30, minSnrDb: 15, maxClippingPercent: 1, maxGapMs: 100, maxDelayMs: 500,
              maxLossPercent: 2, maxJitterMs: 30, minMos: 3.5 }
            """)
        let step = try TestSuite.parse(text, file: "s.json5").tests[0].steps[0]
        var t = AudioThresholds()
        t.minLevelDb = -30
        t.maxGapMs = 100
        t.maxDelayMs = 500
        t.maxLossPercent = 2
        t.maxJitterMs = 30
        t.minMos = 3.5
        #expect(
            step
                == .audioQuality(
                    AudioQualityStep(mode: .echo, tones: [400, 1020, 2200], durationSec: 3, within: 10, thresholds: t)))
        #expect(step.description == "audio quality (echo, 400/1020/2200 Hz, 3.0 s)")
    }

    @Test func theShippedAudioSuiteLoads() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/audio.json5").path
        let suite = try TestSuite.load(path: path)
        #expect(suite.name == "audio" && suite.tests.count == 3)
        #expect(
            suite.tests[2].steps[1]
                == .audioQuality(AudioQualityStep(mode: .carrier, tones: [400], durationSec: 1, within: 2)))
    }

    @Test func defaults() throws {
        let echo = try TestSuite.parse(Self.suite("{ audioQuality: \"echo\" }"), file: "s.json5").tests[0].steps[0]
        #expect(echo == .audioQuality(AudioQualityStep(mode: .echo)))
        guard case .audioQuality(let q) = echo else { return }
        #expect(q.tones == [400, 1020, 2200] && q.durationSec == 3 && q.within == 10)
        #expect(
            q.thresholds.minLevelDb == -35 && q.thresholds.minSnrDb == 15 && q.thresholds.maxClippingPercent == 1
                && q.thresholds.maxGapMs == 120
                && q.thresholds.maxDelayMs == 1000 && q.thresholds.maxLossPercent == 3 && q.thresholds.maxJitterMs == 40
                && q.thresholds.minMos == nil)
        let carrier = try TestSuite.parse(
            Self.suite("{ audioQuality: \"carrier\", tones: [400], durationSec: 2, minSnrDb: 15 }"), file: "s.json5")
        #expect(
            carrier.tests[0].steps[0] == .audioQuality(AudioQualityStep(mode: .carrier, tones: [400], durationSec: 2)))
        // 0 and 1 are numbers, not booleans (on Linux they also cast to Bool).
        let ones = try TestSuite.parse(
            Self.suite("{ audioQuality: \"echo\", durationSec: 1, withinSec: 1, maxClippingPercent: 0 }"),
            file: "s.json5")
        guard case .audioQuality(let one) = ones.tests[0].steps[0] else { Issue.record("\(ones)"); return }
        #expect(one.durationSec == 1 && one.within == 1 && one.thresholds.maxClippingPercent == 0)
        let unknown = try TestSuite.parse(Self.suite("{ audioQuality: \"carrier\" }"), file: "s.json5")
        #expect(unknown.tests[0].steps[0] == .audioQuality(AudioQualityStep(mode: .carrier, tones: [])))
    }

    @Test(arguments: [
        ("{ audioQuality: \"loud\" }", "tests[0].steps[0].audioQuality"),
        ("{ audioQuality: 1 }", "tests[0].steps[0].audioQuality"),
        ("{ audioQuality: \"echo\", tonez: [400] }", "tests[0].steps[0].tonez"),
        ("{ audioQuality: \"echo\", tones: [] }", "tests[0].steps[0].tones"),
        ("{ audioQuality: \"echo\", tones: 400 }", "tests[0].steps[0].tones"),
        ("{ audioQuality: \"echo\", tones: [400, 9000] }", "tests[0].steps[0].tones[1]"),
        ("{ audioQuality: \"echo\", tones: [400, \"x\"] }", "tests[0].steps[0].tones[1]"),
        ("{ audioQuality: \"echo\", tones: [400, 400] }", "tests[0].steps[0].tones[1]"),
        ("{ audioQuality: \"echo\", durationSec: 0 }", "tests[0].steps[0].durationSec"),
        ("{ audioQuality: \"echo\", durationSec: 61 }", "tests[0].steps[0].durationSec"),
        ("{ audioQuality: \"echo\", withinSec: 0 }", "tests[0].steps[0].withinSec"),
        ("{ audioQuality: \"echo\", minLevelDb: 3 }", "tests[0].steps[0].minLevelDb"),
        ("{ audioQuality: \"echo\", minSnrDb: \"15\" }", "tests[0].steps[0].minSnrDb"),
        ("{ audioQuality: \"echo\", maxClippingPercent: 101 }", "tests[0].steps[0].maxClippingPercent"),
        ("{ audioQuality: \"echo\", maxGapMs: -1 }", "tests[0].steps[0].maxGapMs"),
        ("{ audioQuality: \"echo\", maxDelayMs: 20000 }", "tests[0].steps[0].maxDelayMs"),
        ("{ audioQuality: \"carrier\", maxDelayMs: 500 }", "tests[0].steps[0].maxDelayMs"),
        ("{ audioQuality: \"echo\", maxLossPercent: true }", "tests[0].steps[0].maxLossPercent"),
        ("{ audioQuality: \"echo\", tones: [false] }", "tests[0].steps[0].tones[0]"),
        ("{ audioQuality: \"echo\", maxJitterMs: -5 }", "tests[0].steps[0].maxJitterMs"),
        ("{ audioQuality: \"echo\", minMos: 5.5 }", "tests[0].steps[0].minMos"),
        ("{ audioQuality: \"echo\", hangup: true }", "tests[0].steps[0]"),
        ("{ wait: 1, minSnrDb: 15 }", "tests[0].steps[0].minSnrDb"),
        ("{ expectEcho: 1000, tones: [400] }", "tests[0].steps[0].tones")
    ])
    func badStepsNameTheKey(_ step: String, _ key: String) {
        do {
            _ = try TestSuite.parse(Self.suite(step), file: "suite.json5")
            Issue.record("accepted \(step)")
        } catch {
            #expect(error.file == "suite.json5" && error.keyPath == key, "\(error)")
        }
    }

    static let score = AudioScore(
        levelDbfs: -20, snrDb: 9.8, tonesFound: [400], tonesMissing: [], clippingPercent: 0,
        longestGapMs: 240, silentPercent: 5, delayMs: nil)

    @Test func judgeNamesEachThresholdBroken() {
        let failures = AudioCheck.judge(
            Self.score, mode: .carrier, lossPercent: 6.1, jitterMs: 31, mos: 3.1, AudioThresholds())
        #expect(
            failures == [
                "SNR 9.8 dB under the 15 dB floor", "longest gap 240 ms over 120 ms", "packet loss 6.1 % over 3 %"
            ])
        let check = AudioCheck(
            step: 2, mode: "carrier", score: Self.score, lossPercent: 6.1, jitterMs: 31, passed: false,
            failures: Array(failures.prefix(2)))
        #expect(
            check.message
                == "audio from the carrier: SNR 9.8 dB under the 15 dB floor; longest gap 240 ms over 120 ms (packet loss 6.1 %, jitter 31 ms)"
        )
        var strict = AudioThresholds()
        strict.minMos = 3.5
        strict.maxJitterMs = 30
        var echo = Self.score
        echo.snrDb = 30
        echo.longestGapMs = 0
        echo.tonesMissing = [2200]
        #expect(
            AudioCheck.judge(echo, mode: .echo, lossPercent: 0, jitterMs: 31, mos: 3.1, strict)
                == [
                    "tones missing: 2200 Hz", "delay not measurable (what came back does not match what was played)",
                    "jitter 31 ms over 30 ms", "MOS 3.10 under 3.5"
                ])
        echo.tonesMissing = []
        echo.delayMs = 180
        #expect(
            AudioCheck.judge(echo, mode: .echo, lossPercent: nil, jitterMs: nil, mos: nil, AudioThresholds()).isEmpty)
    }

    @Test func resultsWithoutAudioStillDecodeAndRender() throws {
        let old = """
            {"test":"t","iteration":1,"passed":true,"durationSec":1.5,"timeline":[],"events":[]}
            """
        let decoded = try JSONDecoder().decode(TestCallResult.self, from: Data(old.utf8))
        #expect(decoded.audio == nil)
        var r = decoded
        r.audio = [
            AudioCheck(
                step: 3, mode: "echo", score: Self.score, lossPercent: 0.5, jitterMs: 4, mos: 4.3, passed: false,
                failures: ["SNR 9.8 dB under the 15 dB floor"])
        ]
        let json = Reports.json(suite: "s", [r])
        #expect(json.contains("\"snrDb\" : 9.8"))
        let html = Reports.html(suite: "s", [r])
        #expect(
            html.contains("<table class=\"audio\">") && html.contains("9.8 dB") && html.contains("240 ms")
                && html.contains("4.30"))
        #expect(Reports.junit(suite: "s", [r]).contains("snr_db=9.8"))
    }
}
