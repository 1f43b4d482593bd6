/// A field's value in a JSON line. Write strings as literals or interpolations
/// (`["roomId": "\(id)"]`); bytes from the wire with `LogValue(bytes:)`.
public enum LogValue: Sendable, Equatable, ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral
{
    case string(String)
    case int(Int)
    /// Written as a JSON number; NaN and the infinities, which JSON has not, as `null`.
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }

    /// Bytes that should be UTF-8 but may not be (a header off the wire): each invalid
    /// sequence becomes U+FFFD, so the line stays valid UTF-8.
    public init(bytes: some Collection<UInt8>) {
        self = .string(String(decoding: bytes, as: UTF8.self))
    }
}

/// One named value of a line, after the fixed keys.
public struct LogField: Sendable, Equatable {
    public var key: String
    public var value: LogValue

    public init(_ key: String, _ value: LogValue) {
        self.key = key
        self.value = value
    }
}
