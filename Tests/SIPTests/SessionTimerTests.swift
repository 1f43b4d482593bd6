import Testing

@testable import SIP

private typealias ST = SessionTimer
private typealias N = SessionTimer.Negotiated

private func update(_ interval: Int, minSE: Int = 90) -> ST.Action {
    .sendRefresh(
        .init(
            method: .update, withSDP: false,
            sessionExpires: SessionExpires(deltaSeconds: interval, refresher: .uac),
            minSE: MinSE(deltaSeconds: minSE)))
}

private func reInvite(_ interval: Int, minSE: Int = 90) -> ST.Action {
    .sendRefresh(
        .init(
            method: .reInvite, withSDP: true,
            sessionExpires: SessionExpires(deltaSeconds: interval, refresher: .uac),
            minSE: MinSE(deltaSeconds: minSE)))
}

/// A refresher timer started at 0 with an 1800 s interval, its first refresh sent at 900.
private func refreshing(
    peerAllowsUpdate: Bool = true, ownsCallID: Bool = true,
    policy: SessionTimerPolicy = SessionTimerPolicy()
) -> ST {
    var t = ST(
        policy: policy, peerAllowsUpdate: peerAllowsUpdate, ownsCallID: ownsCallID,
        random: { $0.lowerBound })
    _ = t.handle(.start(now: 0, negotiated: N(interval: 1800, weRefresh: true)))
    _ = t.handle(.timerFired(now: 900))
    return t
}

struct SessionExpiresHeaderTests {
    @Test(
        arguments: [
            ("1800", 1800, nil),
            ("1800;refresher=uac", 1800, .uac),
            (" 90 ; REFRESHER = UAS ", 90, .uas),
            ("1800;foo=bar;refresher=uas", 1800, .uas),
            ("1800;foo=\"a;refresher=uac\"", 1800, nil),
            ("1800;lr", 1800, nil),
            ("\t1800;refresher=uac\r\n", 1800, .uac),
            ("99999999999999999999", 4_294_967_295, nil)
        ] as [(String, Int, SessionExpires.Refresher?)])
    func parses(text: String, seconds: Int, refresher: SessionExpires.Refresher?) throws {
        let value = try SessionExpires.parse(text)
        #expect(value == SessionExpires(deltaSeconds: seconds, refresher: refresher))
    }

    @Test(arguments: [
        ("", SessionTimerHeaderError.missingDeltaSeconds(header: "Session-Expires")),
        ("  ;refresher=uac", .missingDeltaSeconds(header: "Session-Expires")),
        ("abc", .invalidDeltaSeconds(header: "Session-Expires", text: "abc")),
        ("-5", .invalidDeltaSeconds(header: "Session-Expires", text: "-5")),
        ("18 00", .invalidDeltaSeconds(header: "Session-Expires", text: "18 00")),
        ("١٢٠", .invalidDeltaSeconds(header: "Session-Expires", text: "١٢٠")),
        ("1800;refresher=proxy", .invalidRefresher(text: "proxy")),
        ("1800;refresher", .invalidRefresher(text: "")),
        ("1800;;refresher=uac", .malformedParameter(header: "Session-Expires", text: "")),
        ("1800;=x", .malformedParameter(header: "Session-Expires", text: "=x")),
        ("1800;foo=", .malformedParameter(header: "Session-Expires", text: "foo=")),
        ("1800;foo=\"abc", .malformedParameter(header: "Session-Expires", text: "foo=\"abc"))
    ])
    func rejects(text: String, error: SessionTimerHeaderError) {
        #expect(throws: error) { try SessionExpires.parse(text) }
        #expect(error.statusCode == 400)
        #expect(error.description.hasPrefix("Session-Expires"))
    }

    @Test(arguments: [
        (SessionExpires(deltaSeconds: 1800), "1800"),
        (SessionExpires(deltaSeconds: 90, refresher: .uac), "90;refresher=uac"),
        (SessionExpires(deltaSeconds: 3600, refresher: .uas), "3600;refresher=uas")
    ])
    func serializesAndRoundTrips(value: SessionExpires, text: String) throws {
        #expect(value.serialize() == text)
        #expect("\(value)" == text)
        #expect(try SessionExpires.parse(value.serialize()) == value)
    }

