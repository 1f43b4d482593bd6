import CarrierTest
import Foundation
import Testing

@Suite struct TestSuiteTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/basic.json5").path

    @Test func theShippedBasicSuiteLoads() throws {
        let suite = try TestSuite.load(path: Self.shipped)
        #expect(suite.name == "basic" && suite.tests.count == 14)
        #expect(suite.tests[1].steps == [.expectEnd(.busy, sipCode: 486, cause: 17, causeFits: false, within: 10)])
    }

    @Test func limitsCauseFitsAndExpectUpParse() throws {
        let suite = try TestSuite.parse(
            """
            { name: "s", tests: [ { name: "t", target: "1", maxPostDialDelayMs: 2000, maxAnswerMs: 5000,
                                    steps: [ { expectUp: 8 }, { expectEnd: "busy", causeFits: true } ] } ] }
            """, file: "suite.json5")
        let t = try #require(suite.tests.first)
        #expect(t.maxPostDialDelayMs == 2000 && t.maxAnswerMs == 5000)
        #expect(t.steps == [.expectUp(8), .expectEnd(.busy, sipCode: nil, cause: nil, causeFits: true, within: 10)])
        let plain = try TestSuite.parse(
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { hangup: true } ] } ] }", file: "s")
        #expect(plain.tests[0].maxPostDialDelayMs == nil && plain.tests[0].maxAnswerMs == nil)
        // 1 is a number, not a boolean; true is not a number.
        let one = try TestSuite.parse(
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", repeat: 1, steps: [ { expectAudio: true, withinSec: 1 }, { wait: 1 } ] } ] }",
            file: "s")
        #expect(one.tests[0].steps == [.expectAudio(within: 1), .wait(1)] && one.tests[0].repeatCount == 1)
        #expect(throws: SuiteError.self) {
            try TestSuite.parse(
                "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { wait: true } ] } ] }", file: "s")
        }
    }

    @Test func q850ListsTheCausesThatFit() {
        #expect(Q850.expected(sipCode: 486) == [17])
        #expect(Q850.expected(sipCode: 404) == [1, 2, 3, 20, 22, 26])
        #expect(Q850.expected(sipCode: 299) == nil)
        #expect(!Q850.fits(cause: 1, sipCode: 486) && Q850.fits(cause: 17, sipCode: 486))
    }

    @Test(arguments: [
        ("{ name: \"s\", tests: [] }", "tests"),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { wait: 1, hangup: true } ] } ] }",
            "tests[0].steps[0]"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { expect: \"Ringing\" } ] } ] }",
            "tests[0].steps[0].expect"
        ),
        ("{ name: \"s\", tests: [ { name: \"t\", target: \"1\", stepz: [] } ] }", "tests[0].stepz"),
        ("{ name: \"s\", tests: [ { name: \"t\", steps: [ { hangup: true } ] } ] }", "tests[0].target"),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { expectEnd: \"gone\" } ] } ] }",
            "tests[0].steps[0].expectEnd"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { sendDTMF: \"12x\" } ] } ] }",
            "tests[0].steps[0].sendDTMF"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", repeat: 0, steps: [ { hangup: true } ] } ] }",
            "tests[0].repeat"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", maxPostDialDelayMs: 0, steps: [ { hangup: true } ] } ] }",
            "tests[0].maxPostDialDelayMs"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { expectEnd: \"busy\", causeFits: \"yes\" } ] } ] }",
            "tests[0].steps[0].causeFits"
        ),
        (
            "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ { expectUp: \"long\" } ] } ] }",
            "tests[0].steps[0].expectUp"
        )
    ])
    func badSuitesNameTheKey(_ text: String, _ key: String) {
        do {
            _ = try TestSuite.parse(text, file: "suite.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "suite.json5" && error.keyPath == key, "\(error)")
        }
    }

    /// G.107 values worked by hand: a clean call, 5% loss with PLC, 400 ms one way.
    @Test(arguments: [(0.0, 20.0, 4.40), (5.0, 20.0, 3.90), (0.0, 400.0, 3.05)])
    func eModelMatchesWorkedValues(_ loss: Double, _ delay: Double, _ expected: Double) {
        let mos = EModel.mos(codec: "PCMU", lossPercent: loss, oneWayDelayMs: delay)
        #expect(abs(mos - expected) <= 0.02, "\(mos)")
    }
}
