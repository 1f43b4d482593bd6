/// `t=`: start and stop times as NTP seconds; 0 0 means a permanent session, as SIP uses.
///
/// ```
/// time-field = %s"t" "=" start-time SP stop-time
/// ```
public struct SDPTiming: Sendable, Equatable {
    /// NTP start time, or 0.
    public var start: UInt64
    /// NTP stop time, or 0 for unbounded.
    public var stop: UInt64

    /// Timing with the given bounds; "0 0" (unbounded) by default.
    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }

    /// Parses the value of a `t=` line (without "t=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPTiming {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 2, let start = sdpDecimal(parts[0]), let stop = sdpDecimal(parts[1]) else {
            throw SDPError(line: line, reason: "t= must be two numbers <start-time> <stop-time>")
        }
        return SDPTiming(start: start, stop: stop)
    }

    /// The value of the `t=` line (without "t=").
    public func serialize() -> String { "\(start) \(stop)" }
}
