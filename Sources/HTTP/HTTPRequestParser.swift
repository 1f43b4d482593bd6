// RFC 9112 request parsing for the server: the head (request line and header fields) once
// it is complete (chunked bodies: ChunkedBodyDecoder). Strict where leniency lets a request be
// read two ways (request smuggling): obs-fold, bare CR or LF, space before a colon,
// Content-Length with Transfer-Encoding, and unknown transfer codings are all refused.

package enum HTTPRequestParser {
    /// The length of the head including its CRLFCRLF, when `bytes` holds all of it. The
    /// search starts at `from` (bytes before it were searched already).
    package static func headLength(_ bytes: ArraySlice<UInt8>, from: Int) -> Int? {
        var i = bytes.startIndex + max(0, from - 3)
        let end = bytes.endIndex
        while i + 4 <= end {
            if bytes[i + 3] != 10 {
                i += bytes[i + 3] == 13 ? 1 : 4
                continue
            }
            if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13 { return i + 4 - bytes.startIndex }
            i += 1
        }
        return nil
    }

    /// Parses a complete head (with or without its final CRLFCRLF).
    package static func parseHead(_ bytes: ArraySlice<UInt8>) throws(HTTPRequestError) -> HTTPRequestHead {
        var lines = try splitLines(bytes)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw HTTPRequestError(400, "empty request") }
        let (method, target, minor) = try parseRequestLine(requestLine)

        var headers: [String: String] = [:]
        var hostCount = 0
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            if name == "host" { hostCount += 1 }
            HTTPSyntax.addField(name, value, to: &headers)
        }
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1.
        if minor == 1, hostCount != 1 {
            throw HTTPRequestError(400, hostCount == 0 ? "missing Host header" : "more than one Host header")
        }

        let body = try framing(headers, minor: minor)
        let connection = HTTPSyntax.listMembers(headers["connection"] ?? "")
        var keepAlive = minor == 1 ? !connection.contains("close") : connection.contains("keep-alive")
        var expectsContinue = false
        if let expect = headers["expect"] {
            // RFC 9110 §10.1.1: 100-continue is the only expectation; HTTP/1.0 ignores it.
            guard expect.trimmingSpaces().lowercased() == "100-continue" else {
                throw HTTPRequestError(417, "unsupported expectation")
            }
            expectsContinue = minor == 1 && body != .none
        }
        let wantsWebSocket =
            method == "GET" && connection.contains("upgrade")
            && HTTPSyntax.listMembers(headers["upgrade"] ?? "").contains(where: {
                $0 == "websocket" || $0.hasPrefix("websocket/")
            })
        if wantsWebSocket { keepAlive = false }
        return HTTPRequestHead(
            method: method, target: target, minorVersion: minor, headers: headers, body: body,
            keepAlive: keepAlive, expectsContinue: expectsContinue, wantsWebSocket: wantsWebSocket)
    }

    /// Lines split on CRLF; a CR or LF anywhere else is an error.
    private static func splitLines(_ bytes: ArraySlice<UInt8>) throws(HTTPRequestError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == 13 {
                guard i + 1 < bytes.endIndex, bytes[i + 1] == 10 else {
                    throw HTTPRequestError(400, "bare CR in the request head")
                }
                lines.append(bytes[lineStart..<i])
                i += 2
                lineStart = i
                continue
            }
            if b == 10 { throw HTTPRequestError(400, "bare LF in the request head") }
            i += 1
        }
        if lineStart < bytes.endIndex { lines.append(bytes[lineStart...]) }
        return lines
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (String, String, Int) {
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw HTTPRequestError(400, "malformed request line") }
        guard HTTPSyntax.isToken(parts[0]) else { throw HTTPRequestError(400, "malformed method") }
        // Visible ASCII only: no controls, no spaces, no raw bytes above 0x7E.
        guard !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPRequestError(400, "malformed request target")
        }
        let version = Array(parts[2])
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), version[6] == UInt8(ascii: "."),
            isDigit(version[5]), isDigit(version[7])
        else { throw HTTPRequestError(400, "malformed HTTP version") }
        guard version[5] == UInt8(ascii: "1"), version[7] <= UInt8(ascii: "1") else {
            throw HTTPRequestError(505, "HTTP version not supported")
        }
        return (
            String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self),
            Int(version[7] - UInt8(ascii: "0"))
        )
    }

    /// `name: value` with a token name, no space before the colon, and a value of visible
    /// ASCII, spaces, tabs and obs-text (RFC 9110 §5.5); a leading space or tab is obs-fold.
    private static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (String, String) {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
            throw HTTPRequestError(400, "obsolete line folding in a header field")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), HTTPSyntax.isToken(line[line.startIndex..<colon])
        else {
            throw HTTPRequestError(400, "malformed header field")
        }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPRequestError(400, "control character in a header field")
        }
        return (
            String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased(),
            String(decoding: value, as: UTF8.self).trimmingSpaces()
        )
    }

    /// RFC 9112 §6: how the body is framed.
    private static func framing(
        _ headers: [String: String], minor: Int
    ) throws(HTTPRequestError) -> HTTPRequestHead.Body {
        let length = headers["content-length"]
        guard let codings = headers["transfer-encoding"] else {
            guard let length else { return .none }
            guard let n = HTTPSyntax.contentLength(length) else {
                throw HTTPRequestError(400, "malformed Content-Length")
            }
            return n == 0 ? .none : .length(n)
        }
        guard length == nil else { throw HTTPRequestError(400, "both Content-Length and Transfer-Encoding") }
        guard minor == 1 else { throw HTTPRequestError(400, "Transfer-Encoding in an HTTP/1.0 request") }
        guard HTTPSyntax.listMembers(codings) == ["chunked"] else {
            throw HTTPRequestError(501, "unsupported transfer coding")
        }
        return .chunked
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
