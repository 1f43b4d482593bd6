import Testing

@testable import SIP

/// `InviteSessionMachine` as UAS, row by row: no socket, no clock.
@Suite struct InviteSessionServerTests {
    typealias Step = Bench.Step
    typealias Row = Bench.Row

    static let start = Step(0, .start, ["respond 100 INVITE", "report incoming"])
    static let ring = Step(0.1, .ring(sdp: nil, status: nil, reliable: nil), ["respond 180 INVITE"])
    static func answer(_ at: Double) -> Step {
        Step(
            at, .answer(sdp: Wire.ourSDP, headers: []),
            ["respond 200 INVITE", "start responseRetransmit@\(Bench.time(at + 0.5))"])
    }
    static func ack(_ at: Double, cseq: UInt32 = 101, sdp: Bool = false) -> InviteSessionMachine.Event {
        .ack(Wire.requestFromCaller("ACK", cseq: cseq, sdp: sdp))
    }
    static func request(_ method: String, cseq: UInt32, tx: Int32, extra: [String] = []) -> InviteSessionMachine.Event {
        .request(Wire.requestFromCaller(method, cseq: cseq, extra: extra), in: Bench.tx(tx))
    }
    static let cancel = InviteSessionMachine.Event.cancel(
        Wire.parse(
            """
            CANCEL sip:+15557654321@192.0.2.10:5060 SIP/2.0
            Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bKnashds8;rport=5060
            Max-Forwards: 70
            From: "Carrier" <sip:+15551230001@198.51.100.7>;tag=9fxced76sl
            To: <sip:+15557654321@192.0.2.10>
            Call-ID: \(Wire.theirCallID)
            CSeq: 101 CANCEL
            """), in: Bench.tx(3))

    /// The 2xx timer's firings without an ACK: T1, then doubling up to T2 (4 s), the last
    /// one clamped to 64*T1 = 32 s after the 200.
    static let retransmissions: [Step] = {
        var steps: [Step] = []
        var at = 0.5, interval = 0.5
        while at < 32 {
            interval = min(interval * 2, 4)
            let next = min(at + interval, 32)
            steps.append(
                Step(
                    at, .timerFired(.responseRetransmit),
                    ["retransmit 200 INVITE", "start responseRetransmit@\(Bench.time(next))"]))
            at = next
        }
        return steps
    }()

