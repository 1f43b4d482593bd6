import Foundation
import Testing

@testable import SIP

/// A seeded, lock-protected generator usable as the machine's `@Sendable` random closure.
private final class SeededDraws: @unchecked Sendable {
    private let lock = NSLock()
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    func draw(_ range: ClosedRange<Int>) -> Int {
        lock.lock()
        defer { lock.unlock() }
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(z % span)
    }
}

private typealias R = RegistrationMachine

/// No jitter: the generator always draws 0 ms.
private func noJitter() -> R { R(random: { $0.lowerBound }) }
/// Full jitter: the generator always draws the largest reduction.
private func fullJitter() -> R { R(random: { $0.upperBound }) }

/// Starts a machine and gets it registered at `granted` seconds, sent at 0, answered at 1.
private func registered(_ m: inout R, granted: Int = 3600) {
    _ = m.handle(.start(now: 0))
    _ = m.handle(.response(now: 1, status: 200, grantedExpires: granted))
}

struct RegistrationMachineTests {
    /// A cluster hands the registration to another node: no unregister (the binding is the
    /// other node's now), no refresh, a late answer ignored, and a later start registers anew.
    @Test func handOverLeavesTheBindingAndSendsNothing() {
        var m = noJitter()
        registered(&m)
        #expect(m.handle(.handOver) == [.cancelTimer, .stateChanged(.unregistered)])
        #expect(m.timerDeadline == nil)
        #expect(m.handle(.timerFired(now: 3240)) == [])
        #expect(m.handle(.handOver) == [])
        #expect(m.handle(.start(now: 4000)).first == .sendRegister(expires: 3600, authenticate: false))
        // Handed over with a REGISTER out: its answer changes nothing.
        var n = noJitter()
        _ = n.handle(.start(now: 0))
        _ = n.handle(.handOver)
        #expect(n.handle(.response(now: 1, status: 200, grantedExpires: 3600)) == [])
        #expect(n.state == .unregistered)
    }

