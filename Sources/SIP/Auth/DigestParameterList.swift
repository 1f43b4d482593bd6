/// The `auth-param` list shared by challenges and credentials (RFC 3261 §25.1, RFC 7235 §2.1):
///
/// ```
/// challenge    = "Digest" LWS digest-cln *(COMMA digest-cln)
/// auth-param   = auth-param-name EQUAL ( token / quoted-string )
/// quoted-string = SWS DQUOTE *(qdtext / quoted-pair ) DQUOTE
/// quoted-pair  = "\" (%x00-09 / %x0B-0C / %x0E-7F)
/// COMMA        = SWS "," SWS
/// ```
/// LWS (spaces, tabs, folded lines) may appear around every `=` and `,`; empty list elements
/// are skipped, as the `#rule` allows. Names are compared case-insensitively.
struct DigestParameterList {
    /// One parsed `name=value`; `name` is lowercased, `value` is unquoted and unescaped.
    struct Parameter {
        var name: String
        var value: String
    }

    var parameters: [Parameter] = []

    /// Parses `headerValue`, which must start with the `Digest` scheme.
    static func parse(_ headerValue: String) throws(DigestError) -> DigestParameterList {
        var scanner = Scanner(bytes: Array(headerValue.utf8))
        scanner.skipWhitespace()
        let scheme = scanner.readToken()
        if scheme.isEmpty {
            throw DigestError(.malformed, scanner.atEnd ? "empty header" : "missing auth scheme")
        }
        guard scheme.lowercased() == "digest" else {
            throw DigestError(.notDigestScheme, scheme)
        }
        if !scanner.atEnd && !scanner.skipWhitespace() {
            throw DigestError(.malformed, "no whitespace after scheme")
        }

        var list = DigestParameterList()
        while true {
            // Empty elements and surrounding whitespace: `Digest , realm="x",, nonce="y"`.
            while true {
                scanner.skipWhitespace()
                guard scanner.peek == UInt8(ascii: ",") else { break }
                scanner.advance()
            }
            if scanner.atEnd { break }

            let name = scanner.readToken()
            guard !name.isEmpty else {
                throw DigestError(
                    .malformed, "expected a parameter name at offset \(scanner.offset)")
            }
            scanner.skipWhitespace()
            guard scanner.peek == UInt8(ascii: "=") else {
                throw DigestError(.malformed, "parameter \(name) has no '='")
            }
            scanner.advance()
            scanner.skipWhitespace()

            let value: String
            if scanner.peek == UInt8(ascii: "\"") {
                guard let text = scanner.readQuotedString() else {
                    throw DigestError(.malformed, "unterminated quoted value of \(name)")
                }
                value = text
            } else {
                value = scanner.readBareValue()
                guard !value.isEmpty else {
                    throw DigestError(.malformed, "parameter \(name) has an empty value")
                }
            }
            list.parameters.append(Parameter(name: name.lowercased(), value: value))

            scanner.skipWhitespace()
            if scanner.atEnd { break }
            guard scanner.peek == UInt8(ascii: ",") else {
                throw DigestError(.malformed, "expected ',' after parameter \(name)")
            }
        }
        return list
    }

    /// The value of the parameter `name` (lowercase), nil when absent.
    ///
    /// - Throws: `.duplicateParameter` when it appears more than once (RFC 7616 §3.3: each
    ///   parameter at most once), so a second value cannot silently win.
    func value(_ name: String) throws(DigestError) -> String? {
        var found: String?
        for parameter in parameters where parameter.name == name {
            if found != nil { throw DigestError(.duplicateParameter, name) }
            found = parameter.value
        }
        return found
    }

    /// Like `value(_:)`, but the parameter must be present.
    func required(_ name: String) throws(DigestError) -> String {
        guard let value = try value(name) else { throw DigestError(.missingParameter, name) }
        return value
    }

    /// Byte scanner over the header's UTF-8; never traps on any input.
    private struct Scanner {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[offset] }
        mutating func advance() { offset += 1 }

        /// Skips SP, HTAB, CR and LF (folded LWS); returns whether anything was skipped.
        @discardableResult
        mutating func skipWhitespace() -> Bool {
            let start = offset
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0d || byte == 0x0a {
                advance()
            }
            return offset > start
        }

        /// RFC 3261 `token`: alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~".
        mutating func readToken() -> String {
            let start = offset
            while let byte = peek, Self.isTokenByte(byte) { advance() }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        /// An unquoted value: a token, leniently extended to anything up to whitespace or a
        /// comma (some peers send unquoted `uri=sip:x@y` or base64 with '/' and '=').
        mutating func readBareValue() -> String {
            let start = offset
            while let byte = peek, byte > 0x20, byte != UInt8(ascii: ","),
                byte != UInt8(ascii: "\""), byte != 0x7f
            {
                advance()
            }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        /// Reads `"..."` with `\x` quoted-pairs; nil when the closing quote is missing.
        mutating func readQuotedString() -> String? {
            advance()  // opening quote
            var text = [UInt8]()
            while let byte = peek {
                advance()
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { return nil }
                    advance()
                    text.append(escaped)
                default:
                    text.append(byte)
                }
            }
            return nil
        }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                Array("-.!%*_+`'~".utf8).contains(byte)
            }
        }
    }
}
