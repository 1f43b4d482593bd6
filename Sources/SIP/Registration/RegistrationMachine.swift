/// A REGISTER client (RFC 3261 §10) as a plain state machine.
///
/// The SIP endpoint feeds it facts taken from responses and carries out the actions it
/// returns. It keeps at most one REGISTER transaction outstanding (RFC 3261 §10.2: no new
/// registration until the previous one got a final response or timed out) and at most one
/// timer: every `.schedule(at:)` replaces the previous one, and a `.timerFired` that arrives
/// before the current deadline (a stale timer) is ignored.
///
/// Policy, all in ``Configuration``:
/// - Refresh: at `sentAt + max(g/2, min(0.9·g, g − 30))` for a granted expiry `g`, that is the
///   earlier of 90 % of the grant and 30 s before expiry, but never earlier than half-way.
///   Times are counted from when the REGISTER was sent, since the registrar's clock starts
///   when it receives the request, not when we get the answer.
/// - Failure: retry after an exponential backoff (5, 10, 20 … s, capped at 300 s), shortened by
///   a random jitter of up to 20 % drawn from the injected generator. A `Retry-After` on the
///   failure response (typically 503) replaces the backoff and is honoured exactly.
/// - 423 Interval Too Brief with a larger `Min-Expires`: retry at once with that value, and
///   keep it for later refreshes.
/// - 401/407: answer each challenge once. A challenge right after an authenticated attempt is
///   a failure (bad credentials), unless it says `stale=true`, which earns one more
///   authenticated attempt.
/// - Transaction timeout counts as 408 and a transport error as 503 (RFC 3261 §8.1.3.1).
/// - Stop: unregister (`Expires: 0`) if a binding may still be live, else go idle at once.
public struct RegistrationMachine: Sendable {
    /// Tunables, with the defaults the gateway uses.
    public struct Configuration: Sendable, Equatable {
        /// The expiry we ask for, in seconds. Default 3600.
        public var expires: Int
        /// Fraction of the granted expiry after which to refresh. Default 0.9.
        public var refreshFraction: Double
        /// Refresh at least this many seconds before the binding expires. Default 30.
        public var refreshMargin: Double
        /// Delay after the first failure, in seconds. Default 5.
        public var initialBackoff: Double
        /// Upper bound on the backoff delay, in seconds. Default 300.
        public var maxBackoff: Double
        /// Largest fraction by which jitter shortens a backoff delay (0...1). Default 0.2.
        public var jitter: Double

        /// Creates a configuration; every argument has the documented default.
        public init(
            expires: Int = 3600,
            refreshFraction: Double = 0.9,
            refreshMargin: Double = 30,
            initialBackoff: Double = 5,
            maxBackoff: Double = 300,
            jitter: Double = 0.2
        ) {
            self.expires = max(1, expires)
            self.refreshFraction = min(max(refreshFraction, 0.5), 1)
            self.refreshMargin = max(0, refreshMargin)
            self.initialBackoff = max(0.01, initialBackoff)
            self.maxBackoff = max(self.initialBackoff, maxBackoff)
            self.jitter = min(max(jitter, 0), 1)
        }
    }

    /// Where the registration stands, for status pages and for the endpoint.
    public enum State: Sendable, Equatable {
        /// Not started, or stopped and unregistered.
        case unregistered
        /// A REGISTER is outstanding and no binding is known to be live.
        case registering
        /// The binding is live until the given monotonic time. Stays so while a refresh is
        /// in flight, since the binding is still valid.
        case registered(until: Double)
        /// The last attempt failed with `lastStatus` (408 for a timeout, 503 for a transport
        /// error); the next attempt is at `retryAt`. A failed refresh lands here too, though
        /// the old binding may live on until ``RegistrationMachine/bindingUntil``.
        case failed(lastStatus: Int, retryAt: Double)
        /// An unregister (`Expires: 0`) is outstanding or about to be sent.
        case unregistering
    }

    /// What the endpoint tells the machine.
    public enum Event: Sendable, Equatable {
        /// Begin registering.
        case start(now: Double)
        /// A response to the outstanding REGISTER. 1xx are ignored.
        /// - grantedExpires: the expiry the registrar granted for our contact (Contact
        ///   `expires` parameter, else the `Expires` header); nil when absent.
        /// - minExpires: the `Min-Expires` header of a 423.
        /// - retryAfter: the `Retry-After` header, in seconds.
        /// - stale: the challenge of a 401/407 carried `stale=true`.
        case response(
            now: Double, status: Int, grantedExpires: Int? = nil, minExpires: Int? = nil,
            retryAfter: Int? = nil, stale: Bool = false)
        /// The REGISTER transaction timed out (Timer F).
        case timeout(now: Double)
        /// The REGISTER could not be sent.
        case transportError(now: Double)
        /// The timer last asked for with `.schedule(at:)` fired.
        case timerFired(now: Double)
        /// Stop registering and remove the binding.
        case stop(now: Double)
        /// Stop refreshing and leave the binding as it is: another registrant of the same
        /// contact (a node of the same cluster) keeps it from now on. An answer still to come
        /// is ignored.
        case handOver
    }

