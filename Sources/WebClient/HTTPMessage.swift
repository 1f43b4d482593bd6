// HTTP/1.1 on the wire (RFC 9112) as far as the client needs it: writing a request head,
// parsing a response head, and reading a body framed by Content-Length, chunked coding, or
// the end of the connection.

/// Writes the request line and header fields of one request.
enum HTTPRequestWriter {
    /// The head of a request, ending with the blank line. Field names are sent as given;
    /// `headers` must not repeat `Host` (it is always written from `host`).
    static func head(method: String, target: String, host: String, headers: [(String, String)]) throws(IrisTransportError) -> [UInt8] {
        guard HTTPSyntax.isToken(method.utf8) else {
            throw .invalidRequest("method \"\(method)\" is not an HTTP token")
        }
        guard target.hasPrefix("/"), !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidRequest("target \"\(target)\" must start with / and hold no spaces or control characters")
        }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers {
            guard HTTPSyntax.isToken(name.utf8) else {
                throw .invalidRequest("header name \"\(name)\" is not an HTTP token")
            }
            // CR or LF in a value would start a new header (request smuggling).
            guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw .invalidRequest("header \(name) has a CR, LF or NUL in its value")
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }
}

/// A parsed status line and header section.
struct HTTPResponseHead: Sendable, Equatable {
    let status: Int
    let reason: String
    /// Lower-cased field names; a repeated field's values joined with ", " (RFC 9110 §5.3).
    let headers: [String: String]

    static func parse(_ bytes: [UInt8]) throws(IrisTransportError) -> HTTPResponseHead {
        // Split on bytes: as Characters, CRLF is one grapheme and "\n" would not match it.
        // Header fields are ASCII; stray non-UTF-8 bytes become U+FFFD rather than an error.
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }[...]
        guard let statusLine = lines.popFirst() else { throw .malformedResponse("empty response head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]),
              (100...999).contains(status) else {
            throw .malformedResponse("bad status line \"\(statusLine.prefix(100))\"")
        }
        var headers: [String: String] = [:]
        var last: String?
        for line in lines {
            if line.first == " " || line.first == "\t" {
                // Obsolete line folding (RFC 9112 §5.2): part of the previous value.
                guard let name = last else { throw .malformedResponse("continuation line before any header") }
                headers[name, default: ""] += " " + line.trimmingSpaces()
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                throw .malformedResponse("bad header line \"\(line.prefix(100))\"")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
            last = name
        }
        return HTTPResponseHead(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    /// True when the last transfer coding is chunked.
    var isChunked: Bool {
        guard let codings = headers["transfer-encoding"] else { return false }
        return HTTPSyntax.listMembers(codings).last == "chunked"
    }

    /// The Content-Length, if any; repeated equal values are accepted (RFC 9110 §8.6).
    func contentLength() throws(IrisTransportError) -> Int? {
        guard let field = headers["content-length"] else { return nil }
        guard let length = HTTPSyntax.contentLength(field) else {
            throw .malformedResponse("bad Content-Length \"\(field)\"")
        }
        return length
    }
}

/// Reads the body that follows a response head.
enum HTTPBodyReader {
    /// The body of `head` answering `method` (RFC 9112 §6.3: HEAD, 1xx, 204 and 304 have none).
    static func read(for head: HTTPResponseHead, method: String, from reader: inout StreamReader,
                     limit: Int, deadline: Deadline) throws(IrisTransportError) -> [UInt8] {
        if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 { return [] }
        if head.isChunked { return try readChunked(from: &reader, limit: limit, deadline: deadline) }
        if let length = try head.contentLength() {
            guard length <= limit else { throw .tooLarge(what: "response body", limit: limit) }
            return try reader.readExactly(length, deadline: deadline, operation: "reading a \(length)-byte response body")
        }
        return try reader.readToEnd(limit: limit, deadline: deadline, operation: "reading a response body to the end of the connection")
    }

    /// RFC 9112 §7.1: hex size lines (extensions ignored), data, CRLF; a zero size, then
    /// trailer fields (dropped) up to a blank line.
    static func readChunked(from reader: inout StreamReader, limit: Int, deadline: Deadline) throws(IrisTransportError) -> [UInt8] {
        var body: [UInt8] = []
        let operation = "reading a chunked response body"
        while true {
            let line = try reader.readLine(limit: 1024, deadline: deadline, operation: operation)
            guard let size = HTTPSyntax.chunkSize(line: line) else {
                throw .malformedResponse("bad chunk size line \"\(String(decoding: line.prefix(40), as: UTF8.self))\"")
            }
            if size == 0 { break }
            guard body.count + size <= limit else { throw .tooLarge(what: "response body", limit: limit) }
            body += try reader.readExactly(size, deadline: deadline, operation: operation)
            guard try reader.readLine(limit: 2, deadline: deadline, operation: operation).isEmpty else {
                throw .malformedResponse("chunk data not followed by CRLF")
            }
        }
        while try !reader.readLine(limit: 8 * 1024, deadline: deadline, operation: operation).isEmpty {}
        return body
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    package func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
