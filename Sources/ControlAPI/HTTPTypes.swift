// The value types the control API's handlers see. No CivetWeb here: HTTPServer.swift
// converts CivetWeb's request into an `HTTPRequest` and writes an `HTTPResponse` back.

/// Settings for `HTTPServer`.
public struct HTTPServerConfiguration: Sendable {
    /// Where to listen, in CivetWeb's `listening_ports` form: "127.0.0.1:8080" or "8080"
    /// (every interface; IPv4 only, the Debian build has no IPv6). Port 0 lets the OS pick;
    /// `HTTPServer.start()` returns the real port.
    public var listen: String
    /// CivetWeb worker threads. Each connection holds one while it is open, and each
    /// WebSocket for its whole life, so at most `threads - 1` WebSockets are accepted:
    /// one worker always stays free for plain requests.
    public var threads: Int
    /// The largest request body a handler is given; bigger ones (by Content-Length or
    /// counted while reading a chunked body) get a 413 JSON error and the handler is not called.
    public var maxBodyBytes: Int
    /// Messages queued per WebSocket before the client counts as too slow and is dropped.
    public var webSocketQueueLimit: Int
    /// Receives CivetWeb's own log lines (bind failures, protocol errors). nil drops them:
    /// the library never writes to stdout or stderr itself.
    public var log: (@Sendable (String) -> Void)?

    /// Defaults: 127.0.0.1:8080, 32 threads, 64 KiB bodies, 1024 queued WebSocket messages.
    public init(listen: String = "127.0.0.1:8080",
                threads: Int = 32,
                maxBodyBytes: Int = 65_536,
                webSocketQueueLimit: Int = 1024,
                log: (@Sendable (String) -> Void)? = nil) {
        self.listen = listen
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.webSocketQueueLimit = webSocketQueueLimit
        self.log = log
    }
}

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
    /// The client's IP address, without the port ("127.0.0.1").
    public var remoteAddress: String
    /// The client's TCP port.
    public var remotePort: Int

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "", remotePort: Int = 0) {
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
    /// The status code (100...999; anything else is sent as 500).
    public var status: Int
    /// Extra header fields in order, e.g. `("Content-Type", "application/json")`.
    /// Fields whose name or value holds CR or LF are dropped.
    public var headers: [(String, String)]
    /// The body; not sent for HEAD requests (its length still is).
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with `Content-Type: application/json`.
    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A text response, UTF-8 plain text unless `contentType` says otherwise.
    public static func text(_ status: Int, _ s: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(s.utf8))
    }

    /// The control API's error body: `{"error":{"code":<code>,"message":"<message>"}}`.
    static func error(_ status: Int, code: Int, message: String) -> HTTPResponse {
        .json(status, Array("{\"error\":{\"code\":\(code),\"message\":\"\(message)\"}}".utf8))
    }

    /// 413 for a body over `maxBodyBytes`.
    static let bodyTooLarge = HTTPResponse.error(413, code: -103, message: "request body too large")
}

/// Why `HTTPServer.start()` failed.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with CivetWeb's own text when it gave one.
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

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
