extension SIPTrace {
    /// What replaces an SDES key in a trace.
    public static let redactedKey = "[redacted]"

    /// An SDP `a=crypto` line (RFC 4568 §9.1: `a=crypto:<tag> <suite> <key-params>
    /// [<session-params>]`) with the master key and salt of every `inline:` key parameter
    /// (a `FEC_KEY` session parameter's among them) replaced by `redactedKey`; the tag, the
    /// suite, each key's lifetime and MKI, and the other session parameters stay, so a trace
    /// still says what was negotiated. nil for any other line.
    static func redactedCryptoLine(_ line: Substring) -> Substring? {
        guard line.utf8.count >= 9, line.prefix(9).lowercased() == "a=crypto:" else { return nil }
        var out = ""
        var rest = line
        while let inline = rest.range(of: "inline:", options: .caseInsensitive) {
            out += rest[..<inline.upperBound]
            let key = rest[inline.upperBound...].prefix { $0 != "|" && $0 != ";" && $0 != " " && $0 != "\t" }
            if !key.isEmpty { out += redactedKey }
            rest = rest[key.endIndex...]
        }
        out += rest
        return Substring(out)
    }

    /// Sets the Content-Length header (long or compact form) of a message split into `lines`
    /// to the bytes of its body, the lines from `bodyStart` on joined with CRLF.
    static func correctContentLength(_ lines: inout [Substring], bodyStart: Int) {
        guard bodyStart <= lines.count else { return }
        let body = lines[bodyStart...].reduce(0) { $0 + $1.utf8.count } + 2 * max(0, lines.count - bodyStart - 1)
        for i in 0..<max(0, bodyStart - 1) {
            guard let colon = lines[i].firstIndex(of: ":") else { continue }
            let name = String(lines[i][..<colon]).trimmingSIPWhitespace().lowercased()
            if name == "content-length" || name == "l" { lines[i] = Substring(lines[i][..<colon] + ": \(body)") }
        }
    }
}
