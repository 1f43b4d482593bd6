import Foundation
import Testing

@testable import SIP

/// `InviteSessionMachine` as UAC, row by row: no socket, no clock. Each step is one event at
/// a time, with the exact actions it must produce (`Bench.line`).
@Suite struct InviteSessionClientTests {
    typealias Step = Bench.Step
    typealias Row = Bench.Row
    static func r(
        _ status: Int, _ reason: String, cseq: UInt32 = 1, method: String = "INVITE", tag: String? = "c1",
        rseq: UInt32? = nil, sdp: Bool = false, extra: [String] = []
    ) -> SIPMessage {
        Wire.response(status, reason, cseq: cseq, method: method, tag: tag, rseq: rseq, sdp: sdp, extra: extra)
    }

    static let invite = Step(0, .start, ["send INVITE 1"])
    static let ringing = Step(1, .response(r(180, "Ringing"), to: .invite), ["report provisional 180"])
    static func ok(_ at: Double, tag: String = "c1", cseq: UInt32 = 1) -> SIPMessage {
        r(200, "OK", cseq: cseq, tag: tag, sdp: true)
    }
    static func reliable(_ status: Int, tag: String = "c1", rseq: UInt32) -> InviteSessionMachine.Event {
        .response(r(status, status == 180 ? "Ringing" : "Session Progress", tag: tag, rseq: rseq), to: .invite)
    }
    static let challenge =
        "Proxy-Authenticate: Digest realm=\"carrier.example\", nonce=\"4ee2f8a9\", qop=\"auth\", algorithm=MD5"