    /// What the machine asks the endpoint to do, in order.
    public enum Action: Sendable, Equatable {
        /// Send a new REGISTER with this `Expires`. With `authenticate`, add credentials that
        /// answer the challenge (401/407) just received.
        case sendRegister(expires: Int, authenticate: Bool)
        /// Arm the machine's single timer for this monotonic time, replacing any earlier one.
        case schedule(at: Double)
        /// Disarm the timer.
        case cancelTimer
        /// The state changed to this value.
        case stateChanged(State)
    }

    private enum Kind: Sendable { case register, unregister }

    private struct Pending: Sendable {
        var kind: Kind
        var expires: Int
        var authenticated: Bool
        var staleRetried: Bool
        var sentAt: Double
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The current state.
    public private(set) var state: State = .unregistered
    /// The expiry asked for in REGISTER; raised by 423 Min-Expires.
    public private(set) var requestedExpires: Int
    /// Failures since the last success; drives the backoff.
    public private(set) var consecutiveFailures = 0
    /// Status of the last final response (408/503 for timeout/transport error), if any.
    public private(set) var lastStatus: Int?
    /// When the armed timer is due, if one is armed.
    public private(set) var timerDeadline: Double?
    /// Until when a binding may be live at the registrar, as far as we know.
    public private(set) var bindingUntil: Double?

    private var pending: Pending?
    private var running = false
    private var stopRequested = false
    private var restartRequested = false
    private let random: @Sendable (ClosedRange<Int>) -> Int

    /// Creates an idle machine.
    /// - Parameter random: picks an integer in a range, for backoff jitter. Inject a
    ///   deterministic one in tests.
    public init(
        configuration: Configuration = Configuration(),
        random: @escaping @Sendable (ClosedRange<Int>) -> Int = { Int.random(in: $0) }
    ) {
        self.configuration = configuration
        self.requestedExpires = configuration.expires
        self.random = random
    }

    /// True while a REGISTER (or unregister) transaction is outstanding.
    public var requestInFlight: Bool { pending != nil }

    /// Seconds after sending a REGISTER at which to refresh a binding granted for `granted` s.
    public func refreshDelay(granted: Int) -> Double {
        let g = Double(granted)
        return max(g / 2, min(g * configuration.refreshFraction, g - configuration.refreshMargin))
    }

    /// The backoff before jitter after `failures` consecutive failures:
    /// `initialBackoff · 2^(failures−1)`, capped at `maxBackoff`.
    public func nominalBackoff(failures: Int) -> Double {
        var delay = configuration.initialBackoff
        var n = 1
        while n < failures && delay < configuration.maxBackoff {
            delay *= 2
            n += 1
        }
        return min(delay, configuration.maxBackoff)
    }

