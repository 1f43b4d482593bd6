import Foundation
import IrisAPI
import Testing

@testable import CarrierTest

/// The suite steps `transfer` and `expectTransfer`: what a suite file may say, and how the
/// runner judges a call's transfer events.
@Suite struct TransferStepTests {
    static func suite(_ step: String) -> String {
        "{ name: \"s\", tests: [ { name: \"t\", target: \"1\", steps: [ \(step) ] } ] }"
    }

    static func step(_ text: String) throws -> TestStep {
        try TestSuite.parse(suite(text), file: "suite.json5").tests[0].steps[0]
    }

    @Test(arguments: [
        ("{ transfer: { targetTN: \"+15550100002\" } }", TestStep.transfer(targetTN: "+15550100002")),
        ("{ expectTransfer: \"requested\" }", .expectTransfer(.requested, sipCode: nil, within: 10)),
        ("{ expectTransfer: \"trying\", sipCode: 100 }", .expectTransfer(.trying, sipCode: 100, within: 10)),
        ("{ expectTransfer: \"ringing\", withinSec: 30 }", .expectTransfer(.ringing, sipCode: nil, within: 30)),
        (
            "{ expectTransfer: \"succeeded\", sipCode: 200, withinSec: 20 }",
            .expectTransfer(.succeeded, sipCode: 200, within: 20)
        ),
        ("{ expectTransfer: \"failed\", sipCode: 603 }", .expectTransfer(.failed, sipCode: 603, within: 10))
    ])
    func goodStepsParse(_ text: String, _ expected: TestStep) throws {
        #expect(try Self.step(text) == expected)
    }