    static let rows: [Row] = [
        Row(
            "ringing then 200: ACK kept, connected; our BYE",
            [
                invite, ringing,
                Step(2, .response(ok(2), to: .invite), ["ACK 1 to=c1 kept", "report connected"]),
                Step(
                    10, .hangup(status: 480, headers: []),
                    ["send BYE 2 to=c1", "start removal@42", "report ended localHangup"])
            ], final: .terminated(.localHangup)),
        Row(
            "CANCEL crossing the 200 (RFC 3261 §9.1): ACK, then BYE; ended canceled",
            [
                invite, ringing,
                Step(2, .cancelInvite, ["send CANCEL 1", "start cancelGuard@34"]),
                Step(2.1, .response(r(200, "OK", method: "CANCEL"), to: .cancel), []),
                Step(
                    2.2, .response(ok(2.2), to: .invite),
                    [
                        "stop cancelGuard", "ACK 1 to=c1 kept", "send BYE 2 to=c1", "start removal@34.2",
                        "report ended canceled"
                    ]),
                Step(2.7, .strayResponse(ok(2.7)), ["ACK again"])
            ], final: .terminated(.canceled)),
        Row(
            "CANCEL before any provisional waits for one; 487 is canceled",
            [
                invite,
                Step(0.1, .cancelInvite, []),
                Step(
                    0.2, .response(r(100, "Trying", tag: nil), to: .invite),
                    ["send CANCEL 1", "start cancelGuard@32.2"]),
                Step(
                    0.3, .response(r(487, "Request Terminated"), to: .invite),
                    ["stop cancelGuard", "start removal@32.3", "report ended canceled"])
            ], final: .terminated(.canceled)),
        Row(
            "CANCEL before any provisional, and none comes: Timer B ends it canceled",
            [
                invite,
                Step(0.1, .cancelInvite, []),
                Step(32, .requestTimeout(.invite), ["start removal@64", "report ended canceled"])
            ], final: .terminated(.canceled)),
        Row(
            "CANCEL answered, INVITE never: 64*T1 guard; a 200 after that gets ACK and BYE",
            [
                invite, ringing,
                Step(2, .cancelInvite, ["send CANCEL 1", "start cancelGuard@34"]),
                Step(34, .timerFired(.cancelGuard), ["terminate INVITE", "start removal@66", "report ended canceled"]),
                Step(35, .strayResponse(ok(35)), ["ACK 1 to=c1", "send BYE 2 to=c1"])
            ], final: .terminated(.canceled)),
        Row(
            "cancel twice, and after the end: one CANCEL",
            [
                invite, ringing,
                Step(2, .cancelInvite, ["send CANCEL 1", "start cancelGuard@34"]),
                Step(2.1, .cancelInvite, []),
                Step(
                    2.2, .response(r(487, "Request Terminated"), to: .invite),
                    ["stop cancelGuard", "start removal@34.2", "report ended canceled"]),
                Step(2.3, .cancelInvite, [])
            ], final: .terminated(.canceled)),
        Row(
            "Timer B: timeout",
            [
                invite, Step(32, .requestTimeout(.invite), ["start removal@64", "report ended timeout"])
            ], final: .terminated(.timeout)),
        Row(
            "transport error",
            [
                invite, Step(0.1, .transportError(.invite), ["start removal@32.1", "report ended transportError"])
            ], final: .terminated(.transportError)),
        Row(
            "INVITE not sent at all",
            [
                invite, Step(0, .notSent(.invite), ["start removal@32", "report ended transportError"])
            ], final: .terminated(.transportError)),
        Row(
            "486: rejected",
            [
                invite, ringing,
                Step(
                    3, .response(r(486, "Busy Here"), to: .invite),
                    ["start removal@35", "report ended rejected(status: 486)"])
            ], final: .terminated(.rejected(status: 486))),
        Row(
            "2xx retransmissions: each gets the same ACK again",
            [
                invite,
                Step(1, .response(ok(1), to: .invite), ["ACK 1 to=c1 kept", "report connected"]),
                Step(1.5, .strayResponse(ok(1.5)), ["ACK again"]),
                Step(2.5, .strayResponse(ok(2.5)), ["ACK again"])
            ], final: .confirmed),
        Row(
            "forked second 2xx (other To tag): ACK and BYE there, first dialog kept",
            [
                invite, ringing,
                Step(2, .response(ok(2), to: .invite), ["ACK 1 to=c1 kept", "report connected"]),
                Step(2.1, .strayResponse(ok(2.1, tag: "c2")), ["ACK 1 to=c2", "send BYE 2 to=c2"]),
                Step(2.6, .strayResponse(ok(2.6, tag: "c2")), ["ACK 1 to=c2"]),
                Step(2.7, .strayResponse(ok(2.7)), ["ACK again"])
            ], final: .confirmed),
        Row(
            "late provisionals after the 2xx change nothing",
            [
                invite,
                Step(1, .response(ok(1), to: .invite), ["ACK 1 to=c1 kept", "report connected"]),
                Step(1.1, .response(r(180, "Ringing"), to: .invite), []),
                Step(1.2, .strayResponse(r(183, "Session Progress", tag: "c2", rseq: 5, sdp: true)), [])
            ], final: .confirmed),
        Row(
            "PRACK in RSeq order per fork (RFC 3262 §4); BYE after the PRACK CSeqs",
            [
                invite,
                Step(1, reliable(180, rseq: 1), ["send PRACK 2 to=c1 RAck:1 1 INVITE", "report provisional 180"]),
                // A retransmission (same RSeq) is discarded: our PRACK's own transaction retransmits.
                Step(1.5, reliable(180, rseq: 1), []),
                Step(2, reliable(183, rseq: 3), []),
                Step(2.5, reliable(183, rseq: 2), ["send PRACK 3 to=c1 RAck:2 1 INVITE", "report provisional 183"]),
                Step(
                    3, reliable(180, tag: "c2", rseq: 7),
                    ["send PRACK 2 to=c2 RAck:7 1 INVITE", "report provisional 180"]),
                Step(
                    3.5, reliable(180, tag: "c2", rseq: 8),
                    ["send PRACK 3 to=c2 RAck:8 1 INVITE", "report provisional 180"]),
                Step(4, .response(ok(4), to: .invite), ["ACK 1 to=c1 kept", "report connected"]),
                Step(
                    5, .hangup(status: 480, headers: []),
                    ["send BYE 4 to=c1", "start removal@37", "report ended localHangup"])
            ], final: .terminated(.localHangup)),
        Row(
            "BYE in the early dialog; a 200 racing it gets ACK and BYE",
            [
                invite, ringing,
                Step(
                    2, .request(Wire.requestToUs("BYE", cseq: 1), in: Bench.tx(2)),
                    ["respond 200 BYE", "start removal@34", "report ended remoteHangup"]),
                Step(2.5, .response(ok(2.5), to: .invite), ["ACK 1 to=c1", "send BYE 2 to=c1"])
            ], final: .terminated(.remoteHangup)),
        Row(
            "a request in an early dialog we never saw: 481",
            [
                invite, Step(1, .request(Wire.requestToUs("INFO", cseq: 1), in: Bench.tx(2)), ["respond 481 INFO"])
            ], final: .calling),
        Row(
            "without credentials a challenge is final",
            [
                invite,
                Step(
                    0.1,
                    .response(
                        r(
                            407, "Proxy Authentication Required",
                            extra: [challenge]), to: .invite),
                    ["start removal@32.1", "report ended rejected(status: 407)"])
            ], final: .terminated(.rejected(status: 407)))
    ]

