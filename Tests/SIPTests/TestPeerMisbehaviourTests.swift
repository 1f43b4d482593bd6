import Testing

@testable import SIP

/// `TestPeerMisbehaviour` between a UAS machine and the wire, row by row (what `SIPCall` runs
/// for the carrier simulator's misbehaving numbers): no socket, no clock.
@Suite struct TestPeerMisbehaviourTests {
    typealias Step = Bench.Step
    typealias Row = Bench.Row

    static let start = InviteSessionServerTests.start
    static func ack(_ at: Double) -> Step { Step(at, InviteSessionServerTests.ack(at), []) }
    static let cause16 = [SIPHeader(.reason, "Q.850;cause=16")]

    static func ignoring(giveUpAfter: Double) -> TestPeerMisbehaviour {
        var misbehaviour = TestPeerMisbehaviour()
        misbehaviour.ignoredACK = .init(t1: 0.25, t2: 1, giveUpAfter: giveUpAfter, byeHeaders: cause16)
        return misbehaviour
    }

    /// `ignoredACK` (the simulator's `ignores-ack`): the ACK never reaches the machine, the 2xx
    /// goes on at its own T1 doubling to its T2, and at `giveUpAfter` our BYE ends the call.
    @Test func ignoredACKRetransmitsThenByes() {
        let row = Row(
            "ACK ignored",
            [
                Self.start,
                Step(
                    1, .answer(sdp: Wire.ourSDP, headers: []), ["respond 200 INVITE", "start responseRetransmit@1.25"]),
                Self.ack(1.1),
                Step(
                    1.25, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@1.75"]),
                Self.ack(1.5),
                Step(
                    1.75, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@2.75"]),
                Step(2.75, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@3.5"]),
                Step(
                    3.5, .timerFired(.responseRetransmit),
                    [
                        "send BYE 501 to=9fxced76sl", "stop responseRetransmit", "start removal@35.5",
                        "report ended localHangup"
                    ])
            ], final: .terminated(.localHangup))
        Bench.check(row, on: Bench.uas(), through: Self.ignoring(giveUpAfter: 2.5))
    }

    /// The BYE carries the headers the simulator asked for (its Reason, cause 16).
    @Test func ignoredACKByeCarriesItsHeaders() {
        var machine = Bench.uas()
        var misbehaviour = Self.ignoring(giveUpAfter: 0.5)
        _ = misbehaviour.handle(.start, on: &machine, now: 0)
        _ = misbehaviour.handle(.answer(sdp: Wire.ourSDP, headers: []), on: &machine, now: 0)
        _ = misbehaviour.handle(.timerFired(.responseRetransmit), on: &machine, now: 0.25)
        let bye = misbehaviour.handle(.timerFired(.responseRetransmit), on: &machine, now: 0.5).compactMap {
            a -> SIPMessage? in
            if case .send(let r, _, _) = a, r.method == "BYE" { r } else { nil }
        }
        #expect(bye.count == 1 && bye.first?[.reason] == "Q.850;cause=16")
    }

    /// `withholdsTrying` (the simulator's `slow-trying`): `.start` sends no 100; a ring with
    /// status 100 sends it (untagged, the state unchanged), then rings as usual.
    @Test func withheldTryingGoesOutOnlyWhenAsked() throws {
        var misbehaviour = TestPeerMisbehaviour()
        misbehaviour.withholdsTrying = true
        Bench.check(
            Row(
                "100 withheld",
                [
                    Step(0, .start, ["report incoming"]),
                    Step(4, .ring(sdp: nil, status: 100, reliable: nil), ["respond 100 INVITE"]),
                    Step(4.1, .ring(sdp: nil, status: nil, reliable: nil), ["respond 180 INVITE"])
                ], final: .early), on: Bench.uas(), through: misbehaviour)
        var machine = Bench.uas()
        _ = misbehaviour.handle(.start, on: &machine, now: 0)
        let late = misbehaviour.handle(.ring(sdp: nil, status: 100, reliable: nil), on: &machine, now: 1)
        guard case .respond(let trying, _) = try #require(late.first) else {
            Issue.record("\(late)")
            return
        }
        #expect(trying.statusCode == 100 && trying.to?.tag == nil && machine.dialog == nil)
    }

    /// The empty value (every production call): the 100 goes at once and the ACK confirms.
    @Test(arguments: [
        Row("100 at once", [start], final: .calling),
        Row(
            "ACK honoured",
            [
                start, InviteSessionServerTests.answer(1),
                Step(1.1, InviteSessionServerTests.ack(1.1), ["stop responseRetransmit", "report connected"])
            ], final: .confirmed)
    ])
    func nothingSetPassesEverythingThrough(_ row: Row) {
        Bench.check(row, on: Bench.uas(), through: TestPeerMisbehaviour())
    }
}
