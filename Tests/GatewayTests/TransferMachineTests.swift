import Gateway
import IrisAPI
import SIP
import Testing

/// The two transfer machines alone: no socket, no clock. Each row feeds inputs and checks what
/// the machine says to do, in the words of the race tables in their doc comments.
@Suite struct TransferMachineTests {
    static func trace(_ actions: [TransferMachine.Action]) -> [String] {
        actions.map { a in
            switch a {
            case .sendRefer: "REFER"
            case let .report(state, sip, _): state.rawValue + (sip.map { "/\($0.code)" } ?? "")
            case .answerNotify(let s): "notify->\(s)"
            case .armTimer: "timer"
            case .cancelTimer: "stop-timer"
            case .scheduleRetry: "retry-later"
            case .complete: "complete"
            case .startBridge: "bridge"
            case .joinBridge: "join"
            case .abandonBridge: "abandon"
            }
        }
    }

    static func frag(_ code: Int, _ reason: String = "") -> SIPFrag { SIPFrag(status: code, reason: reason) }
    static func sip(_ code: Int) -> SIPDetails { SIPDetails(code: code, reason: "") }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var fallback: TrunkProfile.Transfer.Fallback = .fail
        var inputs: [TransferMachine.Input]
        var expected: [String]
        var phase: TransferMachine.Phase
        var description: String { name }
    }

    static let start = ["requested", "timer", "REFER"]

    static let rows: [Row] = [
        Row(
            name: "202, NOTIFY 100, 180, 200: succeeded and the session ends",
            inputs: [
                .start, .referResponse(sip(202)), .notify(frag(100), terminated: false),
                .notify(frag(180), terminated: false), .notify(frag(200), terminated: true)
            ],
            expected: start + [
                "timer", "notify->200", "trying/100", "timer", "notify->200", "ringing/180", "timer", "notify->200",
                "stop-timer", "succeeded/200", "complete"
            ], phase: .succeeded),
        Row(
            name: "a NOTIFY before the 202 counts as acceptance; the 202 then changes nothing",
            inputs: [.start, .notify(frag(100), terminated: false), .referResponse(sip(202))],
            expected: start + ["notify->200", "trying/100", "timer"], phase: .accepted),
        Row(
            name: "the same 180 twice is one ringing",
            inputs: [
                .start, .referResponse(sip(202)), .notify(frag(180), terminated: false),
                .notify(frag(180), terminated: false)
            ],
            expected: start + ["timer", "notify->200", "ringing/180", "timer", "notify->200", "timer"],
            phase: .accepted),
        Row(
            name: "405 to the REFER: failed, the call goes on",
            inputs: [.start, .referResponse(sip(405))], expected: start + ["stop-timer", "failed/405"], phase: .failed),
        Row(
            name: "603 to the REFER with the bridge fallback: the gateway dials",
            fallback: .bridge, inputs: [.start, .referResponse(sip(603))],
            expected: start + ["stop-timer", "trying/603", "bridge"], phase: .bridging),
        Row(
            name: "491 to the REFER: once more after a pause, then failed",
            inputs: [.start, .referResponse(sip(491)), .retryDue, .referResponse(sip(491))],
            expected: start + ["stop-timer", "retry-later", "timer", "REFER", "stop-timer", "failed/491"],
            phase: .failed),
        Row(
            name: "a final NOTIFY 486: failed with 486",
            inputs: [
                .start, .referResponse(sip(202)), .notify(frag(100), terminated: false),
                .notify(frag(486), terminated: true)
            ],
            expected: start + [
                "timer", "notify->200", "trying/100", "timer", "notify->200", "stop-timer", "failed/486"
            ],
            phase: .failed),
        Row(
            name: "terminated before a final status: failed 487",
            inputs: [.start, .referResponse(sip(202)), .notify(frag(180), terminated: true)],
            expected: start + ["timer", "notify->200", "ringing/180", "stop-timer", "failed/487"], phase: .failed),
        Row(
            name: "no NOTIFY in time: failed 408",
            inputs: [.start, .referResponse(sip(202)), .notifyTimeout],
            expected: start + ["timer", "stop-timer", "failed/408"], phase: .failed),
        Row(
            name: "no answer to the REFER in time, bridge fallback: the gateway dials",
            fallback: .bridge, inputs: [.start, .notifyTimeout],
            expected: start + ["stop-timer", "trying/408", "bridge"], phase: .bridging),
        Row(
            name: "the carrier's BYE after the 202, before a final NOTIFY: succeeded",
            inputs: [.start, .referResponse(sip(202)), .callEnded],
            expected: start + ["timer", "stop-timer", "succeeded"], phase: .succeeded),
        Row(
            name: "the carrier's BYE before the 202: failed",
            inputs: [.start, .callEnded], expected: start + ["stop-timer", "failed"], phase: .failed),
        Row(
            name: "a NOTIFY after the end gets 481",
            inputs: [.start, .referResponse(sip(405)), .notify(frag(200), terminated: true)],
            expected: start + ["stop-timer", "failed/405", "notify->481"], phase: .failed),
        Row(
            name: "a late 202 after a timeout changes nothing",
            inputs: [.start, .notifyTimeout, .referResponse(sip(202))],
            expected: start + ["stop-timer", "failed/408"], phase: .failed),
        Row(
            name: "bridge: the target rings and answers; the legs are joined",
            fallback: .bridge, inputs: [.start, .referResponse(sip(501)), .bridgeRinging, .bridgeAnswered],
            expected: start + ["stop-timer", "trying/501", "bridge", "ringing", "stop-timer", "join", "succeeded"],
            phase: .succeeded),
        Row(
            name: "bridge: the target is busy; the call is as before",
            fallback: .bridge, inputs: [.start, .referResponse(sip(405)), .bridgeFailed(sip(486))],
            expected: start + ["stop-timer", "trying/405", "bridge", "stop-timer", "failed/486"], phase: .failed),
        Row(
            name: "bridge: the call ends while the target rings; the dial goes",
            fallback: .bridge, inputs: [.start, .referResponse(sip(405)), .bridgeRinging, .callEnded],
            expected: start + ["stop-timer", "trying/405", "bridge", "ringing", "stop-timer", "abandon", "failed"],
            phase: .failed),
        Row(
            name: "the app closes the call while the carrier works on it: failed",
            inputs: [.start, .referResponse(sip(202)), .notify(frag(180), terminated: false), .sessionEnding],
            expected: start + ["timer", "notify->200", "ringing/180", "timer", "stop-timer", "failed"], phase: .failed),
        Row(
            name: "the app closes the call while the bridge dials: the dial goes",
            fallback: .bridge, inputs: [.start, .referResponse(sip(405)), .sessionEnding],
            expected: start + ["stop-timer", "trying/405", "bridge", "stop-timer", "abandon", "failed"], phase: .failed),
        Row(
            name: "bridge events after the bridge are ignored",
            inputs: [.start, .referResponse(sip(405)), .bridgeAnswered, .bridgeFailed(nil)],
            expected: start + ["stop-timer", "failed/405"], phase: .failed)
    ]

    @Test(arguments: rows)
    func transferor(_ row: Row) {
        var m = TransferMachine(
            kind: .blind(targetTN: "+15550100001"), fallback: row.fallback, notifyTimeout: 10, completeTimeout: 60)
        var out: [String] = []
        for (i, input) in row.inputs.enumerated() { out += Self.trace(m.handle(input, now: Double(i))) }
        #expect(out == row.expected)
        #expect(m.phase == row.phase)
        #expect(out.filter { $0.hasPrefix("succeeded") || $0.hasPrefix("failed") }.count <= 1)
    }

    @Test func theMethodSaysBridgeOnceTheFallbackRuns() {
        var m = TransferMachine(
            kind: .attended(replacesRoomId: "r2"), fallback: .bridge, notifyTimeout: 10, completeTimeout: 60)
        _ = m.handle(.start, now: 0)
        #expect(m.method == "refer")
        _ = m.handle(.referResponse(Self.sip(603)), now: 1)
        #expect(m.method == "bridge")
    }

    /// The NOTIFY bound never outlasts the complete bound.
    @Test func theNotifyBoundStopsAtTheCompleteBound() {
        var m = TransferMachine(kind: .blind(targetTN: "+1"), fallback: .fail, notifyTimeout: 10, completeTimeout: 15)
        _ = m.handle(.start, now: 0)
        _ = m.handle(.referResponse(Self.sip(202)), now: 1)
        let actions = m.handle(.notify(Self.frag(180), terminated: false), now: 12)
        #expect(actions.contains(.armTimer(3)))
    }

    // MARK: The carrier's REFER

    static func referredTrace(_ actions: [ReferredTransferMachine.Action]) -> [String] {
        actions.map { a in
            switch a {
            case .notify(let f): "NOTIFY \(f.status)"
            case let .report(state, sip, _): state.rawValue + (sip.map { "/\($0.code)" } ?? "")
            case .askApp: "ask-app"
            case .armTimer: "timer"
            case .cancelTimer: "stop-timer"
            case .dial: "dial"
            case .moveToNewCall: "move"
            case .cancelDial: "cancel-dial"
            case .endSession: "end"
            }
        }
    }

    struct ReferredRow: Sendable, CustomStringConvertible {
        var name: String
        var asksApp: Bool
        var inputs: [ReferredTransferMachine.Input]
        var expected: [String]
        var description: String { name }
    }

    static let referredRows: [ReferredRow] = [
        ReferredRow(
            name: "dial: trying, ringing, answered; the app moves to the new call", asksApp: false,
            inputs: [.dialRinging, .dialAnswered],
            expected: [
                "NOTIFY 100", "trying", "dial", "NOTIFY 180", "ringing/180", "NOTIFY 200", "move", "succeeded/200"
            ]),
        ReferredRow(
            name: "app accepts", asksApp: true, inputs: [.appAnswered(accept: true), .dialAnswered],
            expected: [
                "NOTIFY 100", "ask-app", "timer", "stop-timer", "trying", "dial", "NOTIFY 200", "move",
                "succeeded/200"
            ]),
        ReferredRow(
            name: "app declines: NOTIFY 603", asksApp: true, inputs: [.appAnswered(accept: false)],
            expected: ["NOTIFY 100", "ask-app", "timer", "stop-timer", "NOTIFY 603", "failed"]),
        ReferredRow(
            name: "the app does not answer in time: NOTIFY 603", asksApp: true, inputs: [.answerTimeout],
            expected: ["NOTIFY 100", "ask-app", "timer", "stop-timer", "NOTIFY 603", "failed"]),
        ReferredRow(
            name: "the target is busy: NOTIFY 486, the call goes on", asksApp: false,
            inputs: [.dialFailed(SIPDetails(code: 486, reason: "Busy Here"))],
            expected: ["NOTIFY 100", "trying", "dial", "NOTIFY 486", "failed/486"]),
        ReferredRow(
            name: "the referrer leaves while the target rings; it answers: moved, no NOTIFY", asksApp: false,
            inputs: [.dialRinging, .callEnded, .dialAnswered],
            expected: ["NOTIFY 100", "trying", "dial", "NOTIFY 180", "ringing/180", "move", "succeeded/200"]),
        ReferredRow(
            name: "the referrer leaves and the target fails: the session ends", asksApp: false,
            inputs: [.callEnded, .dialFailed(nil)], expected: ["NOTIFY 100", "trying", "dial", "failed", "end"]),
        ReferredRow(
            name: "the referrer leaves before the app answered", asksApp: true,
            inputs: [.callEnded, .appAnswered(accept: true)],
            expected: ["NOTIFY 100", "ask-app", "timer", "stop-timer", "failed"]),
        ReferredRow(
            name: "the session ends while the target rings: NOTIFY 487, the dial cancelled", asksApp: false,
            inputs: [.dialRinging, .sessionEnding],
            expected: [
                "NOTIFY 100", "trying", "dial", "NOTIFY 180", "ringing/180", "stop-timer", "NOTIFY 487",
                "cancel-dial", "failed"
            ]),
        ReferredRow(
            name: "the session ends while the app decides: NOTIFY 487", asksApp: true, inputs: [.sessionEnding],
            expected: ["NOTIFY 100", "ask-app", "timer", "stop-timer", "NOTIFY 487", "failed"]),
        ReferredRow(
            name: "an answer from the app under dial is ignored", asksApp: false, inputs: [.appAnswered(accept: false)],
            expected: ["NOTIFY 100", "trying", "dial"])
    ]

    @Test(arguments: referredRows)
    func transferee(_ row: ReferredRow) {
        var m = ReferredTransferMachine(targetTN: "+15550100001", asksApp: row.asksApp)
        var out = Self.referredTrace(m.start(answerTimeout: 30))
        for input in row.inputs { out += Self.referredTrace(m.handle(input)) }
        #expect(out == row.expected)
    }
}
