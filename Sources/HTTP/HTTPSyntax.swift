// HTTP/1.1 syntax shared by the client (WebClient) and the control API's server (ControlAPI):
// tokens, field lists, Content-Length and chunk-size lines.
// `package`, not `public`: these are the package's own helpers, not part of any public API.

/// RFC 9110 / RFC 9112 grammar pieces both HTTP directions need.
package enum HTTPSyntax {
    /// RFC 9110 §5.6.2 tchar.
    package static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    /// A non-empty run of tchar (a method, a field name).
    package static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }

    /// Adds one field line to a parsed header section: names lower-cased by the caller, a
    /// repeated field's values joined with ", " (RFC 9110 §5.3), as both directions read them.
    package static func addField(_ name: String, _ value: String, to headers: inout [String: String]) {
        if let earlier = headers[name] { headers[name] = earlier + ", " + value } else { headers[name] = value }
    }

    /// The lower-cased members of a comma-separated field ("keep-alive, Upgrade" ->
    /// ["keep-alive", "upgrade"]), empty members dropped (RFC 9110 §5.6.1).
    package static func listMembers(_ field: String) -> [String] {
        field.split(separator: ",").map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
    }

    /// A Content-Length value; repeated equal values ("5, 5") are accepted (RFC 9110 §8.6).
    /// nil when malformed, conflicting or too large for an Int.
    package static func contentLength(_ field: String) -> Int? {
        let values = Set(field.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() })
        guard values.count == 1, let value = values.first, !value.isEmpty, value.count <= 18,
            value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(value)
    }

    /// The size of a chunk-size line (RFC 9112 §7.1: hex digits, then extensions, which are
    /// ignored), without its line end. nil when malformed or over 15 hex digits.
    package static func chunkSize(line: some Collection<UInt8>) -> Int? {
        let sizeText = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces()
        guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.utf8.allSatisfy(isHexDigit),
            let size = Int(sizeText, radix: 16)
        else { return nil }
        return size
    }

    private static func isHexDigit(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    package func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
