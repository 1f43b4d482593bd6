/// OPTIONS keepalive for one trunk proxy, as a plain state machine.
///
/// Sends an OPTIONS, waits for its outcome, then pings again `interval` seconds after the
/// outcome (not after the send), so a slow transaction (Timer F is 32 s, longer than the
/// default interval) never overlaps the next ping.
///
/// What counts as alive: any final response shows the proxy's SIP stack is running and
/// routing to us, including 4xx such as 404 or 405 (many proxies refuse OPTIONS addressed to
/// themselves), except the statuses in ``Configuration/deadStatuses``: 408 (the request went
/// unanswered) and 503 (overloaded or unreachable, also what a transport error maps to per
/// RFC 3261 §8.1.3.1). A transaction timeout or transport error is a failure. 1xx are ignored.
///
/// Hysteresis: `down` after ``Configuration/failuresToDown`` consecutive failures (default 2,
/// so one lost UDP datagram does not take a trunk out), `up` after
/// ``Configuration/successesToUp`` consecutive successes (default 1, so a trunk returns at
/// once). Until either threshold is first met the state is `unknown`.
public struct OptionsKeepalive: Sendable {
    /// Tunables, with the defaults the gateway uses.
    public struct Configuration: Sendable, Equatable {
        /// Seconds between the outcome of one ping and the next ping. Default 30.
        public var interval: Double
        /// Consecutive failures that mark the proxy down. Default 2.
        public var failuresToDown: Int
        /// Consecutive successes that mark the proxy up. Default 1.
        public var successesToUp: Int
        /// Final statuses that count as failures. Default [408, 503].
        public var deadStatuses: Set<Int>

        /// Creates a configuration; every argument has the documented default.
        public init(
            interval: Double = 30,
            failuresToDown: Int = 2,
            successesToUp: Int = 1,
            deadStatuses: Set<Int> = [408, 503]
        ) {
            self.interval = max(0.01, interval)
            self.failuresToDown = max(1, failuresToDown)
            self.successesToUp = max(1, successesToUp)
            self.deadStatuses = deadStatuses
        }
    }

    /// Reachability of the proxy.
    public enum State: Sendable, Equatable {
        /// Not started, stopped, or not enough evidence yet.
        case unknown
        /// The proxy answers.
        case up
        /// The proxy stopped answering.
        case down
    }

    /// What the endpoint tells the machine.
    public enum Event: Sendable, Equatable {
        /// Begin pinging; the first OPTIONS goes out at once.
        case start(now: Double)
        /// A response to the outstanding OPTIONS.
        case response(status: Int, now: Double)
        /// The OPTIONS transaction timed out (Timer F).
        case timeout(now: Double)
        /// The OPTIONS could not be sent.
        case transportError(now: Double)
        /// The timer last asked for with `.schedule(at:)` fired.
        case timerFired(now: Double)
        /// Stop pinging; the state returns to `unknown`.
        case stop
    }

    /// What the machine asks the endpoint to do, in order.
    public enum Action: Sendable, Equatable {
        /// Send an OPTIONS to the proxy.
        case sendOptions
        /// Arm the machine's single timer for this monotonic time, replacing any earlier one.
        case schedule(at: Double)
        /// Disarm the timer.
        case cancelTimer
        /// The state changed to this value.
        case stateChanged(State)
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The current reachability.
    public private(set) var state: State = .unknown
    /// Failures since the last success.
    public private(set) var consecutiveFailures = 0
    /// Successes since the last failure.
    public private(set) var consecutiveSuccesses = 0
    /// Status of the last final response (nil after a timeout or transport error).
    public private(set) var lastStatus: Int?
    /// Seconds from sending the last answered OPTIONS to its final response.
    public private(set) var lastRoundTrip: Double?
    /// When the outstanding OPTIONS was sent; nil when none is outstanding.
    public private(set) var sentAt: Double?
    /// When the armed timer is due, if one is armed.
    public private(set) var timerDeadline: Double?

    private var running = false

    /// Creates a stopped machine in state `unknown`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether a final response with this status shows the proxy is alive.
    public func countsAsAlive(status: Int) -> Bool {
        status >= 200 && !configuration.deadStatuses.contains(status)
    }

    /// Feeds one event; returns the actions to carry out, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let now):
            guard !running else { return [] }
            running = true
            return ping(now: now)
        case let .response(status, now):
            guard sentAt != nil, status >= 200 else { return [] }
            if let sent = sentAt { lastRoundTrip = now - sent }
            lastStatus = status
            return outcome(alive: countsAsAlive(status: status), now: now)
        case .timeout(let now), .transportError(let now):
            guard sentAt != nil else { return [] }
            lastStatus = nil
            return outcome(alive: false, now: now)
        case .timerFired(let now):
            guard running, sentAt == nil, let deadline = timerDeadline, now + 0.001 >= deadline
            else { return [] }
            timerDeadline = nil
            return ping(now: now)
        case .stop:
            guard running else { return [] }
            running = false
            sentAt = nil
            consecutiveFailures = 0
            consecutiveSuccesses = 0
            var actions: [Action] = []
            if timerDeadline != nil {
                timerDeadline = nil
                actions.append(.cancelTimer)
            }
            return actions + setState(.unknown)
        }
    }

    private mutating func ping(now: Double) -> [Action] {
        sentAt = now
        return [.sendOptions]
    }

    private mutating func outcome(alive: Bool, now: Double) -> [Action] {
        sentAt = nil
        var actions: [Action] = []
        if alive {
            consecutiveSuccesses += 1
            consecutiveFailures = 0
            if consecutiveSuccesses >= configuration.successesToUp { actions += setState(.up) }
        } else {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
            if consecutiveFailures >= configuration.failuresToDown { actions += setState(.down) }
        }
        let next = now + configuration.interval
        timerDeadline = next
        return [.schedule(at: next)] + actions
    }

    private mutating func setState(_ new: State) -> [Action] {
        guard new != state else { return [] }
        state = new
        return [.stateChanged(new)]
    }
}
