import IrisAPI

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
