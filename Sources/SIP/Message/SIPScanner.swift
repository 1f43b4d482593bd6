/// A cursor over the bytes of one header value, with the RFC 3261 §25.1 lexical helpers
/// (LWS, token, quoted-string, SEMI/COMMA separators) that every header parser shares.
struct SIPScanner {
    let bytes: [UInt8]
    var index: Int = 0

    init(_ text: String) { self.bytes = Array(text.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
    var rest: String { String(decoding: bytes[min(index, bytes.count)...], as: UTF8.self) }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
    }

    /// Consumes `byte` (with optional whitespace around it, as SWS allows).
    mutating func consume(_ byte: UInt8) -> Bool {
        let save = index
        skipWhitespace()
        if peek == byte {
            index += 1
            skipWhitespace()
            return true
        }
        index = save
        return false
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(SIPParseError) {
        guard consume(byte) else { throw .init(400, "expected \(what)") }
    }

    /// token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~")
    mutating func token() -> String? {
        let start = index
        while index < bytes.count, SIPScanner.isTokenChar(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    mutating func requireToken(_ what: String) throws(SIPParseError) -> String {
        guard let t = token() else { throw .init(400, "expected \(what)") }
        return t
    }

    /// quoted-string = SWS DQUOTE *(qdtext / quoted-pair) DQUOTE; returns the unescaped content.
    mutating func quotedString() throws(SIPParseError) -> String {
        guard peek == 0x22 else { throw .init(400, "expected a quoted string") }
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let b = bytes[index]
            if b == 0x22 {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b == 0x5C {
                guard index + 1 < bytes.count else { break }
                out.append(bytes[index + 1])
                index += 2
                continue
            }
            out.append(b)
            index += 1
        }
        throw .init(400, "unterminated quoted string")
    }

    /// Reads bytes up to (not including) any of `stops`, outside quotes and angle brackets.
    mutating func upTo(_ stops: [UInt8]) -> String {
        let start = index
        var inQuote = false
        var angle = 0
        while index < bytes.count {
            let b = bytes[index]
            if inQuote {
                if b == 0x5C { index += 2; continue }
                if b == 0x22 { inQuote = false }
            } else if b == 0x22 {
                inQuote = true
            } else if b == 0x3C {
                angle += 1
            } else if b == 0x3E {
                angle = max(0, angle - 1)
            } else if angle == 0, stops.contains(b) {
                break
            }
            index += 1
        }
        index = min(index, bytes.count)
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// generic-param = token [ EQUAL gen-value ]; gen-value = token / host / quoted-string.
    /// Reads `*( SEMI generic-param )` until a byte in `stops` (outside quotes) or the end.
    mutating func parameters(until stops: [UInt8] = []) throws(SIPParseError) -> [SIPParameter] {
        var params: [SIPParameter] = []
        while true {
            skipWhitespace()
            guard peek == 0x3B else { break }
            index += 1
            skipWhitespace()
            guard let name = token() else { throw .init(400, "empty parameter") }
            skipWhitespace()
            var value: String? = nil
            if peek == 0x3D {
                index += 1
                skipWhitespace()
                if peek == 0x22 {
                    value = "\"" + SIPScanner.escapeQuoted(try quotedString()) + "\""
                } else {
                    let start = index
                    // host values may be bracketed IPv6 references ([2001:db8::1]).
                    while index < bytes.count {
                        let b = bytes[index]
                        if SIPScanner.isTokenChar(b) || b == 0x3A || b == 0x5B || b == 0x5D {
                            index += 1
                        } else {
                            break
                        }
                    }
                    guard index > start else { throw .init(400, "empty value for parameter \(name)") }
                    value = String(decoding: bytes[start..<index], as: UTF8.self)
                }
            }
            params.append(SIPParameter(name, value))
            skipWhitespace()
            if let b = peek, b != 0x3B, !stops.contains(b) {
                throw .init(400, "unexpected character after parameter \(name)")
            }
        }
        return params
    }

    /// A control byte no SIP start line may hold, nor a header outside a quoted-pair:
    /// %x00-08, %x0A-1F and DEL (RFC 3261 §25.1: TEXT-UTF8char, LWS and UTF8-CONT exclude
    /// them; HTAB is LWS).
    static func isForbiddenControl(_ b: UInt8) -> Bool { (b < 0x20 && b != 0x09) || b == 0x7F }

    /// The first control byte of a header line that the grammar does not allow there. Inside
    /// a quoted-string, `quoted-pair = "\" (%x00-09 / %x0B-0C / %x0E-7F)` may escape one
    /// (RFC 4475 §3.1.1.2 has BEL, NUL and DEL escaped in a display name); CR and LF never.
    static func forbiddenControl(in line: ArraySlice<UInt8>) -> UInt8? {
        var quoted = false
        var escaped = false
        for b in line {
            if escaped {
                escaped = false
                if b == 0x0D || b == 0x0A { return b }
                continue
            }
            if quoted && b == 0x5C { escaped = true; continue }
            if b == 0x22 { quoted.toggle(); continue }
            if isForbiddenControl(b) { return b }
        }
        return nil
    }

    static func isTokenChar(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0x2D, 0x2E, 0x21, 0x25, 0x2A, 0x5F, 0x2B, 0x60, 0x27, 0x7E: return true
        default: return false
        }
    }

    static func isToken(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isTokenChar) }

    /// `s` as the inside of a quoted-string. `"` and `\` are escaped, and so are the
    /// control bytes a quoted-pair may carry (%x00-08, %x0B-0C, %x0E-1F, DEL; RFC 3261 §25.1),
    /// which no header may hold raw: a display name read from RFC 4475 §3.1.1.2's escaped
    /// BEL, NUL and DEL must be written escaped again. CR and LF, which nothing can carry,
    /// become spaces.
    static func escapeQuoted(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || isForbiddenControl($0) }) else { return s }
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars {
            switch u.value {
            case 0x0A, 0x0D:
                out.append(" ")
            case 0x22, 0x5C, 0x00...0x08, 0x0B...0x1F, 0x7F:
                out.append("\\")
                out.append(u)
            default:
                out.append(u)
            }
        }
        return String(out)
    }

    /// Splits a header value at top-level commas (outside quotes and `<>`), trimming each part.
    static func splitList(_ value: String) -> [String] {
        if !value.utf8.contains(0x2C) { return [value.trimmingSIPWhitespace()] }
        var scanner = SIPScanner(value)
        var parts: [String] = []
        while true {
            let part = scanner.upTo([0x2C])
            parts.append(part.trimmingSIPWhitespace())
            if scanner.atEnd { break }
            scanner.index += 1
        }
        return parts
    }
}

/// A `name[=value]` parameter as it appears after `;` in URIs and header fields.
/// Names compare case-insensitively; quoted values keep their quotes.
public struct SIPParameter: Sendable, Equatable {
    public var name: String
    public var value: String?
    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == SIPParameter {
    /// The value of the first parameter called `name` (case-insensitive); `.some(nil)` for a flag.
    public subscript(parameter name: String) -> String?? {
        for p in self where p.name.caseInsensitiveCompare(name) {
            return .some(p.value)
        }
        return .none
    }

    /// Sets or removes (`nil`) a parameter, keeping the position of an existing one.
    public mutating func set(_ name: String, _ value: String?, flag: Bool = false) {
        if let i = firstIndex(where: { $0.name.caseInsensitiveCompare(name) }) {
            if value == nil && !flag { remove(at: i) } else { self[i].value = value }
        } else if value != nil || flag {
            append(SIPParameter(name, value))
        }
    }

    func serialized() -> String {
        var out = ""
        for p in self {
            out += ";" + p.name
            if let v = p.value { out += "=" + v }
        }
        return out
    }
}

extension String {
    /// ASCII case-insensitive equality (header names, option tags, parameter names).
    func caseInsensitiveCompare(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
        }
    }

    func trimmingSIPWhitespace() -> String {
        let u = utf8
        guard let f = u.first, let l = u.last else { return self }
        if f != 0x20 && f != 0x09 && l != 0x20 && l != 0x09 { return self }
        guard let first = u.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
        let last = u.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })!
        return String(self[first...last])
    }
}