    @Test(arguments: rows)
    func uac(_ row: Row) {
        Bench.check(row, on: Bench.uac())
    }

    static let credentialRows: [Row] = [
        Row(
            "407: INVITE again with credentials (CSeq 2); BYE challenged once, answered once",
            [
                invite,
                Step(
                    0.1,
                    .response(
                        r(
                            407, "Proxy Authentication Required",
                            extra: [challenge]), to: .invite), ["send INVITE 2"]),
                Step(0.5, .response(ok(0.5, cseq: 2), to: .invite), ["ACK 2 to=c1 kept", "report connected"]),
                Step(
                    5, .hangup(status: 480, headers: []),
                    ["send BYE 3 to=c1", "start removal@37", "report ended localHangup"]),
                Step(
                    5.1,
                    .response(
                        r(
                            407, "Proxy Authentication Required", cseq: 3, method: "BYE",
                            extra: [challenge]), to: .bye), ["send BYE 4 to=c1"]),
                Step(
                    5.2,
                    .response(
                        r(
                            407, "Proxy Authentication Required", cseq: 4, method: "BYE",
                            extra: [challenge]), to: .bye), [])
            ], final: .terminated(.localHangup)),
        Row(
            "a second challenge to the INVITE ends it",
            [
                invite,
                Step(
                    0.1,
                    .response(
                        r(
                            401, "Unauthorized",
                            extra: [challenge.replacingOccurrences(of: "Proxy-", with: "WWW-")]), to: .invite),
                    ["send INVITE 2"]),
                Step(
                    0.2,
                    .response(
                        r(
                            401, "Unauthorized", cseq: 2,
                            extra: [challenge.replacingOccurrences(of: "Proxy-", with: "WWW-")]), to: .invite),
                    ["start removal@32.2", "report ended rejected(status: 401)"])
            ], final: .terminated(.rejected(status: 401))),
        Row(
            "a challenge after our CANCEL is not answered",
            [
                invite, ringing,
                Step(2, .cancelInvite, ["send CANCEL 1", "start cancelGuard@34"]),
                Step(
                    2.1,
                    .response(
                        r(
                            407, "Proxy Authentication Required",
                            extra: [challenge]), to: .invite),
                    ["stop cancelGuard", "start removal@34.1", "report ended canceled"])
            ], final: .terminated(.canceled))
    ]

    @Test(arguments: credentialRows)
    func uacWithCredentials(_ row: Row) {
        Bench.check(row, on: Bench.uac(credentials: DigestCredentials(username: "gw", password: "s3cret")))
    }

