// The value types the control API's handlers see: the server parses the wire into an
// `HTTPRequest` (the HTTP module's HTTPRequestParser) and writes an `HTTPResponse` back
// (HTTPResponseEncoder.swift).

import IrisAPI

/// One HTTP request (or the upgrade request of a WebSocket).
public struct HTTPRequest: Sendable {
    /// "GET", "POST", ... as sent.
    public var method: String
    /// The percent-decoded path without the query, with dot segments removed ("/calls/42").
    public var path: String
    /// Query parameters, percent-decoded ('+' is a space). When a name repeats, the last value wins.
    public var query: [String: String]
    /// Header fields with lowercased names; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// The whole body (empty for a WebSocket upgrade).
    public var body: [UInt8]
    /// The client's IP address, without the port ("127.0.0.1", "::1"; an IPv4 client of a
    /// dual-stack `[::]` listener is shown as IPv4).
    public var remoteAddress: String
    /// The client's TCP port.
    public var remotePort: Int

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = "", remotePort: Int = 0
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
    }
}

/// What a handler answers. The server adds Content-Length (from `body`), Date and
/// Connection itself; a Content-Length or Transfer-Encoding given here is ignored.
public struct HTTPResponse: Sendable {
    /// The status code (200...999; anything else is sent as 500).
    public var status: Int
    /// Extra header fields in order, e.g. `("Content-Type", "application/json")`.
    /// Fields whose name or value holds CR or LF are dropped.
    public var headers: [(String, String)]
    /// The body; not sent for HEAD requests (its length still is).
    public var body: [UInt8]
    /// A body written out as the client takes it, instead of `body` (a pcap).
    public var stream: (any HTTPBodyStream)?

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `stream`, sent with its length as Content-Length.
    public init(status: Int, headers: [(String, String)] = [], stream: any HTTPBodyStream) {
        self.init(status: status, headers: headers)
        self.stream = stream
    }

    /// A response with `Content-Type: application/json`.
    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A text response, UTF-8 plain text unless `contentType` says otherwise.
    public static func text(
        _ status: Int, _ s: String, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(s.utf8))
    }

    /// The control API's error body: `{"error":{"code":<code>,"message":"<message>"}}`
    /// (`message` is the server's own fixed text: nothing from the request is echoed).
    static func error(_ status: Int, code: Int = IrisCode.incorrectParams, message: String) -> HTTPResponse {
        .json(status, Array("{\"error\":{\"code\":\(code),\"message\":\"\(message)\"}}".utf8))
    }

    /// 413 for a body over `maxBodyBytes`.
    static let bodyTooLarge = HTTPResponse.error(413, message: "request body too large")
}

/// What the `webSocket:` callback of `HTTPServer` decides for an upgrade request.
public enum WebSocketUpgrade: Sendable {
    /// Accept the WebSocket. `group` names the client (an API key's identity, a routing id):
    /// `maxWebSocketsPerClient` counts per group, and when a group is at its cap the slowest
    /// of its own WebSockets makes room, never another group's. Not logged; need not be secret.
    /// `limit`: a hard cap of the group's own, below `maxWebSocketsPerClient`: at it a new
    /// WebSocket is refused (429 JSON) and none is replaced. `expiry`: when the server closes
    /// the WebSocket (the credential it was opened with runs out).
    case accept(group: String, limit: Int? = nil, expiry: WebSocketExpiry? = nil)
    /// Refuse it with this response (e.g. 401 JSON), sent as is; the connection closes after it.
    case refuse(HTTPResponse)
}

/// When an accepted WebSocket ends by itself: at `at` (Unix seconds) the server queues a close
/// frame with 1008 (policy violation) and `reason` after the messages already queued, then
/// closes as for `WebSocketConnection.close()`.
public struct WebSocketExpiry: Sendable, Equatable {
    public var at: Double
    /// At most 123 bytes of UTF-8 go into the close frame.
    public var reason: String
    public init(at: Double, reason: String) {
        self.at = at
        self.reason = reason
    }
}

/// Why `HTTPServer.start()` failed.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the system's error text when there is one.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// application/x-www-form-urlencoded decoding for query strings.
enum QueryString {
    /// "a=1&b=x%20y&flag" -> ["a": "1", "b": "x y", "flag": ""].
    static func parse(_ raw: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard !name.isEmpty else { continue }
            result[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }

    /// Percent-decodes `s`, turning '+' into a space. A malformed escape stays as written.
    static func decode(_ s: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        var it = s.utf8.makeIterator()
        var pending: [UInt8] = []
        while let b = it.next() {
            switch b {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                pending = [b]
                guard let h = it.next() else { bytes += pending; continue }
                pending.append(h)
                guard let l = it.next() else { bytes += pending; continue }
                pending.append(l)
                if let hi = hexValue(h), let lo = hexValue(l) {
                    bytes.append(hi << 4 | lo)
                } else {
                    bytes += pending
                }
            default:
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A body produced as the client reads it, so a large one (a capture file) is never held
/// whole: its length up front, then its parts, appended on the connection's loop whenever
/// what went before has been written.
public protocol HTTPBodyStream: AnyObject, Sendable {
    /// The body's length in bytes (Content-Length).
    var length: Int { get }
    /// Appends the next part, about `bytes` long, to `out`; false once the body is complete.
    func write(into out: inout [UInt8], upTo bytes: Int) -> Bool
}
