import Testing

@testable import SIP

/// `InviteSessionMachine` with REFER and NOTIFY in the dialog (RFC 3515): ours sent with the
/// next CSeq and their final status reported by CSeq; theirs handed to the application for
/// its response. No socket, no clock.
@Suite struct InviteSessionTransferTests {
    typealias Step = Bench.Step
    typealias Row = Bench.Row
    typealias M = InviteSessionMachine

    /// We called; the carrier answered with To tag c1.
    static let placed = InviteSessionInDialogTests.placed
    static let referTo = SIPHeader(.referTo, "<sip:+15550100001@198.51.100.7>")
    static let refer = M.Event.sendRequest(method: "REFER", headers: [referTo], contentType: nil, body: [])
    static func notify(_ frag: SIPFrag) -> M.Event {
        let n = ReferNotification(id: 2, progress: frag)
        return .sendRequest(method: "NOTIFY", headers: n.headers, contentType: SIPFrag.contentType, body: n.body)
    }
    static func response(_ status: Int, _ reason: String, cseq: UInt32 = 2, method: String = "REFER") -> M.Event {
        .response(
            Wire.response(status, reason, cseq: cseq, method: method), to: .other(method: method, cseq: cseq))
    }
    static func theirs(_ method: String, cseq: UInt32, tx: Int32) -> M.Event {
        .request(Wire.requestToUs(method, cseq: cseq), in: Bench.tx(tx))
    }