    @Test func minSEParsesSerializesAndRejects() throws {
        #expect(try MinSE.parse("90") == MinSE(deltaSeconds: 90))
        #expect(try MinSE.parse(" 120 ;x=y") == MinSE(deltaSeconds: 120))
        #expect(MinSE(deltaSeconds: 300).serialize() == "300")
        #expect(throws: SessionTimerHeaderError.invalidDeltaSeconds(header: "Min-SE", text: "1.5")) {
            try MinSE.parse("1.5")
        }
        #expect(throws: SessionTimerHeaderError.missingDeltaSeconds(header: "Min-SE")) {
            try MinSE.parse(" ")
        }
    }
}

struct SessionTimerNegotiationTests {
    @Test func policyClampsToTheRFCFloor() {
        let p = SessionTimerPolicy(sessionExpires: 30, minSE: 10)
        #expect(p.minSE == 90)
        #expect(p.sessionExpires == 90)
    }

    @Test func uacOfferHeaders() {
        let offer = SessionTimerOffer()
        #expect(offer.supportedTimer)
        #expect(offer.sessionExpires.serialize() == "1800")
        #expect(offer.minSE.serialize() == "90")
        let uac = SessionTimerOffer(policy: .init(sessionExpires: 600, minSE: 120, requestedRefresher: .uac))
        #expect(uac.sessionExpires.serialize() == "600;refresher=uac")
        #expect(uac.minSE.serialize() == "120")
    }

    @Test func uacRetriesOnceAfter422WithALargerMinSE() {
        var offer = SessionTimerOffer()
        #expect(
            offer.handle422(minSE: 3600)
                == .retry(
                    sessionExpires: SessionExpires(deltaSeconds: 3600), minSE: MinSE(deltaSeconds: 3600)))
        #expect(offer.sessionExpires.deltaSeconds == 3600)
        #expect(offer.retriedAfter422)
        #expect(offer.handle422(minSE: 7200) == .giveUp)
    }

    @Test(arguments: [nil, 1800, 900] as [Int?])
    func uacGivesUpOnA422ThatRaisesNothing(minSE: Int?) {
        var offer = SessionTimerOffer()
        #expect(offer.handle422(minSE: minSE) == .giveUp)
    }

    @Test(
        arguments: [
            // (response Session-Expires, Require: timer, refreshWithoutPeerSupport, expected)
            (SessionExpires(deltaSeconds: 1800, refresher: .uac), true, false, N(interval: 1800, weRefresh: true)),
            (SessionExpires(deltaSeconds: 1200, refresher: .uas), true, false, N(interval: 1200, weRefresh: false)),
            // refresher=uas without Require: timer: the UAS never confirmed timers; we refresh.
            (SessionExpires(deltaSeconds: 1800, refresher: .uas), false, false, N(interval: 1800, weRefresh: true)),
            (SessionExpires(deltaSeconds: 1800), true, false, N(interval: 1800, weRefresh: true)),
            (nil, false, false, nil),
            (nil, true, false, nil),
            (nil, false, true, N(interval: 1800, weRefresh: true)),
            (SessionExpires(deltaSeconds: 0, refresher: .uac), true, false, nil)
        ] as [(SessionExpires?, Bool, Bool, SessionTimer.Negotiated?)])
    func uacResolvesThe2xx(
        response: SessionExpires?, requireTimer: Bool, selfRefresh: Bool, expected: SessionTimer.Negotiated?
    ) {
        let offer = SessionTimerOffer(policy: .init(refreshWithoutPeerSupport: selfRefresh))
        #expect(offer.resolve(sessionExpires: response, requireTimer: requireTimer) == expected)
    }

    @Test(
        arguments: [
            // (policy, request Session-Expires, request Min-SE, Supported: timer, expected answer)
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 1800), nil, true,
                SessionTimerAnswer.accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 1800, weRefresh: true))
            ),
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 1800, refresher: .uac), nil, true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uac),
                    requireTimer: true, negotiated: N(interval: 1800, weRefresh: false))
            ),
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 60), nil, true,
                .reject(minSE: MinSE(deltaSeconds: 90))
            ),
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 60), nil, false,
                .reject(minSE: MinSE(deltaSeconds: 90))
            ),
            (
                SessionTimerPolicy(minSE: 300), SessionExpires(deltaSeconds: 200), MinSE(deltaSeconds: 90), true,
                .reject(minSE: MinSE(deltaSeconds: 300))
            ),
            // Longer than ours: reduced to ours, but not below the request's Min-SE.
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 7200), nil, true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 1800, weRefresh: true))
            ),
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 7200), MinSE(deltaSeconds: 3600), true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 3600, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 3600, weRefresh: true))
            ),
            // Shorter than ours: kept (a UAS must not increase it).
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 1000), nil, true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1000, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 1000, weRefresh: true))
            ),
            // Supported: timer without Session-Expires: we ask for our interval.
            (
                SessionTimerPolicy(), nil, nil, true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 1800, weRefresh: true))
            ),
            (
                SessionTimerPolicy(), nil, MinSE(deltaSeconds: 2000), true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 2000, refresher: .uas),
                    requireTimer: true, negotiated: N(interval: 2000, weRefresh: true))
            ),
            (
                SessionTimerPolicy(refresherWhenChoosing: .uac), SessionExpires(deltaSeconds: 1800), nil, true,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uac),
                    requireTimer: true, negotiated: N(interval: 1800, weRefresh: false))
            ),
            // No timer support at the UAC.
            (
                SessionTimerPolicy(), nil, nil, false,
                .accept(sessionExpires: nil, requireTimer: false, negotiated: nil)
            ),
            (
                SessionTimerPolicy(refreshWithoutPeerSupport: true), nil, nil, false,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: false, negotiated: N(interval: 1800, weRefresh: true))
            ),
            // A proxy put Session-Expires in for a UAC without timer support: we must refresh.
            (
                SessionTimerPolicy(), SessionExpires(deltaSeconds: 1800, refresher: .uac), nil, false,
                .accept(
                    sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: false, negotiated: N(interval: 1800, weRefresh: true))
            )
        ] as [(SessionTimerPolicy, SessionExpires?, MinSE?, Bool, SessionTimerAnswer)])
    func uasAnswers(
        policy: SessionTimerPolicy, se: SessionExpires?, minSE: MinSE?, supports: Bool,
        expected: SessionTimerAnswer
    ) {
        #expect(policy.answer(sessionExpires: se, minSE: minSE, supportsTimer: supports) == expected)
    }
}

