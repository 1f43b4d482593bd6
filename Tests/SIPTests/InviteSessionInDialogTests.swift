import Testing

@testable import SIP

/// `InviteSessionMachine` in a confirmed dialog: re-INVITE and UPDATE both ways, glare, BYE
/// racing an offer, CSeq order, INFO. No socket, no clock.
@Suite struct InviteSessionInDialogTests {
    typealias Step = Bench.Step
    typealias Row = Bench.Row
    typealias M = InviteSessionMachine

    /// We called (Call-ID owner); the carrier answered with To tag c1.
    static let placed = [
        Step(0, .start, ["send INVITE 1"]),
        Step(1, .response(Wire.response(200, "OK", sdp: true), to: .invite), ["ACK 1 to=c1 kept", "report connected"])
    ]
    static let reinvite = M.Event.sendOffer(.reInvite, sdp: Wire.ourSDP, headers: [])
    static func theirs(_ method: String, cseq: UInt32, tx: Int32, sdp: Bool = true) -> M.Event {
        .request(Wire.requestToUs(method, cseq: cseq, sdp: sdp), in: Bench.tx(tx))
    }
    static func ours(
        _ status: Int, _ reason: String, cseq: UInt32, method: String = "INVITE", sdp: Bool = false
    ) -> M.Event {
        .response(Wire.response(status, reason, cseq: cseq, method: method, sdp: sdp), to: .offer)
    }
    static func ack(cseq: UInt32, sdp: Bool = false) -> M.Event { .ack(Wire.requestToUs("ACK", cseq: cseq, sdp: sdp)) }

