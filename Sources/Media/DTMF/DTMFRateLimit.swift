/// How many received DTMF digits one leg (or one session's SIP INFO) may report, and how
/// fast: a token bucket. A person presses at most a few keys a second and the fastest machine
/// dialling in the ITU's rules (40 ms tone, 40 ms pause) is 12.5 a second; a burst of forged
/// telephone-event packets is thousands. Digits past the bucket are dropped and counted, so
/// a flood costs neither events nor session history. A plain struct: time comes in as `now`.
public struct DTMFRateLimit: Sendable, Equatable {
    /// The bucket's settings.
    public struct Configuration: Sendable, Equatable, Hashable {
        /// Digits that may come at once (a fast-dialled account number). Default 20.
        public var burst: Int
        /// Digits a second the bucket refills at. Default 10.
        public var perSecond: Double

        /// A configuration with the given settings.
        public init(burst: Int = 20, perSecond: Double = 10) {
            self.burst = max(burst, 1)
            self.perSecond = max(perSecond, 0)
        }
    }

    /// The settings in force.
    public let configuration: Configuration
    private var tokens: Double
    private var last: Double?

    /// A full bucket.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        tokens = Double(configuration.burst)
    }

    /// True when a digit arriving at `now` (seconds, monotonic) may be reported; it then
    /// takes one token.
    public mutating func allow(now: Double) -> Bool {
        if let last, now > last {
            tokens = min(Double(configuration.burst), tokens + (now - last) * configuration.perSecond)
        }
        last = max(now, last ?? now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
