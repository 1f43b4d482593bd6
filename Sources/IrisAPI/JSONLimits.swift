// Foundation's JSON parser recurses once per nesting level: an 800-byte body of 400 nested
// arrays overflows a worker thread's stack and kills the process. Every JSON body from
// outside is therefore measured here first, with a loop and no recursion, and refused when
// it is too big or too deep, before any decoder sees it.

/// Size and nesting bounds for a JSON text read from outside the process.
public struct JSONLimits: Sendable, Equatable {
    /// The most bytes accepted. Default 65,536 (the API's request body limit).
    public var maxBytes: Int
    /// The most arrays and objects open at once. Default 32: the API's deepest type nests
    /// three levels, and 32 is far below what any decoder's stack can take.
    public var maxDepth: Int

    public init(maxBytes: Int = 65_536, maxDepth: Int = 32) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    /// The limits of the control API's request bodies.
    public static let api = JSONLimits()

    /// Throws when `bytes` is longer than `maxBytes` or opens more than `maxDepth` arrays or
    /// objects at once. Brackets inside strings (escapes included) do not count. Says nothing
    /// about validity otherwise: the decoder still judges the syntax.
    public func check<Bytes: Collection>(_ bytes: Bytes) throws(JSONLimitError) where Bytes.Element == UInt8 {
        guard bytes.count <= maxBytes else { throw .tooLarge(bytes: bytes.count, limit: maxBytes) }
        // Only UTF-8 is measured: JSONDecoder also takes UTF-16 and UTF-32 without a byte
        // order mark, whose code units would hide brackets from this count. Such text always
        // holds a NUL byte next to its ASCII; JSON in UTF-8 never does (found by fuzz-api).
        if bytes.contains(0) { throw .notUTF8 }
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maxDepth { throw .tooDeep(limit: maxDepth) }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
    }
}

/// Why a JSON text was refused before decoding.
public enum JSONLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int, limit: Int)
    case tooDeep(limit: Int)
    /// A NUL byte: not UTF-8 JSON (UTF-16 or UTF-32, or binary).
    case notUTF8

    /// The `what` label of the refusal in `/metrics`.
    public var metricLabel: String {
        switch self {
        case .tooLarge: return "json_too_large"
        case .tooDeep: return "json_too_deep"
        case .notUTF8: return "json_not_utf8"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): return "the JSON is \(bytes) bytes, more than the \(limit) allowed"
        case .tooDeep(let limit): return "the JSON nests arrays or objects deeper than \(limit) levels"
        case .notUTF8: return "the body is not UTF-8 JSON (it holds a NUL byte)"
        }
    }
}
