/// One reply from a Redis server, as RESP2 types it: what `RedisClient` hands back. Bulk
/// strings stay bytes (binary-safe); the accessors convert where it is unambiguous.
public enum RedisValue: Sendable, Hashable, CustomStringConvertible {
    /// `+OK`: a status reply.
    case simpleString(String)
    /// `-ERR ...`: an error reply. At the top of a reply `RedisClient` turns it into
    /// `RedisError.server`; inside an array (EXEC, a script's table) it stays a value.
    case error(String)
    /// `:42`.
    case integer(Int)
    /// `$3\r\nabc`: a bulk string, any bytes.
    case bulk([UInt8])
    /// `$-1` or `*-1`: a missing key, a BLPOP that timed out.
    case null
    /// `*2\r\n...`: nested replies (LRANGE, XRANGE's entries and their fields).
    case array([RedisValue])

    /// A status or a bulk string as text (bulk bytes must be UTF-8); nil otherwise.
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulk(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// An integer reply, or a status or bulk string holding a decimal integer (GET of a
    /// counter); nil otherwise.
    public var int: Int? {
        switch self {
        case .integer(let value): value
        case .simpleString, .bulk: string.flatMap { Int($0) }
        default: nil
        }
    }

    /// A bulk string's bytes, or a status's UTF-8; nil otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    /// An array's elements; nil otherwise (a null array is `.null`).
    public var array: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// `.null`.
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .simpleString(let text): "+\(text)"
        case .error(let message): "-\(message)"
        case .integer(let value): ":\(value)"
        case .bulk(let bytes): string.map { "\"\($0)\"" } ?? "<\(bytes.count) bytes>"
        case .null: "(nil)"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
