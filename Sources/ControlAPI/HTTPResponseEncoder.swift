// Response heads on the wire. The server owns the framing fields (Date, Content-Length,
// Connection): a handler's own copies of them are dropped, as are fields that would break
// the head (CR, LF or NUL in a value, a name that is not a token).

import Glibc
import HTTP

enum HTTPResponseEncoder {
    /// Status line, the handler's fields, then Date, Content-Length and Connection, and the
    /// body unless `omitBody` (HEAD). 204 and 304 carry neither body nor Content-Length; a
    /// final response cannot be 1xx, so one is sent as 500.
    static func encode(_ response: HTTPResponse, keepAlive: Bool, omitBody: Bool, date: String) -> [UInt8] {
        var out: [UInt8] = []
        encode(response, keepAlive: keepAlive, omitBody: omitBody, date: date, into: &out)
        return out
    }

    /// `encode`, appended to `out`. A streamed body (`response.stream`) is not: the
    /// connection appends its parts as the client reads.
    static func encode(_ response: HTTPResponse, keepAlive: Bool, omitBody: Bool, date: String, into out: inout [UInt8])
    {
        let status = (200...999).contains(response.status) ? response.status : 500
        var head = "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
        for (name, value) in sendableFields(response.headers) {
            head += "\(name): \(value)\r\n"
        }
        let bodiless = status == 204 || status == 304
        head += "Date: \(date)\r\n"
        if !bodiless { head += "Content-Length: \(response.stream?.length ?? response.body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        let body = !omitBody && !bodiless ? response.body.count : 0
        out.reserveCapacity(out.count + head.utf8.count + body)
        out += head.utf8
        if body > 0 { out += response.body }
    }

    /// True when the handler asked to close the connection after this response.
    static func asksToClose(_ response: HTTPResponse) -> Bool {
        response.headers.contains { name, value in
            name.lowercased() == "connection" && HTTPSyntax.listMembers(value).contains("close")
        }
    }

    /// The handler's fields minus framing ones and any that would break the head.
    static func sendableFields(_ fields: [(String, String)]) -> [(String, String)] {
        let owned: Set<String> = ["content-length", "transfer-encoding", "connection", "date", "upgrade"]
        return fields.filter { name, value in
            HTTPSyntax.isToken(name.utf8) && !owned.contains(name.lowercased())
                && !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
        }
    }

    static let continueHead = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The 101 that completes a WebSocket handshake.
    static func switchingProtocols(accept: String) -> [UInt8] {
        Array(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
                .utf8)
    }
}

/// The Date field (RFC 9110 §5.6.7 IMF-fixdate), formatted once per second.
struct HTTPDateCache {
    private var second: time_t = -1
    private var text = ""

    mutating func now() -> String {
        let t = time(nil)
        if t != second {
            second = t
            text = Self.format(t)
        }
        return text
    }

    static func format(_ t: time_t) -> String {
        var t = t
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
