import IrisAPI

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

/// A body produced as the client reads it, so a large one (a capture file) is never held
/// whole: its length up front, then its parts, appended on the connection's loop whenever
/// what went before has been written.
public protocol HTTPBodyStream: AnyObject, Sendable {
    /// The body's length in bytes (Content-Length).
    var length: Int { get }
    /// Appends the next part, about `bytes` long, to `out`; false once the body is complete.
    func write(into out: inout [UInt8], upTo bytes: Int) -> Bool
}
