// A minimal HTTP/1.1 client over `TestSocket`: enough to check status, headers, framing
// (Content-Length, keep-alive) and bodies.

struct TestResponse {
    var status: Int
    /// Lowercased names.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

extension TestSocket {
    /// Sends one request; `body` goes with Content-Length unless `chunked` splits it into chunks.
    func sendRequest(
        _ method: String, _ target: String, headers: [(String, String)] = [],
        body: [UInt8] = [], chunked: Bool = false
    ) async throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if chunked {
            head += "Transfer-Encoding: chunked\r\n\r\n"
            var bytes = Array(head.utf8)
            var offset = 0
            while offset < body.count {
                let piece = body[offset..<min(body.count, offset + 8192)]
                bytes += Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Array("\r\n".utf8)
                offset += piece.count
            }
            bytes += Array("0\r\n\r\n".utf8)
            try await write(bytes)
        } else {
            if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
            head += "\r\n"
            try await write(Array(head.utf8) + body)
        }
    }

    /// Reads one response; the server must frame it with Content-Length.
    func readResponse(head: Bool = false) async throws -> TestResponse {
        let headBytes = try await read(through: Array("\r\n\r\n".utf8))
        let lines = String(decoding: headBytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: true)
        guard let statusLine = lines.first else { throw TestSocketError("empty response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw TestSocketError("bad status line: \(statusLine)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " ")
            headers[name] = value
        }
        guard let lengthText = headers["content-length"], let length = Int(lengthText) else {
            throw TestSocketError("response without Content-Length: \(headers)")
        }
        let body = head ? [] : try await read(exactly: length)
        return TestResponse(status: status, headers: headers, body: body)
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

/// One request on a new connection.
func httpRequest(
    port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
    body: [UInt8] = [], chunked: Bool = false
) async throws -> TestResponse {
    let socket = try TestSocket(port: port)
    try await socket.sendRequest(method, target, headers: headers, body: body, chunked: chunked)
    return try await socket.readResponse(head: method == "HEAD")
}