    static let rows: [Row] = [
        Row(
            "ring, answer, ACK: connected",
            [
                start, ring, answer(1),
                Step(1.2, ack(1.2), ["stop responseRetransmit", "report connected"])
            ], final: .confirmed),
        Row(
            "2xx retransmitted at T1, 2T1, 4T1, capped at T2, until the ACK",
            [
                start, answer(0),
                Step(0.5, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@1.5"]),
                Step(1.5, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@3.5"]),
                Step(3.5, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@7.5"]),
                Step(7.5, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@11.5"]),
                Step(9, ack(9), ["stop responseRetransmit", "report connected"]),
                Step(11.5, .timerFired(.responseRetransmit), [])
            ], final: .confirmed),
        Row(
            "no ACK: BYE at 64*T1 (ackTimeout); a late ACK is ignored",
            [start, answer(0)] + retransmissions + [
                Step(
                    32, .timerFired(.responseRetransmit),
                    ["send BYE 501 to=9fxced76sl", "start removal@64", "report ended ackTimeout"]),
                Step(33, ack(33), [])
            ], final: .terminated(.ackTimeout)),
        Row(
            "a retransmitted INVITE gets the same 2xx",
            [
                start, answer(0),
                Step(0.1, ack(0.1), ["stop responseRetransmit", "report connected"]),
                Step(5, .inviteRetransmission(Wire.theirInvite()), ["retransmit 200 INVITE"])
            ], final: .confirmed),
        Row(
            "CANCEL crossing our 200: 200 to the CANCEL, the call stays up",
            [
                start, answer(1),
                Step(1.1, cancel, ["respond 200 CANCEL"]),
                Step(1.2, ack(1.2), ["stop responseRetransmit", "report connected"])
            ], final: .confirmed),
        Row(
            "CANCEL while ringing: 200, 487, canceled; the ACK of the 487 is absorbed",
            [
                start, ring,
                Step(
                    2, cancel, ["respond 200 CANCEL", "respond 487 INVITE", "start removal@4", "report ended canceled"]),
                Step(2.1, ack(2.1), [])
            ], final: .terminated(.canceled)),
        Row(
            "BYE before the ACK, then the ACK (seen behind Kamailio): one end, ACK ignored",
            [
                start, answer(1),
                Step(
                    1.3, request("BYE", cseq: 102, tx: 2),
                    [
                        "respond 200 BYE", "stop responseRetransmit", "start removal@33.3",
                        "report ended remoteHangup"
                    ]),
                Step(1.4, ack(1.4), []),
                Step(1.5, .hangup(status: 480, headers: []), [])
            ], final: .terminated(.remoteHangup)),
        Row(
            "BYE before our final response (§15.1.2): 200, and 487 to the INVITE",
            [
                start, ring,
                Step(
                    2, request("BYE", cseq: 102, tx: 2),
                    ["respond 200 BYE", "respond 487 INVITE", "start removal@34", "report ended remoteHangup"])
            ], final: .terminated(.remoteHangup)),
        Row(
            "hangup before answering: 480",
            [
                start, ring,
                Step(
                    2, .hangup(status: 480, headers: []),
                    ["respond 480 INVITE", "start removal@4", "report ended rejected(status: 480)"]),
                Step(3, .answer(sdp: Wire.ourSDP, headers: []), [])
            ], final: .terminated(.rejected(status: 480))),
        Row(
            "our BYE is challenged: no credentials go to a caller (digest-leak guard)",
            [
                start, answer(0),
                Step(0.1, ack(0.1), ["stop responseRetransmit", "report connected"]),
                Step(
                    2, .hangup(status: 480, headers: []),
                    ["send BYE 501 to=9fxced76sl", "start removal@34", "report ended localHangup"]),
                Step(
                    2.1,
                    .response(
                        Wire.responseFromCaller(
                            407, "Proxy Authentication Required", cseq: 501, method: "BYE",
                            extra: ["Proxy-Authenticate: Digest realm=\"x\", nonce=\"n\""]), to: .bye), [])
            ], final: .terminated(.localHangup)),
        Row(
            "INVITE without SDP: we offer in the 200, the ACK answers",
            [
                Step(0, .start, ["respond 100 INVITE", "report incoming"]), answer(0),
                Step(0.2, ack(0.2, sdp: true), ["stop responseRetransmit", "report answer", "report connected"])
            ], final: .confirmed)
    ]

    @Test(arguments: rows)
    func uas(_ row: Row) {
        let invite = row.name.hasPrefix("INVITE without SDP") ? Wire.theirInvite(sdp: false) : Wire.theirInvite()
        Bench.check(row, on: Bench.uas(invite))
    }

    static let prack = Wire.requestFromCaller("PRACK", cseq: 102, extra: ["RAck: 1 101 INVITE"])

    /// The caller requires 100rel: provisionals go reliably (RFC 3262 §3).
    static let reliableRows: [Row] = [
        Row(
            "reliable 183: retransmitted until the PRACK; the 200 waits for it",
            [
                start,
                Step(
                    0.1, .ring(sdp: Wire.ourSDP, status: nil, reliable: nil),
                    ["respond 183 INVITE", "start provisionalRetransmit@0.6"]),
                Step(0.2, .answer(sdp: nil, headers: []), []),
                Step(
                    0.6, .timerFired(.provisionalRetransmit),
                    ["retransmit 183 INVITE", "start provisionalRetransmit@1.6"]),
                Step(
                    1, .request(prack, in: Bench.tx(2)),
                    [
                        "stop provisionalRetransmit", "respond 200 PRACK", "respond 200 INVITE",
                        "start responseRetransmit@1.5"
                    ]),
                Step(1.2, ack(1.2), ["stop responseRetransmit", "report connected"])
            ], final: .confirmed),
        Row(
            "PRACK for an unknown RSeq: 481; a second reliable 1xx waits for the first PRACK",
            [
                start,
                Step(
                    0.1, .ring(sdp: Wire.ourSDP, status: nil, reliable: nil),
                    ["respond 183 INVITE", "start provisionalRetransmit@0.6"]),
                Step(0.2, .ring(sdp: nil, status: nil, reliable: nil), []),
                Step(
                    0.3,
                    .request(
                        Wire.requestFromCaller("PRACK", cseq: 102, extra: ["RAck: 6 101 INVITE"]), in: Bench.tx(2)),
                    ["respond 481 PRACK"]),
                Step(
                    0.4,
                    .request(
                        Wire.requestFromCaller("PRACK", cseq: 103, extra: ["RAck: 1 101 INVITE"]), in: Bench.tx(3)),
                    ["stop provisionalRetransmit", "respond 200 PRACK"]),
                Step(
                    0.5, .ring(sdp: nil, status: nil, reliable: nil),
                    ["respond 180 INVITE", "start provisionalRetransmit@1"])
            ], final: .early),
        Row(
            "PRACK for a provisional our 200 overtook: 200 (RFC 3262 §3)",
            [
                start,
                Step(
                    0.1, .ring(sdp: nil, status: nil, reliable: nil),
                    ["respond 180 INVITE", "start provisionalRetransmit@0.6"]),
                Step(
                    0.2, .answer(sdp: Wire.ourSDP, headers: []),
                    ["stop provisionalRetransmit", "respond 200 INVITE", "start responseRetransmit@0.7"]),
                Step(0.3, .request(prack, in: Bench.tx(2)), ["respond 200 PRACK"])
            ], final: .early),
        Row(
            "PRACK with an offer: the application answers in the 200 to the PRACK",
            [
                start,
                Step(
                    0.1, .ring(sdp: Wire.ourSDP, status: nil, reliable: nil),
                    ["respond 183 INVITE", "start provisionalRetransmit@0.6"]),
                Step(0.2, .answer(sdp: nil, headers: []), []),
                Step(
                    0.3,
                    .request(
                        Wire.requestFromCaller("PRACK", cseq: 102, sdp: true, extra: ["RAck: 1 101 INVITE"]),
                        in: Bench.tx(2)),
                    ["stop provisionalRetransmit", "ask for an answer"]),
                Step(
                    0.3, .offerAnswer(nil), ["respond 488 PRACK", "respond 200 INVITE", "start responseRetransmit@0.8"])
            ], final: .early),
        Row(
            "no PRACK: 504 at 64*T1",
            [
                Step(0, .start, ["respond 100 INVITE", "report incoming"]),
                Step(
                    0, .ring(sdp: nil, status: nil, reliable: nil),
                    ["respond 180 INVITE", "start provisionalRetransmit@0.5"]),
                Step(
                    0.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@1.5"]),
                Step(
                    1.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@3.5"]),
                Step(
                    3.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@7.5"]),
                Step(
                    7.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@15.5"]),
                Step(
                    15.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@31.5"]),
                Step(
                    31.5, .timerFired(.provisionalRetransmit),
                    ["retransmit 180 INVITE", "start provisionalRetransmit@32"]),
                Step(
                    32, .timerFired(.provisionalRetransmit),
                    ["respond 504 INVITE", "start removal@34", "report ended rejected(status: 504)"])
            ], final: .terminated(.rejected(status: 504)))
    ]

    @Test(arguments: reliableRows)
    func reliableProvisionals(_ row: Row) {
        Bench.check(row, on: Bench.uas(Wire.theirInvite(extra: ["Supported: timer", "Require: 100rel"])))
    }

    @Test func sessionExpiresBelowOurMinSEIs422() {
        let row = Row(
            "422",
            [
                Step(0, .start, ["respond 422 INVITE", "start removal@2", "report ended rejected(status: 422)"])
            ], final: .terminated(.rejected(status: 422)))
        Bench.check(
            row,
            on: Bench.uas(
                Wire.theirInvite(extra: ["Supported: timer", "Session-Expires: 120"]),
                sessionTimer: SessionTimerPolicy(minSE: 600)))
    }

    // MARK: What the messages carry

    @Test func responsesCarryOurTagContactAndCapabilities() throws {
        var m = Bench.uas(sessionTimer: SessionTimerPolicy())
        let start = m.handle(.start, now: 0)
        guard case .respond(let trying, let tx) = try #require(start.first) else { Issue.record(); return }
        #expect(
            trying.statusCode == 100 && trying.to?.tag == nil && trying[.server] == "irisgw/0.1" && tx == Bench.tx(1))
        guard
            case .respond(let ringing, _) = try #require(
                m.handle(.ring(sdp: nil, status: nil, reliable: nil), now: 0.1).first)
        else { Issue.record(); return }
        #expect(
            ringing.to?.tag == "uas1" && ringing[.contact] == "<sip:irisgw@192.0.2.10:5060>" && ringing[.require] == nil
        )
        guard case .respond(let ok, _) = try #require(m.handle(.answer(sdp: Wire.ourSDP, headers: []), now: 1).first)
        else { Issue.record(); return }
        #expect(ok.to?.tag == "uas1" && ok[.supported] == "100rel, timer" && ok[.allow]?.contains("UPDATE") == true)
        #expect(ok[.sessionExpires] == "1800;refresher=uas" && ok[.require] == "timer" && ok.sdp == Wire.ourSDP)
        #expect(m.localSDP == Wire.ourSDP && m.finalResponse == ok)
    }

    @Test func reliableProvisionalCarriesRequireAndRSeq() throws {
        var m = Bench.uas(Wire.theirInvite(extra: ["Require: 100rel"]))
        _ = m.handle(.start, now: 0)
        guard
            case .respond(let r, _) = try #require(
                m.handle(.ring(sdp: Wire.ourSDP, status: nil, reliable: nil), now: 0).first)
        else { Issue.record(); return }
        #expect(r.statusCode == 183 && r[.require] == "100rel" && r[.rseq] == "1" && r.sdp == Wire.ourSDP)
    }

    @Test func queriesMatchTheCallsMessages() {
        var m = Bench.uas()
        _ = m.handle(.start, now: 0)
        #expect(m.inviteBranch == "z9hG4bKnashds8")
        #expect(
            m.isRetransmission(of: Wire.theirInvite())
                && !m.isRetransmission(of: Wire.requestFromCaller("INVITE", cseq: 102)))
        #expect(m.dialogMatches(Wire.requestFromCaller("BYE", cseq: 102)))
        #expect(m.canRing(reliable: nil) && !m.canSendOffer && !m.canSendInfo)
    }
}