    static let rows: [Row] = [
        Row(
            "their re-INVITE: the application answers, 200 until the ACK",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(5, .offerAnswer(Wire.ourSDP), ["respond 200 INVITE", "start responseRetransmit@5.5"]),
                Step(5.5, .timerFired(.responseRetransmit), ["retransmit 200 INVITE", "start responseRetransmit@6.5"]),
                Step(5.6, ack(cseq: 1), ["stop responseRetransmit"])
            ], final: .confirmed),
        Row(
            "their re-INVITE without SDP: we offer, the ACK answers",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2, sdp: false), ["ask for an offer"]),
                Step(5, .offerAnswer(Wire.ourSDP), ["respond 200 INVITE", "start responseRetransmit@5.5"]),
                Step(5.1, ack(cseq: 1, sdp: true), ["stop responseRetransmit", "report answer"])
            ], final: .confirmed),
        Row(
            "the application has no answer: we keep our SDP",
            placed + [
                Step(5, theirs("UPDATE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(5, .offerAnswer(nil), ["respond 200 UPDATE"])
            ], final: .confirmed),
        Row(
            "our re-INVITE: ACK, answer, completed",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5.1, ours(100, "Trying", cseq: 2), []),
                Step(
                    5.2, ours(200, "OK", cseq: 2, sdp: true),
                    ["ACK 2 to=c1 kept", "report answer", "report offerCompleted 200"]),
                Step(5.7, .strayResponse(Wire.response(200, "OK", cseq: 2, sdp: true)), ["ACK again"])
            ], final: .confirmed),
        Row(
            "our re-INVITE gets 491: retry after 2.1 s (we own the Call-ID, RFC 3261 §14.1)",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5.1, ours(491, "Request Pending", cseq: 2), ["start glareRetry@7.2"]),
                Step(7.2, .timerFired(.glareRetry), ["send INVITE 3 to=c1"]),
                Step(
                    7.3, ours(200, "OK", cseq: 3, sdp: true),
                    ["ACK 3 to=c1 kept", "report answer", "report offerCompleted 200"])
            ], final: .confirmed),
        Row(
            "a new offer during the 491 back-off replaces the waiting one",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5.1, ours(491, "Request Pending", cseq: 2), ["start glareRetry@7.2"]),
                Step(6, .sendOffer(.update, sdp: Wire.ourSDP, headers: []), ["stop glareRetry", "send UPDATE 3 to=c1"]),
                Step(7.2, .timerFired(.glareRetry), [])
            ], final: .confirmed),
        Row(
            "their re-INVITE or UPDATE while ours is pending: 491",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5.05, theirs("INVITE", cseq: 1, tx: 2), ["respond 491 INVITE"]),
                Step(5.06, theirs("UPDATE", cseq: 2, tx: 3), ["respond 491 UPDATE"]),
                Step(5.2, ours(200, "OK", cseq: 2), ["ACK 2 to=c1 kept", "report offerCompleted 200"])
            ], final: .confirmed),
        Row(
            "their second offer while the first awaits the application: 500 with Retry-After",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(5, theirs("UPDATE", cseq: 2, tx: 3), ["respond 500 UPDATE"]),
                Step(5, .offerAnswer(Wire.ourSDP), ["respond 200 INVITE", "start responseRetransmit@5.5"])
            ], final: .confirmed),
        Row(
            "their re-INVITE before the ACK of the last one: 491",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(5, .offerAnswer(Wire.ourSDP), ["respond 200 INVITE", "start responseRetransmit@5.5"]),
                Step(5.1, theirs("INVITE", cseq: 2, tx: 3), ["respond 491 INVITE"])
            ], final: .confirmed),
        Row(
            "BYE while our re-INVITE is pending: one end; its late 200 still gets an ACK",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(
                    5.1, theirs("BYE", cseq: 1, tx: 2, sdp: false),
                    ["respond 200 BYE", "start removal@37.1", "report ended remoteHangup"]),
                Step(5.2, ours(200, "OK", cseq: 2), ["ACK 2 to=c1 kept"])
            ], final: .terminated(.remoteHangup)),
        Row(
            "we hang up while our re-INVITE is pending; its 487 changes nothing",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(
                    6, .hangup(status: 480, headers: []),
                    ["send BYE 3 to=c1", "start removal@38", "report ended localHangup"]),
                Step(6.1, ours(487, "Request Terminated", cseq: 2), [])
            ], final: .terminated(.localHangup)),
        Row(
            "BYE while their re-INVITE awaits the application: 487 to it (§15.1.2)",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(
                    5, theirs("BYE", cseq: 2, tx: 3, sdp: false),
                    ["respond 200 BYE", "respond 487 INVITE", "start removal@37", "report ended remoteHangup"]),
                Step(5, .offerAnswer(Wire.ourSDP), [])
            ], final: .terminated(.remoteHangup)),
        Row(
            "BYE while our 200 to their re-INVITE awaits its ACK: retransmission stops, one end",
            placed + [
                Step(5, theirs("INVITE", cseq: 1, tx: 2), ["ask for an answer"]),
                Step(5, .offerAnswer(Wire.ourSDP), ["respond 200 INVITE", "start responseRetransmit@5.5"]),
                Step(
                    5.2, theirs("BYE", cseq: 2, tx: 3, sdp: false),
                    ["respond 200 BYE", "stop responseRetransmit", "start removal@37.2", "report ended remoteHangup"]),
                Step(5.3, ack(cseq: 1), [])
            ], final: .terminated(.remoteHangup)),
        // RFC 3261 §14.1 / §12.2.1.2: no answer at all (or 408/481) ends the dialog; we send
        // BYE, and report it as our hangup (the application sees the call end).
        Row(
            "re-INVITE never answered (Timer B): BYE",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(37, .requestTimeout(.offer), ["send BYE 3 to=c1", "start removal@69", "report ended localHangup"])
            ], final: .terminated(.localHangup)),
        Row(
            "481 to our re-INVITE: BYE",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(
                    5.1, ours(481, "Call/Transaction Does Not Exist", cseq: 2),
                    ["send BYE 3 to=c1", "start removal@37.1", "report ended localHangup"])
            ], final: .terminated(.localHangup)),
        Row(
            "488 to our re-INVITE: completed with 488, the call goes on",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5.1, ours(488, "Not Acceptable Here", cseq: 2), ["report offerCompleted 488"]),
                Step(6, reinvite, ["send INVITE 3 to=c1"])
            ], final: .confirmed),
        Row(
            "our UPDATE: no ACK; the answer and the outcome reported",
            placed + [
                Step(5, .sendOffer(.update, sdp: Wire.ourSDP, headers: []), ["send UPDATE 2 to=c1"]),
                Step(
                    5.1, ours(200, "OK", cseq: 2, method: "UPDATE", sdp: true),
                    ["report answer", "report offerCompleted 200"])
            ], final: .confirmed),
        Row(
            "an offer that could not be sent: the next one may go",
            placed + [
                Step(5, reinvite, ["send INVITE 2 to=c1"]),
                Step(5, .notSent(.offer), []),
                Step(6, reinvite, ["send INVITE 3 to=c1"])
            ], final: .confirmed),
        Row(
            "CSeq below the last one: 500 (§12.2.2)",
            placed + [
                Step(5, theirs("INFO", cseq: 5, tx: 2, sdp: false), ["respond 200 INFO", "report request INFO"]),
                Step(6, theirs("INFO", cseq: 4, tx: 3, sdp: false), ["respond 500 INFO"])
            ], final: .confirmed),
        Row(
            "our INFO",
            placed + [
                Step(
                    5,
                    .sendInfo(
                        contentType: "application/dtmf-relay", body: Array("Signal=5\r\nDuration=160\r\n".utf8),
                        headers: []),
                    ["send INFO 2 to=c1"]),
                Step(5.1, .response(Wire.response(200, "OK", cseq: 2, method: "INFO"), to: .info), [])
            ], final: .confirmed),
        Row(
            "after the end: in-dialog requests get 481, commands do nothing",
            placed + [
                Step(
                    5, .hangup(status: 480, headers: []),
                    ["send BYE 2 to=c1", "start removal@37", "report ended localHangup"]),
                Step(5.1, theirs("INFO", cseq: 1, tx: 2, sdp: false), ["respond 481 INFO"]),
                Step(5.2, reinvite, []),
                Step(5.3, .hangup(status: 480, headers: []), []),
                Step(37, .timerFired(.removal), ["remove"])
            ], final: .terminated(.localHangup))
    ]

    @Test(arguments: rows)
    func inDialog(_ row: Row) {
        Bench.check(row, on: Bench.uac())
    }

    /// They called: the glare back-off of the side that does not own the Call-ID is 0-2 s
    /// (0 with the fixed draw).
    @Test func glareRetryWhenTheyOwnTheCallID() {
        let row = Row(
            "491 as callee",
            [
                Step(0, .start, ["respond 100 INVITE", "report incoming"]),
                Step(0, .answer(sdp: Wire.ourSDP, headers: []), ["respond 200 INVITE", "start responseRetransmit@0.5"]),
                Step(
                    0.1, .ack(Wire.requestFromCaller("ACK", cseq: 101)), ["stop responseRetransmit", "report connected"]
                ),
                Step(5, .sendOffer(.reInvite, sdp: Wire.ourSDP, headers: []), ["send INVITE 501 to=9fxced76sl"]),
                Step(
                    5.1,
                    .response(Wire.responseFromCaller(491, "Request Pending", cseq: 501, method: "INVITE"), to: .offer),
                    ["start glareRetry@5.1"]),
                Step(5.1, .timerFired(.glareRetry), ["send INVITE 502 to=9fxced76sl"]),
                Step(
                    5.2, .response(Wire.responseFromCaller(200, "OK", cseq: 502, method: "INVITE"), to: .offer),
                    ["ACK 502 to=9fxced76sl kept", "report offerCompleted 200"])
            ], final: .confirmed)
        Bench.check(row, on: Bench.uas())
    }

    @Test func glareBackOffComesFromTheInjectedDraw() throws {
        var m = M(
            outgoing: Wire.ourInvite, sdp: Wire.ourSDP, credentials: nil, configuration: Bench.configuration(),
            randomness: M.Randomness(integer: { $0.upperBound }, cnonce: { "" }))
        _ = m.handle(.start, now: 0)
        _ = m.handle(.response(Wire.response(200, "OK"), to: .invite), now: 1)
        _ = m.handle(Self.reinvite, now: 5)
        #expect(m.handle(Self.ours(491, "Request Pending", cseq: 2), now: 5) == [.startTimer(.glareRetry, at: 9)])
    }

    @Test func reinviteCarriesContactSupportedAndOurOffer() throws {
        var m = Bench.uac()
        _ = m.handle(.start, now: 0)
        _ = m.handle(.response(Wire.response(200, "OK"), to: .invite), now: 1)
        #expect(m.canSendOffer && !m.hasPendingOffer)
        guard case .send(let r, .offer, .uri(let hop)) = try #require(m.handle(Self.reinvite, now: 5).first) else {
            Issue.record(); return
        }
        #expect(r.requestURI == hop && r[.contact] == "<sip:irisgw@192.0.2.10:5060>" && r[.supported] == "100rel")
        #expect(
            r.sdp == Wire.ourSDP && r[.via] == nil && r[.maxForwards] == "70" && m.hasPendingOffer && !m.canSendOffer)
    }
}