    static let rows: [Row] = [
        Row(
            "our REFER: next CSeq, 202 reported with its CSeq",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(5.1, response(100, "Trying"), []),
                Step(5.2, response(202, "Accepted"), ["report REFER 2 completed 202"])
            ], final: .confirmed),
        Row(
            "our REFER refused: the status reported, the call goes on",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(5.2, response(603, "Decline"), ["report REFER 2 completed 603"]),
                Step(6, refer, ["send REFER 3 to=c1"])
            ], final: .confirmed),
        Row(
            "no answer to our REFER: 408",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(37, .requestTimeout(.other(method: "REFER", cseq: 2)), ["report REFER 2 completed 408"])
            ], final: .confirmed),
        Row(
            "a transport error: 503",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(5, .transportError(.other(method: "REFER", cseq: 2)), ["report REFER 2 completed 503"])
            ], final: .confirmed),
        Row(
            "our REFER not sent at all: 503",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(5, .notSent(.other(method: "REFER", cseq: 2)), ["report REFER 2 completed 503"])
            ], final: .confirmed),
        Row(
            "our NOTIFYs: each its own CSeq, a 481 reported like any status",
            placed + [
                Step(5, notify(SIPFrag(status: 100, reason: "Trying")), ["send NOTIFY 2 to=c1"]),
                Step(5.1, response(200, "OK", method: "NOTIFY"), ["report NOTIFY 2 completed 200"]),
                Step(6, notify(SIPFrag(status: 200, reason: "OK")), ["send NOTIFY 3 to=c1"]),
                Step(
                    6.1, response(481, "Subscription Does Not Exist", cseq: 3, method: "NOTIFY"),
                    ["report NOTIFY 3 completed 481"])
            ], final: .confirmed),
        Row(
            "a REFER and a NOTIFY in flight together: each reported by its CSeq",
            placed + [
                Step(5, refer, ["send REFER 2 to=c1"]),
                Step(5, notify(SIPFrag(status: 100, reason: "Trying")), ["send NOTIFY 3 to=c1"]),
                Step(5.1, response(200, "OK", cseq: 3, method: "NOTIFY"), ["report NOTIFY 3 completed 200"]),
                Step(5.2, response(202, "Accepted"), ["report REFER 2 completed 202"])
            ], final: .confirmed),
        Row(
            "no REFER before the dialog exists",
            [Step(0, .start, ["send INVITE 1"]), Step(0.1, refer, [])], final: .calling),
        Row(
            "their REFER and NOTIFY: the application chooses the response",
            placed + [
                Step(5, theirs("REFER", cseq: 1, tx: 2), ["ask for a response to REFER"]),
                Step(5.5, theirs("NOTIFY", cseq: 2, tx: 3), ["ask for a response to NOTIFY"])
            ], final: .confirmed),
        Row(
            "their REFER with an older CSeq: 500",
            placed + [
                Step(5, theirs("INFO", cseq: 5, tx: 2), ["respond 200 INFO", "report request INFO"]),
                Step(5.5, theirs("REFER", cseq: 4, tx: 3), ["respond 500 REFER"]),
                Step(5.6, theirs("NOTIFY", cseq: 5, tx: 4), ["respond 500 NOTIFY"]),
                Step(5.7, theirs("NOTIFY", cseq: 6, tx: 5), ["ask for a response to NOTIFY"])
            ], final: .confirmed),
        Row(
            "a NOTIFY after the call ended: 481; nothing more is sent",
            placed + [
                Step(
                    5, theirs("BYE", cseq: 1, tx: 2),
                    ["respond 200 BYE", "start removal@37", "report ended remoteHangup"]),
                Step(5.5, theirs("NOTIFY", cseq: 2, tx: 3), ["respond 481 NOTIFY"]),
                Step(5.6, theirs("REFER", cseq: 3, tx: 4), ["respond 481 REFER"]),
                Step(6, notify(SIPFrag(status: 200, reason: "OK")), [])
            ], final: .terminated(.remoteHangup))
    ]

    @Test(arguments: rows)
    func transfer(_ row: Row) {
        Bench.check(row, on: Bench.uac())
    }

    /// They called; we answered and got the ACK: their REFER in our UAS dialog.
    @Test func theirReferInTheDialogTheyStarted() {
        let row = Row(
            "REFER from the caller",
            [
                Step(0, .start, ["respond 100 INVITE", "report incoming"]),
                Step(0, .answer(sdp: Wire.ourSDP, headers: []), ["respond 200 INVITE", "start responseRetransmit@0.5"]),
                Step(
                    0.1, .ack(Wire.requestFromCaller("ACK", cseq: 101)), ["stop responseRetransmit", "report connected"]
                ),
                Step(
                    2, .request(Wire.requestFromCaller("REFER", cseq: 102), in: Bench.tx(2)),
                    ["ask for a response to REFER"]),
                Step(3, Self.refer, ["send REFER 501 to=9fxced76sl"])
            ], final: .confirmed)
        Bench.check(row, on: Bench.uas())
    }

    /// The REFER goes to the remote target with Contact (RFC 3515 §2.4.x, RFC 6665 §4.1.2:
    /// it may start a subscription usage), the next CSeq, and the headers and body given.
    @Test func referAndNotifyCarryContactCSeqAndBody() throws {
        var m = Bench.uac()
        _ = m.handle(.start, now: 0)
        _ = m.handle(.response(Wire.response(200, "OK"), to: .invite), now: 1)
        guard case .send(let r, .other("REFER", 2), .uri(let hop)) = try #require(m.handle(Self.refer, now: 5).first)
        else {
            Issue.record("no REFER sent")
            return
        }
        #expect(r.method == "REFER" && r.cseq == CSeq(2, "REFER") && m.lastRequestSequence == 2)
        #expect(r.requestURI == hop && hop.serialize() == "sip:+15551230001@198.51.100.7:5060")
        #expect(r[.contact] == "<sip:irisgw@192.0.2.10:5060>")
        #expect(r.referTo?.uri.user == "+15550100001")
        #expect(r.to?.tag == "c1" && r.from?.tag == "ours1" && r.callID == Wire.callID)
        #expect(r.body.isEmpty && r[.contentType] == nil)

        let frag = SIPFrag(status: 180, reason: "Ringing")
        guard case .send(let n, .other("NOTIFY", 3), _) = try #require(m.handle(Self.notify(frag), now: 6).first)
        else {
            Issue.record("no NOTIFY sent")
            return
        }
        #expect(n.cseq == CSeq(3, "NOTIFY") && m.lastRequestSequence == 3)
        #expect(n[.contact] == "<sip:irisgw@192.0.2.10:5060>")
        #expect(n.event == EventHeader(package: "refer", id: "2"))
        #expect(n.subscriptionState == SubscriptionState(.active, expires: 60))
        #expect(n[.contentType] == "message/sipfrag;version=2.0")
        #expect(try SIPFrag.parse(n.body) == frag)

        guard
            case .send(let last, _, _) = try #require(
                m.handle(Self.notify(SIPFrag(status: 486, reason: "Busy Here")), now: 7).first)
        else {
            Issue.record("no NOTIFY sent")
            return
        }
        #expect(last.subscriptionState == SubscriptionState(.terminated, reason: "noresource"))
    }

    /// The simulator's `transfer-odd-notify`: the REFER's first NOTIFY goes out before the
    /// application is asked for the REFER's response, once.
    @Test func misbehaviourNotifiesBeforeTheResponse() {
        var misbehaviour = TestPeerMisbehaviour()
        misbehaviour.referNotifiedFirst = SIPFrag(status: 100, reason: "Trying")
        let row = Row(
            "NOTIFY ahead of the 202",
            Self.placed + [
                Step(5, Self.theirs("REFER", cseq: 7, tx: 2), ["send NOTIFY 2 to=c1", "ask for a response to REFER"]),
                Step(6, Self.theirs("REFER", cseq: 8, tx: 3), ["ask for a response to REFER"])
            ], final: .confirmed)
        Bench.check(row, on: Bench.uac(), through: misbehaviour)
    }

    @Test func theEarlyNotifyNamesTheReferItAnswers() {
        var m = Bench.uac()
        _ = m.handle(.start, now: 0)
        _ = m.handle(.response(Wire.response(200, "OK"), to: .invite), now: 1)
        var misbehaviour = TestPeerMisbehaviour()
        misbehaviour.referNotifiedFirst = SIPFrag(status: 100, reason: "Trying")
        let actions = misbehaviour.handle(Self.theirs("REFER", cseq: 7, tx: 2), on: &m, now: 5)
        guard case .send(let n, _, _) = actions.first else {
            Issue.record("\(actions.map(Bench.line))")
            return
        }
        #expect(n.event == EventHeader(package: "refer", id: "7"))
        #expect(n.subscriptionState?.value == .active)
        #expect(misbehaviour.referNotifiedFirst == nil)
    }
}