    /// Feeds one event; returns the actions to carry out, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let now):
            return start(now: now)
        case let .response(now, status, granted, minExpires, retryAfter, stale):
            return response(
                now: now, status: status, granted: granted, minExpires: minExpires,
                retryAfter: retryAfter, stale: stale)
        case .timeout(let now):
            return transactionFailed(now: now, status: 408)
        case .transportError(let now):
            return transactionFailed(now: now, status: 503)
        case .timerFired(let now):
            return timerFired(now: now)
        case .stop(let now):
            return stop(now: now)
        case .handOver:
            guard running || pending != nil else { return [] }
            running = false
            pending = nil
            stopRequested = false
            restartRequested = false
            return cancelTimer() + setState(.unregistered)
        }
    }

    // MARK: - Event handlers

    private mutating func start(now: Double) -> [Action] {
        if state == .unregistering {
            restartRequested = true
            return []
        }
        guard !running else { return [] }
        running = true
        var actions = sendRegister(now: now, expires: requestedExpires, authenticated: false)
        actions += setState(.registering)
        return actions
    }

    private mutating func response(
        now: Double, status: Int, granted: Int?, minExpires: Int?, retryAfter: Int?, stale: Bool
    ) -> [Action] {
        guard let sent = pending, status >= 200 else { return [] }
        pending = nil
        lastStatus = status
        let challenged = status == 401 || status == 407

        if sent.kind == .unregister {
            if challenged, let retry = authenticatedRetry(after: sent, stale: stale, now: now) {
                return retry
            }
            return finishUnregister(now: now)
        }

        if stopRequested {
            if (200..<300).contains(status) {
                bindingUntil = sent.sentAt + Double(granted ?? sent.expires)
            }
            return unregisterOrFinish(now: now)
        }

        switch status {
        case 200..<300:
            let g = granted ?? sent.expires
            // A grant of 0 to a registration means the registrar dropped our binding.
            guard g > 0 else { return fail(now: now, status: status, retryAfter: retryAfter) }
            return succeed(now: now, granted: g, sentAt: sent.sentAt)
        case 401, 407:
            if let retry = authenticatedRetry(after: sent, stale: stale, now: now) { return retry }
            return fail(now: now, status: status, retryAfter: retryAfter)
        case 423:
            if let m = minExpires, m > sent.expires {
                requestedExpires = m
                return sendRegister(now: now, expires: m, authenticated: false)
            }
            return fail(now: now, status: status, retryAfter: retryAfter)
        default:
            return fail(now: now, status: status, retryAfter: retryAfter)
        }
    }

    private mutating func transactionFailed(now: Double, status: Int) -> [Action] {
        guard let sent = pending else { return [] }
        pending = nil
        lastStatus = status
        if sent.kind == .unregister { return finishUnregister(now: now) }
        // The lost REGISTER may have created a binding: clear it before going idle.
        if stopRequested { return sendUnregister(now: now) }
        return fail(now: now, status: status, retryAfter: nil)
    }

    private mutating func timerFired(now: Double) -> [Action] {
        // Tolerate a timer that fires a hair early through floating-point rounding.
        guard let deadline = timerDeadline, now + 0.001 >= deadline, pending == nil else {
            return []
        }
        timerDeadline = nil
        switch state {
        case .registered:
            return sendRegister(now: now, expires: requestedExpires, authenticated: false)
        case .failed:
            return sendRegister(now: now, expires: requestedExpires, authenticated: false)
                + setState(.registering)
        default:
            return []
        }
    }

    private mutating func stop(now: Double) -> [Action] {
        restartRequested = false
        guard running else { return [] }
        running = false
        var actions = cancelTimer()
        if let sent = pending {
            // Wait for the outstanding REGISTER to finish (RFC 3261 §10.2), then unregister.
            if sent.kind == .register { stopRequested = true }
            actions += setState(.unregistering)
            return actions
        }
        return actions + unregisterOrFinish(now: now)
    }

    // MARK: - Steps

    private mutating func succeed(now: Double, granted: Int, sentAt: Double) -> [Action] {
        consecutiveFailures = 0
        let until = sentAt + Double(granted)
        bindingUntil = until
        let refreshAt = max(now, sentAt + refreshDelay(granted: granted))
        return schedule(at: refreshAt) + setState(.registered(until: until))
    }

    private mutating func fail(now: Double, status: Int, retryAfter: Int?) -> [Action] {
        consecutiveFailures += 1
        let delay: Double
        if let retryAfter, retryAfter > 0 {
            delay = Double(retryAfter)
        } else {
            delay = jittered(nominalBackoff(failures: consecutiveFailures))
        }
        let retryAt = now + delay
        return schedule(at: retryAt) + setState(.failed(lastStatus: status, retryAt: retryAt))
    }

    /// One authenticated retry per challenge; a stale nonce earns one more.
    private mutating func authenticatedRetry(
        after sent: Pending, stale: Bool, now: Double
    )
        -> [Action]?
    {
        if !sent.authenticated {
            return send(
                kind: sent.kind, now: now, expires: sent.expires, authenticated: true,
                staleRetried: false)
        }
        if stale && !sent.staleRetried {
            return send(
                kind: sent.kind, now: now, expires: sent.expires, authenticated: true,
                staleRetried: true)
        }
        return nil
    }

    private mutating func unregisterOrFinish(now: Double) -> [Action] {
        if let until = bindingUntil, until > now { return sendUnregister(now: now) }
        return finishUnregister(now: now)
    }

    private mutating func sendUnregister(now: Double) -> [Action] {
        stopRequested = false
        return send(
            kind: .unregister, now: now, expires: 0, authenticated: false,
            staleRetried: false) + setState(.unregistering)
    }

    private mutating func finishUnregister(now: Double) -> [Action] {
        stopRequested = false
        bindingUntil = nil
        consecutiveFailures = 0
        var actions = cancelTimer() + setState(.unregistered)
        if restartRequested {
            restartRequested = false
            actions += start(now: now)
        }
        return actions
    }

    private mutating func sendRegister(now: Double, expires: Int, authenticated: Bool) -> [Action] {
        send(
            kind: .register, now: now, expires: expires, authenticated: authenticated,
            staleRetried: false)
    }

    private mutating func send(
        kind: Kind, now: Double, expires: Int, authenticated: Bool, staleRetried: Bool
    ) -> [Action] {
        pending = Pending(
            kind: kind, expires: expires, authenticated: authenticated,
            staleRetried: staleRetried, sentAt: now)
        return [.sendRegister(expires: expires, authenticate: authenticated)]
    }

    private mutating func schedule(at time: Double) -> [Action] {
        timerDeadline = time
        return [.schedule(at: time)]
    }

    private mutating func cancelTimer() -> [Action] {
        guard timerDeadline != nil else { return [] }
        timerDeadline = nil
        return [.cancelTimer]
    }

    private mutating func setState(_ new: State) -> [Action] {
        guard new != state else { return [] }
        state = new
        return [.stateChanged(new)]
    }

    /// Shortens `nominal` by a random amount of up to `jitter · nominal`, in whole
    /// milliseconds, so the cap is never exceeded and peers restarting together spread out.
    private func jittered(_ nominal: Double) -> Double {
        let spanMs = Int((nominal * configuration.jitter * 1000).rounded(.down))
        guard spanMs > 0 else { return nominal }
        let drawn = min(max(random(0...spanMs), 0), spanMs)
        return nominal - Double(drawn) / 1000
    }
}
