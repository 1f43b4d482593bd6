/// A parsed request head.
package struct HTTPRequestHead: Equatable, Sendable {
    package enum Body: Equatable, Sendable {
        case none
        case length(Int)
        case chunked
    }

    package var method: String
    /// The request target as sent (origin-form, absolute-form or "*").
    package var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    package var minorVersion: Int
    /// Lower-cased names; repeated fields joined with ", ".
    package var headers: [String: String]
    package var body: Body
    /// The connection may carry another request after this one.
    package var keepAlive: Bool
    /// `Expect: 100-continue` on HTTP/1.1: the client waits for 100 before the body.
    package var expectsContinue: Bool
    /// GET with `Connection: upgrade` and `Upgrade: websocket`.
    package var wantsWebSocket: Bool

    package init(
        method: String, target: String, minorVersion: Int, headers: [String: String], body: Body,
        keepAlive: Bool, expectsContinue: Bool, wantsWebSocket: Bool
    ) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
        self.wantsWebSocket = wantsWebSocket
    }
}