    @Test func stepsDescribeThemselves() {
        #expect(TestStep.transfer(targetTN: "+15550100002").description == "transfer to +15550100002")
        #expect(
            TestStep.expectTransfer(.succeeded, sipCode: 200, within: 5).description == "expect transfer succeeded 200")
        #expect(TestStep.expectTransfer(.trying, sipCode: nil, within: 5).description == "expect transfer trying")
    }

    @Test(arguments: [
        ("{ transfer: \"+15550100002\" }", "tests[0].steps[0].transfer", "must be an object"),
        ("{ transfer: {} }", "tests[0].steps[0].transfer.targetTN", "missing required key"),
        ("{ transfer: { targetTN: 15550100002 } }", "tests[0].steps[0].transfer.targetTN", "must be a string"),
        ("{ transfer: { targetTN: \"\" } }", "tests[0].steps[0].transfer.targetTN", "must be a number to transfer to"),
        (
            "{ transfer: { targetTN: \"+1555\", target: \"+1556\" } }", "tests[0].steps[0].transfer.target",
            "unknown key (allowed: replacesRoomId, targetTN)"
        ),
        (
            "{ transfer: { replacesRoomId: \"abc\" } }", "tests[0].steps[0].transfer.replacesRoomId",
            "an attended transfer needs a second call and a suite's test places one: use targetTN"
        ),
        (
            "{ transfer: { targetTN: \"+1555\" }, hangup: true }", "tests[0].steps[0]",
            "needs exactly one of"
        ),
        (
            "{ expectTransfer: \"done\" }", "tests[0].steps[0].expectTransfer",
            "must be one of requested, trying, ringing, succeeded, failed"
        ),
        ("{ expectTransfer: 200 }", "tests[0].steps[0].expectTransfer", "must be a string"),
        (
            "{ expectTransfer: \"failed\", sipCode: 99 }", "tests[0].steps[0].sipCode",
            "must be a number from 100.0 to 699.0"
        ),
        (
            "{ expectTransfer: \"failed\", sipCode: \"486\" }", "tests[0].steps[0].sipCode",
            "must be a number from 100.0 to 699.0"
        ),
        (
            "{ expectTransfer: \"failed\", withinSec: 0 }", "tests[0].steps[0].withinSec",
            "must be a number from 0.1 to 600.0"
        ),
        ("{ expectTransfer: \"failed\", timeoutSec: 5 }", "tests[0].steps[0].timeoutSec", "unknown key")
    ])
    func badStepsNameFileAndKey(_ text: String, _ key: String, _ message: String) {
        do {
            _ = try TestSuite.parse(Self.suite(text), file: "suite.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "suite.json5" && error.keyPath == key, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.description.hasPrefix("suite.json5: \(key): "), "\(error)")
        }
    }

    // MARK: the runner's judgement on canned events

    static func transfer(
        _ state: TransferState, _ code: Int? = nil, _ reason: String = "", message: String? = nil
    )
        -> SessionEvent
    {
        var e = SessionEvent(event: .onSessionTransfer, roomId: "r", traceId: "t")
        e.transfer = TransferInfo(state: state, by: "app", method: "refer", targetTN: "+15550100002")
        e.sip = code.map { SIPDetails(code: $0, reason: reason) }
        e.message = message
        return e
    }

    static func connected() -> SessionEvent {
        var e = SessionEvent(event: .onSessionSIPStatus, roomId: "r", traceId: "t")
        e.status = .connected
        return e
    }

    static func ended(_ reason: EndReason) -> SessionEvent {
        var e = SessionEvent(event: .onSessionEnded, roomId: "r", traceId: "t")
        e.reason = reason
        return e
    }

    static let blind: [SessionEvent] = [
        connected(), transfer(.requested), transfer(.trying, 100, "Trying"), transfer(.ringing, 180, "Ringing"),
        transfer(.succeeded, 200, "OK"), ended(.transferred)
    ]

    @Test func matchesInOrderFromTheCursor() {
        #expect(SuiteRunner.transferMatch(.requested, sipCode: nil, in: Self.blind, from: 0) == .matched(at: 1))
        #expect(SuiteRunner.transferMatch(.trying, sipCode: 100, in: Self.blind, from: 2) == .matched(at: 2))
        #expect(SuiteRunner.transferMatch(.succeeded, sipCode: 200, in: Self.blind, from: 3) == .matched(at: 4))
        // Only what came so far: the succeeded event is not there yet.
        #expect(
            SuiteRunner.transferMatch(.succeeded, sipCode: nil, in: Array(Self.blind.prefix(4)), from: 0) == .pending)
        #expect(SuiteRunner.transferMatch(.requested, sipCode: nil, in: [Self.connected()], from: 0) == .pending)
    }

    @Test func failsAtOnceWhenTheEventsSayItCannotHold() {
        let failed = [
            Self.connected(), Self.transfer(.requested), Self.transfer(.trying, 100, "Trying"),
            Self.transfer(.failed, 486, "Busy Here", message: "the transfer target is busy")
        ]
        #expect(
            SuiteRunner.transferMatch(.succeeded, sipCode: nil, in: failed, from: 0)
                == .failed(
                    "expected transfer succeeded; the transfer ended failed (486 Busy Here: the transfer target is busy)"
                ))
        #expect(
            SuiteRunner.transferMatch(.failed, sipCode: 603, in: failed, from: 0)
                == .failed(
                    "expected transfer failed with SIP 603; got failed (486 Busy Here: the transfer target is busy)"))
        #expect(SuiteRunner.transferMatch(.failed, sipCode: 486, in: failed, from: 0) == .matched(at: 3))
        // A matched `requested` behind the cursor does not count again; the end comes first.
        let endedEarly = [Self.connected(), Self.transfer(.requested), Self.ended(.completed)]
        #expect(
            SuiteRunner.transferMatch(.trying, sipCode: nil, in: endedEarly, from: 2)
                == .failed("expected transfer trying; the call ended completed first (transfer events: none)"))
        #expect(
            SuiteRunner.transferMatch(.succeeded, sipCode: nil, in: endedEarly, from: 0)
                == .failed("expected transfer succeeded; the call ended completed first (transfer events: requested)"))
    }

    @Test func aTimeoutSaysWhatCame() {
        let events = Array(Self.blind.prefix(4))
        #expect(
            SuiteRunner.transferTimedOut(.succeeded, sipCode: 200, within: 5, events: events, from: 1)
                == "expected transfer succeeded with SIP 200 within 5.0 s; transfer events: requested, trying (100 Trying), ringing (180 Ringing)"
        )
        #expect(
            SuiteRunner.transferTimedOut(.requested, sipCode: nil, within: 2, events: [Self.connected()], from: 0)
                == "expected transfer requested within 2.0 s; transfer events: none")
    }
}
