import Testing

@testable import SIP

struct OptionsKeepaliveTests {
    @Test func upDownUpWithHysteresis() {
        var k = OptionsKeepalive()
        #expect(k.state == .unknown)
        #expect(k.handle(.start(now: 0)) == [.sendOptions])
        #expect(k.handle(.response(status: 200, now: 0.25)) == [.schedule(at: 30.25), .stateChanged(.up)])
        #expect(k.lastRoundTrip == 0.25)

        #expect(k.handle(.timerFired(now: 30.25)) == [.sendOptions])
        // One lost ping keeps the trunk up.
        #expect(k.handle(.timeout(now: 62.25)) == [.schedule(at: 92.25)])
        #expect(k.state == .up)
        #expect(k.consecutiveFailures == 1)

        #expect(k.handle(.timerFired(now: 92.25)) == [.sendOptions])
        #expect(k.handle(.timeout(now: 124.25)) == [.schedule(at: 154.25), .stateChanged(.down)])

        #expect(k.handle(.timerFired(now: 154.25)) == [.sendOptions])
        #expect(k.handle(.timeout(now: 186.25)) == [.schedule(at: 216.25)])
        #expect(k.consecutiveFailures == 3)

        // One answer, even a 404, brings it back.
        #expect(k.handle(.timerFired(now: 216.25)) == [.sendOptions])
        #expect(k.handle(.response(status: 404, now: 216.5)) == [.schedule(at: 246.5), .stateChanged(.up)])
        #expect(k.consecutiveFailures == 0)
        #expect(k.lastStatus == 404)
    }

    @Test func unknownUntilTheFailureThreshold() {
        var k = OptionsKeepalive()
        _ = k.handle(.start(now: 0))
        #expect(k.handle(.transportError(now: 0)) == [.schedule(at: 30)])
        #expect(k.state == .unknown)
        _ = k.handle(.timerFired(now: 30))
        #expect(k.handle(.response(status: 503, now: 31)) == [.schedule(at: 61), .stateChanged(.down)])
    }

    @Test(arguments: [
        (200, true), (202, true), (404, true), (405, true), (481, true), (486, true),
        (500, true), (603, true), (408, false), (503, false), (100, false), (180, false)
    ])
    func whatCountsAsAlive(status: Int, alive: Bool) {
        #expect(OptionsKeepalive().countsAsAlive(status: status) == alive)
    }

    @Test func customThresholdsAndDeadStatuses() {
        var k = OptionsKeepalive(
            configuration: .init(
                interval: 10, failuresToDown: 3, successesToUp: 2, deadStatuses: [408, 500, 503]))
        _ = k.handle(.start(now: 0))
        #expect(k.handle(.response(status: 500, now: 1)) == [.schedule(at: 11)])
        _ = k.handle(.timerFired(now: 11))
        #expect(k.handle(.timeout(now: 12)) == [.schedule(at: 22)])
        _ = k.handle(.timerFired(now: 22))
        #expect(k.handle(.response(status: 408, now: 23)) == [.schedule(at: 33), .stateChanged(.down)])
        _ = k.handle(.timerFired(now: 33))
        #expect(k.handle(.response(status: 200, now: 34)) == [.schedule(at: 44)])
        #expect(k.state == .down)
        _ = k.handle(.timerFired(now: 44))
        #expect(k.handle(.response(status: 200, now: 45)) == [.schedule(at: 55), .stateChanged(.up)])
    }

    @Test func provisionalStrayAndEarlyEventsAreIgnored() {
        var k = OptionsKeepalive()
        #expect(k.handle(.response(status: 200, now: 0)) == [])
        #expect(k.handle(.timerFired(now: 100)) == [])
        _ = k.handle(.start(now: 0))
        #expect(k.handle(.start(now: 0)) == [])
        #expect(k.handle(.response(status: 100, now: 0.1)) == [])
        #expect(k.sentAt == 0)
        // No second OPTIONS while one is outstanding.
        #expect(k.handle(.timerFired(now: 40)) == [])
        _ = k.handle(.response(status: 200, now: 1))
        #expect(k.handle(.response(status: 200, now: 2)) == [])
        #expect(k.handle(.timerFired(now: 30)) == [])
        #expect(k.handle(.timerFired(now: 31)) == [.sendOptions])
    }

    @Test func stopCancelsAndForgets() {
        var k = OptionsKeepalive()
        _ = k.handle(.start(now: 0))
        _ = k.handle(.response(status: 200, now: 1))
        #expect(k.handle(.stop) == [.cancelTimer, .stateChanged(.unknown)])
        #expect(k.timerDeadline == nil)
        #expect(k.handle(.timerFired(now: 31)) == [])
        #expect(k.handle(.stop) == [])
        #expect(k.handle(.start(now: 50)) == [.sendOptions])
    }
}