struct SessionTimerMachineTests {
    @Test(arguments: [(90, 60.0), (96, 64.0), (120, 88.0), (1800, 1768.0), (3600, 3568.0)])
    func expiryOffsetIsIntervalMinusMin32OrAThird(interval: Int, offset: Double) {
        #expect(ST.expiryOffset(interval: interval) == offset)
        #expect(ST.refreshOffset(interval: interval) == Double(interval) / 2)
    }

    @Test func refresherRefreshesAtHalfTheIntervalAndRestartsOnAnswer() {
        var t = ST(peerAllowsUpdate: true, ownsCallID: true)
        #expect(t.handle(.start(now: 0, negotiated: N(interval: 1800, weRefresh: true))) == [.schedule(at: 900)])
        #expect(t.state == .active)
        #expect(t.expiresAt == 1768)
        #expect(t.handle(.timerFired(now: 899)) == [])
        #expect(t.handle(.timerFired(now: 900)) == [update(1800), .schedule(at: 1768)])
        #expect(t.refreshInFlight != nil)
        #expect(t.handle(.refreshResponse(now: 900, status: 100)) == [])
        #expect(
            t.handle(
                .refreshResponse(
                    now: 901, status: 200, sessionExpires: .init(deltaSeconds: 1800, refresher: .uac),
                    requireTimer: true)) == [.schedule(at: 1801)])
        #expect(t.lastRefreshAt == 901)
        #expect(t.expiresAt == 2669)
        #expect(t.handle(.timerFired(now: 1801)) == [update(1800), .schedule(at: 2669)])
    }

    @Test func nonRefresherSendsByeAtTheDeadlineUnlessRefreshed() {
        var t = ST(peerAllowsUpdate: true, ownsCallID: false)
        #expect(t.handle(.start(now: 0, negotiated: N(interval: 1800, weRefresh: false))) == [.schedule(at: 1768)])
        #expect(t.refreshAt == nil)
        #expect(
            t.handle(.refreshReceived(now: 1000, negotiated: N(interval: 1800, weRefresh: false))) == [
                .schedule(at: 2768)
            ])
        #expect(t.handle(.timerFired(now: 2767)) == [])
        #expect(t.handle(.timerFired(now: 2768)) == [.sendBye(.sessionExpired)])
        #expect(t.state == .ended(.sessionExpired))
        #expect(t.handle(.refreshReceived(now: 2769, negotiated: N(interval: 1800, weRefresh: false))) == [])
    }

    @Test func shortIntervalDeadlineUsesAThird() {
        var t = ST(peerAllowsUpdate: false, ownsCallID: false)
        #expect(t.handle(.start(now: 10, negotiated: N(interval: 90, weRefresh: false))) == [.schedule(at: 70)])
        #expect(t.handle(.timerFired(now: 70)) == [.sendBye(.sessionExpired)])
    }

    @Test func refreshReceivedCanHandTheRefresherRoleOver() {
        var t = ST(peerAllowsUpdate: true, ownsCallID: true)
        _ = t.handle(.start(now: 0, negotiated: N(interval: 1800, weRefresh: false)))
        #expect(
            t.handle(.refreshReceived(now: 500, negotiated: N(interval: 600, weRefresh: true))) == [
                .schedule(at: 800)
            ])
        #expect(t.expiresAt == 1068)
    }

    @Test func reInviteWithSDPWhenThePeerDoesNotAllowUpdate() {
        let t = refreshing(peerAllowsUpdate: false)
        #expect(t.refreshInFlight?.method == .reInvite)
        #expect(t.refreshInFlight?.withSDP == true)
    }

    @Test(arguments: [400, 405, 501])
    func refusedUpdateFallsBackToReInviteForGood(status: Int) {
        var t = refreshing()
        #expect(t.handle(.refreshResponse(now: 900.5, status: status)) == [reInvite(1800)])
        #expect(t.useReInvite)
        #expect(
            t.handle(
                .refreshResponse(
                    now: 901, status: 200, sessionExpires: .init(deltaSeconds: 1800, refresher: .uac),
                    requireTimer: true)) == [.schedule(at: 1801)])
        #expect(t.handle(.timerFired(now: 1801)) == [reInvite(1800), .schedule(at: 2669)])
    }

    @Test func badRequestToAReInviteIsAnOrdinaryFailure() {
        var t = refreshing(peerAllowsUpdate: false)
        // Retry half-way to the deadline.
        #expect(t.handle(.refreshResponse(now: 900, status: 400)) == [.schedule(at: 1334)])
    }

    @Test func tooSmallRefreshRetriesOnceWithTheLargerInterval() {
        var t = refreshing()
        #expect(t.handle(.refreshResponse(now: 900.5, status: 422, minSE: 3600)) == [update(3600, minSE: 3600)])
        #expect(t.negotiated == N(interval: 3600, weRefresh: true))
        #expect(
            t.handle(
                .refreshResponse(
                    now: 901, status: 200, sessionExpires: .init(deltaSeconds: 3600, refresher: .uac),
                    requireTimer: true)) == [.schedule(at: 2701)])
        #expect(t.expiresAt == 4469)
        // Later refreshes keep the learned Min-SE.
        #expect(t.handle(.timerFired(now: 2701)) == [update(3600, minSE: 3600), .schedule(at: 4469)])
    }

    @Test func secondOrUselessTooSmallIsAnOrdinaryFailure() {
        var t = refreshing()
        _ = t.handle(.refreshResponse(now: 900, status: 422, minSE: 3600))
        #expect(t.handle(.refreshResponse(now: 900, status: 422, minSE: 7200)) == [.schedule(at: 1334)])

        var u = refreshing()
        #expect(u.handle(.refreshResponse(now: 900, status: 422, minSE: 90)) == [.schedule(at: 1334)])
    }

    @Test(arguments: [408, 481])
    func deadDialogStatusesEndTheCall(status: Int) {
        var t = refreshing()
        #expect(
            t.handle(.refreshResponse(now: 901, status: status)) == [
                .sendBye(.refreshFailed(status: status)), .cancelTimer
            ])
        #expect(t.state == .ended(.refreshFailed(status: status)))
    }

    @Test func refreshTimeoutEndsTheCall() {
        var t = refreshing()
        #expect(t.handle(.refreshTimeout(now: 932)) == [.sendBye(.refreshFailed(status: 408)), .cancelTimer])
    }

    @Test(arguments: [(true, 902.1), (false, 900.0)])
    func glareRetriesAfterTheRFC3261Delay(ownsCallID: Bool, retryAt: Double) {
        var t = refreshing(ownsCallID: ownsCallID)
        #expect(t.handle(.refreshResponse(now: 900, status: 491)) == [.schedule(at: retryAt)])
        #expect(t.handle(.timerFired(now: retryAt)) == [update(1800), .schedule(at: 1768)])
    }

    @Test func transportErrorIsAnOrdinaryFailure() {
        var t = refreshing()
        #expect(t.handle(.refreshTransportError(now: 900)) == [.schedule(at: 1334)])
        #expect(t.state == .active)
    }

    @Test func otherFailuresRetryTwiceThenWaitForTheDeadline() {
        var t = refreshing()
        #expect(t.handle(.refreshResponse(now: 900, status: 500)) == [.schedule(at: 1334)])
        #expect(t.handle(.timerFired(now: 1334)) == [update(1800), .schedule(at: 1768)])
        #expect(t.handle(.refreshResponse(now: 1334, status: 503)) == [.schedule(at: 1551)])
        #expect(t.handle(.timerFired(now: 1551)) == [update(1800), .schedule(at: 1768)])
        #expect(t.handle(.refreshResponse(now: 1551, status: 500)) == [])
        #expect(t.handle(.timerFired(now: 1768)) == [.sendBye(.sessionExpired)])
    }

    @Test func deadlineWinsOverAnOutstandingRefresh() {
        var t = refreshing()
        #expect(t.handle(.timerFired(now: 1768)) == [.sendBye(.sessionExpired)])
        #expect(t.refreshInFlight == nil)
        #expect(t.handle(.refreshResponse(now: 1769, status: 200)) == [])
    }

    @Test func answerWithoutSessionExpiresTurnsTheTimerOff() {
        var t = refreshing()
        #expect(t.handle(.refreshResponse(now: 901, status: 200)) == [.cancelTimer])
        #expect(t.state == .inactive)
        #expect(t.negotiated == nil)
        // A later refresh from the peer may turn it back on.
        #expect(
            t.handle(.refreshReceived(now: 1000, negotiated: N(interval: 1800, weRefresh: false))) == [
                .schedule(at: 2768)
            ])
        #expect(t.state == .active)
    }

    @Test func answerWithoutSessionExpiresKeepsOurTimerWhenWeSelfRefresh() {
        var t = refreshing(policy: .init(refreshWithoutPeerSupport: true))
        #expect(t.handle(.refreshResponse(now: 901, status: 200)) == [.schedule(at: 1801)])
        #expect(t.negotiated == N(interval: 1800, weRefresh: true))
    }

    @Test func answerCanMakeThePeerTheRefresher() {
        var t = refreshing()
        #expect(
            t.handle(
                .refreshResponse(
                    now: 901, status: 200, sessionExpires: .init(deltaSeconds: 1800, refresher: .uas),
                    requireTimer: true)) == [.schedule(at: 2669)])
        #expect(t.negotiated == N(interval: 1800, weRefresh: false))
        #expect(t.refreshAt == nil)
    }

    @Test func startWithoutTermsIsInactiveAndStopCancels() {
        var t = ST(peerAllowsUpdate: true, ownsCallID: true)
        #expect(t.handle(.start(now: 0, negotiated: nil)) == [])
        #expect(t.state == .inactive)
        #expect(t.handle(.timerFired(now: 900)) == [])

        var u = refreshing()
        #expect(u.handle(.stop) == [.cancelTimer])
        #expect(u.state == .stopped)
        #expect(u.handle(.timerFired(now: 1768)) == [])
        #expect(u.handle(.stop) == [])
        #expect(u.handle(.start(now: 2000, negotiated: N(interval: 1800, weRefresh: true))) == [])
    }
}
