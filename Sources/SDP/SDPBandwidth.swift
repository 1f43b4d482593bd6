/// `b=`: a proposed bandwidth, in kilobits per second for "AS" and "CT".
///
/// ```
/// bandwidth-field = %s"b" "=" bwtype ":" bandwidth CRLF
/// ```
public struct SDPBandwidth: Sendable, Equatable {
    /// The modifier: "AS", "CT", "TIAS", "RS", "RR", ...
    public var type: String
    /// The value, in the unit the modifier defines.
    public var bandwidth: UInt64

    /// A bandwidth line with the given modifier and value.
    public init(type: String, bandwidth: UInt64) {
        self.type = type
        self.bandwidth = bandwidth
    }

    /// Parses the value of a `b=` line (without "b=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPBandwidth {
        guard let colon = value.firstIndex(of: ":"), colon != value.startIndex else {
            throw SDPError(line: line, reason: "b= must be <bwtype>:<bandwidth>")
        }
        let amount = String(value[value.index(after: colon)...])
        guard let bandwidth = sdpDecimal(amount) else {
            throw SDPError(line: line, reason: "b= bandwidth '\(amount)' is not a number")
        }
        return SDPBandwidth(type: String(value[..<colon]), bandwidth: bandwidth)
    }

    /// The value of the `b=` line (without "b=").
    public func serialize() -> String { "\(type):\(bandwidth)" }
}
