// A response head on the wire (RFC 9112 §4), as the client reads it.

/// A parsed status line and header section.
package struct HTTPResponseHead: Sendable, Equatable {
    package let status: Int
    package let reason: String
    /// Lower-cased field names; a repeated field's values joined with ", " (RFC 9110 §5.3).
    package let headers: [String: String]

    /// Reads a head (the status line and field lines, the final blank line optional).
    /// Lenient as a client may be (RFC 9112 §2.2, §5.2): a bare LF ends a line and obs-fold
    /// continues a value.
    package static func parse(_ bytes: [UInt8]) throws(HTTPGrammarError) -> HTTPResponseHead {
        // Split on bytes: as Characters, CRLF is one grapheme and "\n" would not match it.
        // Header fields are ASCII; stray non-UTF-8 bytes become U+FFFD rather than an error.
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }[...]
        guard let statusLine = lines.popFirst() else { throw HTTPGrammarError("empty response head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]),
            (100...999).contains(status)
        else {
            throw HTTPGrammarError("bad status line \"\(statusLine.prefix(100))\"")
        }
        var headers: [String: String] = [:]
        var last: String?
        for line in lines {
            if line.first == " " || line.first == "\t" {
                // Obsolete line folding (RFC 9112 §5.2): part of the previous value.
                guard let name = last else { throw HTTPGrammarError("continuation line before any header") }
                headers[name, default: ""] += " " + line.trimmingSpaces()
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else {
                throw HTTPGrammarError("bad header line \"\(line.prefix(100))\"")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            HTTPSyntax.addField(name, value, to: &headers)
            last = name
        }
        return HTTPResponseHead(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    /// True when the last transfer coding is chunked.
    package var isChunked: Bool {
        guard let codings = headers["transfer-encoding"] else { return false }
        return HTTPSyntax.listMembers(codings).last == "chunked"
    }

    /// The Content-Length, if any; repeated equal values are accepted (RFC 9110 §8.6).
    package func contentLength() throws(HTTPGrammarError) -> Int? {
        guard let field = headers["content-length"] else { return nil }
        guard let length = HTTPSyntax.contentLength(field) else {
            throw HTTPGrammarError("bad Content-Length \"\(field)\"")
        }
        return length
    }
}