    static let sessionTimerRows: [Row] = [
        Row(
            "422 with a larger Min-SE: INVITE again once (RFC 4028 §7.3)",
            [
                invite,
                Step(
                    0.1,
                    .response(
                        r(
                            422, "Session Interval Too Small",
                            extra: ["Min-SE: 3600"]), to: .invite), ["send INVITE 2"]),
                Step(
                    0.2,
                    .response(
                        r(
                            422, "Session Interval Too Small", cseq: 2,
                            extra: ["Min-SE: 7200"]), to: .invite),
                    ["start removal@32.2", "report ended rejected(status: 422)"])
            ], final: .terminated(.rejected(status: 422))),
        Row(
            "they refresh (refresher=uas); the refresh restarts the timer; expiry: BYE, sessionExpired",
            [
                invite,
                Step(
                    0,
                    .response(
                        r(
                            200, "OK", sdp: true,
                            extra: ["Session-Expires: 90;refresher=uas", "Require: timer"]), to: .invite),
                    ["ACK 1 to=c1 kept", "start sessionTimer@60", "report connected"]),
                Step(
                    40,
                    .request(
                        Wire.requestToUs(
                            "UPDATE", cseq: 1, extra: ["Session-Expires: 90;refresher=uac", "Supported: timer"]),
                        in: Bench.tx(2)), ["start sessionTimer@100", "respond 200 UPDATE"]),
                Step(
                    100, .timerFired(.sessionTimer),
                    ["send BYE 2 to=c1", "start removal@132", "report ended sessionExpired"])
            ], final: .terminated(.sessionExpired)),
        Row(
            "we refresh (refresher=uac) with UPDATE at half the interval",
            [
                invite,
                Step(
                    0,
                    .response(
                        r(
                            200, "OK", sdp: true,
                            extra: [
                                "Session-Expires: 90;refresher=uac", "Require: timer", "Allow: INVITE, ACK, BYE, UPDATE"
                            ]), to: .invite),
                    ["ACK 1 to=c1 kept", "start sessionTimer@45", "report connected"]),
                Step(45, .timerFired(.sessionTimer), ["send UPDATE 2 to=c1", "start sessionTimer@60"]),
                Step(
                    45.1,
                    .response(
                        r(
                            200, "OK", cseq: 2, method: "UPDATE",
                            extra: ["Session-Expires: 90;refresher=uac", "Require: timer"]), to: .refresh),
                    ["start sessionTimer@90.1"])
            ], final: .confirmed)
    ]

    @Test(arguments: sessionTimerRows)
    func uacWithSessionTimer(_ row: Row) {
        Bench.check(row, on: Bench.uac(sessionTimer: SessionTimerPolicy()))
    }

    /// A 4 s failover time (`SIPCallPolicy.failoverTimeout`): a target that says nothing is
    /// abandoned without a CANCEL (RFC 3261 §9.1); any response keeps the call with it.
    static let failoverRows: [Row] = [
        Row(
            "nothing within the failover time: INVITE abandoned, no CANCEL; a late 2xx gets ACK and BYE",
            [
                Step(0, .start, ["send INVITE 1", "start failover@4"]),
                Step(4, .timerFired(.failover), ["terminate INVITE", "start removal@36", "report ended noProvisional"]),
                Step(5, .strayResponse(ok(5)), ["ACK 1 to=c1", "send BYE 2 to=c1"]),
                Step(32, .requestTimeout(.invite), [])
            ], final: .terminated(.noProvisional)),
        Row(
            "100 Trying stops it: the call rings on past the failover time and connects",
            [
                Step(0, .start, ["send INVITE 1", "start failover@4"]),
                Step(0.2, .response(r(100, "Trying", tag: nil), to: .invite), ["stop failover", "report trying"]),
                Step(1, .response(r(180, "Ringing"), to: .invite), ["report provisional 180"]),
                Step(4, .timerFired(.failover), []),
                Step(20, .response(ok(20), to: .invite), ["ACK 1 to=c1 kept", "report connected"])
            ], final: .confirmed),
        Row(
            "a final response before any provisional stops it",
            [
                Step(0, .start, ["send INVITE 1", "start failover@4"]),
                Step(
                    0.3, .response(r(486, "Busy Here"), to: .invite),
                    ["stop failover", "start removal@32.3", "report ended rejected(status: 486)"])
            ], final: .terminated(.rejected(status: 486))),
        Row(
            "cancelled before any response, and none comes: the failover time ends it canceled",
            [
                Step(0, .start, ["send INVITE 1", "start failover@4"]),
                Step(1, .cancelInvite, []),
                Step(4, .timerFired(.failover), ["terminate INVITE", "start removal@36", "report ended canceled"])
            ], final: .terminated(.canceled))
    ]

