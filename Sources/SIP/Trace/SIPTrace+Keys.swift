extension SIPTrace {
    /// What an SDES key reads as in a trace, repeated to the key's length.
    public static let redactedKeyText = "REDACTED"

    /// An SDP `a=crypto` line (RFC 4568 §9.1: `a=crypto:<tag> <suite> <key-params>
    /// [<session-params>]`) with the master key and salt of every `inline:` key parameter
    /// (a `FEC_KEY` session parameter's among them) overwritten by `REDACTEDREDACTED...`,
    /// letter for letter, its `=` padding kept: the body keeps its length (Content-Length
    /// stays true) and the key stays valid base64 of the suite's length, so tshark and
    /// Wireshark still read the SDP. The tag, the suite, each key's lifetime and MKI, and the
    /// other session parameters stay, so a trace still says what was negotiated. nil for
    /// any other line.
    static func redactedCryptoLine(_ line: Substring) -> Substring? {
        guard line.utf8.count >= 9, line.prefix(9).lowercased() == "a=crypto:" else { return nil }
        var out = ""
        var rest = line
        while let inline = rest.range(of: "inline:", options: .caseInsensitive) {
            out += rest[..<inline.upperBound]
            let key = rest[inline.upperBound...].prefix { $0 != "|" && $0 != ";" && $0 != " " && $0 != "\t" }
            let padding = key.reversed().prefix { $0 == "=" }.count
            let letters = key.count - padding
            out += String(repeating: redactedKeyText, count: letters / redactedKeyText.count + 1).prefix(letters)
            out += String(repeating: "=", count: padding)
            rest = rest[key.endIndex...]
        }
        out += rest
        return Substring(out)
    }
}
