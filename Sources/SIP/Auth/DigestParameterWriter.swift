/// Builds a `Digest name=value, ...` header value.
struct DigestParameterWriter {
    private var items: [String] = []

    /// Appends `name="value"` with `"` and `\` escaped as quoted-pairs. CR and LF cannot be
    /// quoted (RFC 3261 quoted-pair) and are dropped, so a value can never split the header.
    mutating func quoted(_ name: String, _ value: String) {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count + 2)
        for character in value.unicodeScalars {
            if character == "\r" || character == "\n" { continue }
            if character == "\"" || character == "\\" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(character)
        }
        items.append("\(name)=\"\(escaped)\"")
    }

    /// Appends `name=value` for a token value.
    mutating func token(_ name: String, _ value: String) {
        items.append("\(name)=\(value)")
    }

    /// The finished header value.
    var headerValue: String { "Digest " + items.joined(separator: ", ") }
}