    @Test(arguments: failoverRows)
    func uacWithFailoverTime(_ row: Row) {
        Bench.check(row, on: Bench.uac(failoverTimeout: 4))
    }

    // MARK: What the messages carry

    @Test func inviteCarriesTimerHeadersAndSDPAndRetriesWithTheNewInterval() throws {
        var m = Bench.uac(sessionTimer: SessionTimerPolicy())
        guard case .send(let first, .invite, .peer) = try #require(m.handle(.start, now: 0).first) else {
            Issue.record(); return
        }
        #expect(
            first[.sessionExpires] == "1800" && first[.minSE] == "90" && first.sdp == Wire.ourSDP && first[.via] == nil)
        let retry = m.handle(
            .response(
                Self.r(
                    422, "Session Interval Too Small",
                    sdp: false, extra: ["Min-SE: 3600"]), to: .invite), now: 1)
        guard case .send(let second, .invite, .peer) = try #require(retry.first) else { Issue.record(); return }
        #expect(second[.sessionExpires] == "3600" && second[.minSE] == "3600" && second[.cseq] == "2 INVITE")
    }

    @Test func cancelCopiesTheInviteAndTheACKCarriesItsCredentials() throws {
        var m = Bench.uac(credentials: DigestCredentials(username: "gw", password: "s3cret"))
        _ = m.handle(.start, now: 0)
        let retried = m.handle(
            .response(
                Self.r(
                    407, "Proxy Authentication Required",
                    sdp: false, extra: [Self.challenge]), to: .invite), now: 0.1)
        guard case .send(let invite2, _, _) = try #require(retried.first) else { Issue.record(); return }
        let auth = try #require(invite2[.proxyAuthorization])
        #expect(
            auth.contains("username=\"gw\"") && auth.contains("cnonce=\"0a4f113b\"")
                && auth.contains("realm=\"carrier.example\""))
        _ = m.handle(.response(Self.r(180, "Ringing", cseq: 2), to: .invite), now: 1)
        guard case .send(let cancel, .cancel, .peer) = try #require(m.handle(.cancelInvite, now: 2).first) else {
            Issue.record(); return
        }
        #expect(cancel.requestURI == invite2.requestURI && cancel[.cseq] == "2 CANCEL")
        #expect(cancel[.from] == invite2[.from] && cancel[.to] == invite2[.to] && cancel[.callID] == Wire.callID)
        let crossing = m.handle(.response(Self.ok(3, cseq: 2), to: .invite), now: 3)
        guard case .sendACK(let ack, .uri(let hop), true) = try #require(crossing.dropFirst().first) else {
            Issue.record(); return
        }
        #expect(ack[.cseq] == "2 ACK" && ack[.proxyAuthorization] == auth && ack.to?.tag == "c1")
        #expect(ack.requestURI == hop && hop.host == "198.51.100.7" && hop.port == 5060)
    }

    @Test func forkedSecond2xxKeepsTheFirstDialog() {
        var m = Bench.uac()
        _ = m.handle(.start, now: 0)
        _ = m.handle(.response(Self.ok(1), to: .invite), now: 1)
        _ = m.handle(.strayResponse(Self.ok(1.1, tag: "c2")), now: 1.1)
        #expect(m.dialog?.remoteTag == "c1" && m.state == .confirmed && m.finalResponse?.to?.tag == "c1")
    }
}
