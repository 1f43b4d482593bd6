/// What a `WebSocketClient` opened with `connect(...)` reports to its handler, on the client
/// loop (keep the handler short: it runs between the loop's reads).
public enum WebSocketEvent: Sendable, Equatable {
    /// A whole message, text or binary.
    case message(WebSocketMessage)
    /// The WebSocket ended cleanly: the server's close frame (nil when we closed first and
    /// none came back). Reported once, last.
    case closed(WebSocketCloseFrame?)
    /// The connection ended for `error` (dropped without a close frame, broken framing, a
    /// write queue overflow). Reported once, last.
    case failed(IrisTransportError)
}
