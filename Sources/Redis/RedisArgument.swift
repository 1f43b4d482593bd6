/// One argument of a command, sent as a RESP bulk string: any bytes (binary-safe), written
/// from a string's UTF-8 or an integer's decimal digits. String and integer literals work
/// as arguments: `["SET", "key", 42]`, `["BLPOP", "list", 0.5]`.
public struct RedisArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    /// The bytes sent.
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ text: String) { self.bytes = Array(text.utf8) }
    public init(_ value: Int) { self.bytes = Array(String(value).utf8) }
    /// Seconds or milliseconds with a fraction (BLPOP's timeout), in plain decimal.
    public init(_ value: Double) { self.bytes = Array(String(value).utf8) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }

    /// A command in RESP framing: an array of bulk strings (`*N\r\n$len\r\n<bytes>\r\n...`),
    /// the one form a server accepts from clients.
    public static func encode(_ command: [RedisArgument]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(command.reduce(16) { $0 + $1.bytes.count + 16 })
        out.append(UInt8(ascii: "*"))
        out.append(contentsOf: String(command.count).utf8)
        out.append(contentsOf: crlf)
        for argument in command {
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(argument.bytes.count).utf8)
            out.append(contentsOf: crlf)
            out.append(contentsOf: argument.bytes)
            out.append(contentsOf: crlf)
        }
        return out
    }

    private static let crlf: [UInt8] = [13, 10]
}