    @Test func successThenRefreshAtNinetyPercent() {
        var m = noJitter()
        #expect(
            m.handle(.start(now: 0)) == [
                .sendRegister(expires: 3600, authenticate: false), .stateChanged(.registering)
            ])
        #expect(m.requestInFlight)
        #expect(
            m.handle(.response(now: 1, status: 200, grantedExpires: 3600)) == [
                .schedule(at: 3240), .stateChanged(.registered(until: 3600))
            ])
        #expect(m.state == .registered(until: 3600))
        #expect(m.timerDeadline == 3240)

        // The refresh keeps the state `registered` while in flight.
        #expect(m.handle(.timerFired(now: 3240)) == [.sendRegister(expires: 3600, authenticate: false)])
        #expect(m.state == .registered(until: 3600))
        #expect(
            m.handle(.response(now: 3241, status: 200, grantedExpires: 3600)) == [
                .schedule(at: 6480), .stateChanged(.registered(until: 6840))
            ])
    }

    @Test(arguments: [
        // (granted, refresh delay): earlier of 90 % and granted − 30, never before half-way.
        (3600, 3240.0), (600, 540.0), (300, 270.0), (120, 90.0), (60, 30.0), (40, 20.0), (20, 10.0)
    ])
    func refreshDelayTable(granted: Int, delay: Double) {
        #expect(R().refreshDelay(granted: granted) == delay)
    }

    @Test func grantSmallerThanRequestedIsUsedAndMissingGrantMeansRequested() {
        var m = noJitter()
        _ = m.handle(.start(now: 10))
        #expect(
            m.handle(.response(now: 11, status: 200, grantedExpires: 60)) == [
                .schedule(at: 40), .stateChanged(.registered(until: 70))
            ])
        var n = noJitter()
        _ = n.handle(.start(now: 0))
        #expect(
            n.handle(.response(now: 1, status: 200)) == [
                .schedule(at: 3240), .stateChanged(.registered(until: 3600))
            ])
    }

    @Test func grantOfZeroIsAFailure() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.response(now: 1, status: 200, grantedExpires: 0)) == [
                .schedule(at: 6), .stateChanged(.failed(lastStatus: 200, retryAt: 6))
            ])
    }

    @Test func earlyOrStaleTimerIsIgnored() {
        var m = noJitter()
        registered(&m)
        #expect(m.handle(.timerFired(now: 100)) == [])
        #expect(!m.requestInFlight)
        #expect(m.handle(.timerFired(now: 3240)) == [.sendRegister(expires: 3600, authenticate: false)])
        // A second firing while the refresh is outstanding does nothing.
        #expect(m.handle(.timerFired(now: 3241)) == [])
    }

    @Test(arguments: [401, 407])
    func challengeThenSuccess(status: Int) {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.response(now: 1, status: status)) == [
                .sendRegister(expires: 3600, authenticate: true)
            ])
        #expect(m.state == .registering)
        #expect(
            m.handle(.response(now: 2, status: 200, grantedExpires: 3600)) == [
                .schedule(at: 3241), .stateChanged(.registered(until: 3601))
            ])
        // The refresh starts a new chain: unauthenticated, and may be challenged once again.
        #expect(m.handle(.timerFired(now: 3241)) == [.sendRegister(expires: 3600, authenticate: false)])
        #expect(
            m.handle(.response(now: 3242, status: status)) == [
                .sendRegister(expires: 3600, authenticate: true)
            ])
    }

    @Test func challengeTwiceIsAFailureWithBackoff() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        _ = m.handle(.response(now: 1, status: 401))
        #expect(
            m.handle(.response(now: 2, status: 401)) == [
                .schedule(at: 7), .stateChanged(.failed(lastStatus: 401, retryAt: 7))
            ])
        #expect(m.consecutiveFailures == 1)
        #expect(
            m.handle(.timerFired(now: 7)) == [
                .sendRegister(expires: 3600, authenticate: false), .stateChanged(.registering)
            ])
        _ = m.handle(.response(now: 8, status: 401))
        #expect(
            m.handle(.response(now: 9, status: 401)) == [
                .schedule(at: 19), .stateChanged(.failed(lastStatus: 401, retryAt: 19))
            ])
    }

    @Test func staleChallengeEarnsOneMoreAuthenticatedAttempt() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(m.handle(.response(now: 1, status: 401)) == [.sendRegister(expires: 3600, authenticate: true)])
        #expect(
            m.handle(.response(now: 2, status: 401, stale: true)) == [
                .sendRegister(expires: 3600, authenticate: true)
            ])
        #expect(
            m.handle(.response(now: 3, status: 401, stale: true)) == [
                .schedule(at: 8), .stateChanged(.failed(lastStatus: 401, retryAt: 8))
            ])
    }

    @Test func intervalTooBriefRetriesWithMinExpiresAndKeepsIt() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.response(now: 1, status: 423, minExpires: 7200)) == [
                .sendRegister(expires: 7200, authenticate: false)
            ])
        #expect(m.requestedExpires == 7200)
        #expect(
            m.handle(.response(now: 2, status: 200)) == [
                .schedule(at: 1 + 6480), .stateChanged(.registered(until: 7201))
            ])
        #expect(m.handle(.timerFired(now: 6481)) == [.sendRegister(expires: 7200, authenticate: false)])
    }

    @Test(arguments: [nil, 3600, 100] as [Int?])
    func intervalTooBriefWithoutALargerMinExpiresIsAFailure(minExpires: Int?) {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.response(now: 1, status: 423, minExpires: minExpires)) == [
                .schedule(at: 6), .stateChanged(.failed(lastStatus: 423, retryAt: 6))
            ])
    }

    @Test func serviceUnavailableHonoursRetryAfter() {
        var m = fullJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.response(now: 10, status: 503, retryAfter: 120)) == [
                .schedule(at: 130), .stateChanged(.failed(lastStatus: 503, retryAt: 130))
            ])
        _ = m.handle(.timerFired(now: 130))
        // Without Retry-After the jittered backoff applies (second failure: 10 s − 20 %).
        #expect(
            m.handle(.response(now: 131, status: 503)) == [
                .schedule(at: 139), .stateChanged(.failed(lastStatus: 503, retryAt: 139))
            ])
    }

    @Test func timeoutsBackOffExponentiallyUpToTheCap() {
        for (jitter, expected) in [
            (false, [5.0, 10, 20, 40, 80, 160, 300, 300]),
            (true, [4.0, 8, 16, 32, 64, 128, 240, 240])
        ] {
            var m = jitter ? fullJitter() : noJitter()
            var now = 0.0
            _ = m.handle(.start(now: now))
            for (i, delay) in expected.enumerated() {
                now += 1
                #expect(
                    m.handle(.timeout(now: now)) == [
                        .schedule(at: now + delay), .stateChanged(.failed(lastStatus: 408, retryAt: now + delay))
                    ])
                #expect(m.consecutiveFailures == i + 1)
                now += delay
                #expect(
                    m.handle(.timerFired(now: now)) == [
                        .sendRegister(expires: 3600, authenticate: false), .stateChanged(.registering)
                    ])
            }
        }
    }

    @Test func jitteredBackoffStaysWithinBoundsOverManyDraws() {
        let draws = SeededDraws(seed: 99)
        var m = R(random: { draws.draw($0) })
        var now = 0.0
        _ = m.handle(.start(now: now))
        var sawShortened = false
        for i in 1...400 {
            now += 1
            let actions = m.handle(.timeout(now: now))
            guard case .schedule(let at)? = actions.first else {
                Issue.record("expected a schedule, got \(actions)")
                return
            }
            let nominal = m.nominalBackoff(failures: i)
            let delay = at - now
            #expect(delay <= nominal && delay >= nominal * 0.8 - 1e-9)
            #expect(delay <= 300)
            if delay < nominal { sawShortened = true }
            now = at
            _ = m.handle(.timerFired(now: now))
        }
        #expect(sawShortened)
    }

    @Test func transportErrorCountsAs503() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(
            m.handle(.transportError(now: 0)) == [
                .schedule(at: 5), .stateChanged(.failed(lastStatus: 503, retryAt: 5))
            ])
        #expect(m.lastStatus == 503)
    }

    @Test func successResetsTheBackoff() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        _ = m.handle(.timeout(now: 1))
        _ = m.handle(.timerFired(now: 6))
        _ = m.handle(.timeout(now: 7))
        #expect(m.consecutiveFailures == 2)
        _ = m.handle(.timerFired(now: 17))
        _ = m.handle(.response(now: 18, status: 200, grantedExpires: 600))
        #expect(m.consecutiveFailures == 0)
        _ = m.handle(.timerFired(now: 17 + 540))
        #expect(
            m.handle(.response(now: 560, status: 500)) == [
                .schedule(at: 565), .stateChanged(.failed(lastStatus: 500, retryAt: 565))
            ])
    }

    @Test func provisionalAndStrayResponsesAreIgnored() {
        var m = noJitter()
        #expect(m.handle(.response(now: 0, status: 200)) == [])
        _ = m.handle(.start(now: 0))
        #expect(m.handle(.response(now: 0.5, status: 100)) == [])
        #expect(m.requestInFlight)
        #expect(m.handle(.start(now: 1)) == [])
    }

    @Test func stopUnregistersALiveBinding() {
        var m = noJitter()
        registered(&m)
        #expect(
            m.handle(.stop(now: 100)) == [
                .cancelTimer, .sendRegister(expires: 0, authenticate: false), .stateChanged(.unregistering)
            ])
        #expect(m.handle(.response(now: 100.5, status: 401)) == [.sendRegister(expires: 0, authenticate: true)])
        #expect(m.handle(.response(now: 101, status: 200)) == [.stateChanged(.unregistered)])
        #expect(m.bindingUntil == nil)
        #expect(m.handle(.timerFired(now: 3240)) == [])
    }

    @Test func unregisterEndsOnTimeoutOrFailure() {
        var m = noJitter()
        registered(&m)
        _ = m.handle(.stop(now: 100))
        #expect(m.handle(.timeout(now: 132)) == [.stateChanged(.unregistered)])

        var n = noJitter()
        registered(&n)
        _ = n.handle(.stop(now: 100))
        #expect(n.handle(.response(now: 101, status: 403)) == [.stateChanged(.unregistered)])
    }

    @Test func stopWithoutBindingGoesIdleAtOnce() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        _ = m.handle(.response(now: 1, status: 403))
        #expect(m.handle(.stop(now: 2)) == [.cancelTimer, .stateChanged(.unregistered)])
        #expect(m.handle(.stop(now: 3)) == [])
    }

    @Test func stopDuringARegisterWaitsForItsOutcome() {
        var m = noJitter()
        _ = m.handle(.start(now: 0))
        #expect(m.handle(.stop(now: 0.5)) == [.stateChanged(.unregistering)])
        // The REGISTER succeeded after all: remove the binding it created.
        #expect(
            m.handle(.response(now: 1, status: 200, grantedExpires: 3600)) == [
                .sendRegister(expires: 0, authenticate: false)
            ])
        #expect(m.handle(.response(now: 2, status: 200)) == [.stateChanged(.unregistered)])

        var n = noJitter()
        _ = n.handle(.start(now: 0))
        _ = n.handle(.stop(now: 0.5))
        #expect(n.handle(.response(now: 1, status: 401)) == [.stateChanged(.unregistered)])

        // A lost REGISTER may have registered: unregister to be sure.
        var o = noJitter()
        _ = o.handle(.start(now: 0))
        _ = o.handle(.stop(now: 0.5))
        #expect(
            o.handle(.timeout(now: 32)) == [
                .sendRegister(expires: 0, authenticate: false)
            ])
    }

    @Test func stopDuringAFailedRefreshStillUnregisters() {
        var m = noJitter()
        registered(&m)
        _ = m.handle(.timerFired(now: 3240))
        _ = m.handle(.timeout(now: 3272))
        #expect(m.state == .failed(lastStatus: 408, retryAt: 3277))
        #expect(
            m.handle(.stop(now: 3273)) == [
                .cancelTimer, .sendRegister(expires: 0, authenticate: false), .stateChanged(.unregistering)
            ])
    }

    @Test func startDuringUnregisterRegistersAgainAfterwards() {
        var m = noJitter()
        registered(&m)
        _ = m.handle(.stop(now: 100))
        #expect(m.handle(.start(now: 100.5)) == [])
        #expect(
            m.handle(.response(now: 101, status: 200)) == [
                .stateChanged(.unregistered),
                .sendRegister(expires: 3600, authenticate: false), .stateChanged(.registering)
            ])
    }
}
