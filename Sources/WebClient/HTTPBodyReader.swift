// Reading a response body framed by Content-Length, chunked coding, or the end of the
// connection (RFC 9112 §6.3), from the client's socket; the head's grammar is the HTTP module's.

import HTTP

/// Reads the body that follows a response head.
enum HTTPBodyReader {
    /// The body of `head` answering `method` (RFC 9112 §6.3: HEAD, 1xx, 204 and 304 have none).
    static func read(for head: HTTPResponseHead, method: String, from reader: inout StreamReader,
                     limit: Int, deadline: Deadline) throws(IrisTransportError) -> [UInt8] {
        if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 { return [] }
        if head.isChunked { return try readChunked(from: &reader, limit: limit, deadline: deadline) }
        let contentLength: Int?
        do { contentLength = try head.contentLength() } catch { throw .malformedResponse(error.message) }
        if let length = contentLength {
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
