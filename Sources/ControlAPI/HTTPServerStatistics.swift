/// What `HTTPServer` has open and what it refused, since it started.
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Why a connection, request or WebSocket was refused or dropped.
    public enum Refusal: String, Sendable, CaseIterable {
        /// The request head did not arrive within `headerTimeout` (slowloris).
        case headerTimeout = "header_timeout"
        /// The body did not arrive within `bodyTimeout`.
        case bodyTimeout = "body_timeout"
        /// Closed at accept: `maxConnections` were open.
        case tooManyConnections = "too_many_connections"
        /// Closed at accept: `maxConnectionsPerSource` were open from that address.
        case perSourceCap = "per_source_cap"
        /// The head was over `maxHeaderBytes` (431).
        case headerTooLarge = "header_too_large"
        /// The body was over `maxBodyBytes` (413).
        case bodyTooLarge = "body_too_large"
        /// Not valid HTTP/1.1 (400, 417, 501, 505).
        case badRequest = "bad_request"
        /// A path with an encoded NUL, control byte, `/` or `\` (404 without the handler).
        case unsafePath = "unsafe_path"
        /// Every worker busy and the request queue full (503).
        case workersBusy = "workers_busy"
        /// `maxWebSockets` open and none of the client's group to replace (503).
        case tooManyWebSockets = "too_many_websockets"
        /// A WebSocket closed to make room for a newer one of its group (the slowest).
        case webSocketDroppedSlowest = "websocket_dropped_slowest"
        /// A WebSocket whose queue passed `webSocketQueueLimit` (the client does not read).
        case webSocketDroppedOverflow = "websocket_dropped_overflow"
        /// A WebSocket refused at its group's own limit (`WebSocketUpgrade.accept(limit:)`, 429).
        case webSocketGroupLimit = "websocket_group_limit"
        /// A WebSocket closed (1008) when the credential it was opened with expired.
        case webSocketExpired = "websocket_expired"
    }

    /// Connections open now (HTTP and WebSocket).
    public var openConnections = 0
    /// WebSockets open now.
    public var openWebSockets = 0
    /// Connections accepted in all.
    public var acceptedConnections = 0
    /// Requests handed to the handler or the upgrade callback.
    public var requests = 0
    /// Keep-alive connections closed after `idleTimeout` without a request (not an error).
    public var idleClosed = 0
    /// Times accept ran out of file descriptors (EMFILE, ENFILE): each pending connection the
    /// listener shed through its reserved descriptor (one when none was pending); the
    /// listener then pauses for a moment.
    public var acceptBackoffs = 0
    /// Refusals by reason; a missing reason is 0.
    public var refused: [Refusal: Int] = [:]
    /// The listener speaks HTTPS (and WSS) only.
    public var tls = false
    /// TLS handshakes completed (HTTPS listener).
    public var tlsHandshakes = 0
    /// TLS failures by `TLSFailure.kind` ("not_tls", "unknown_ca", "handshake_timeout" ...):
    /// handshakes that failed or timed out, and connections whose records broke.
    public var tlsFailures: [String: Int] = [:]

    /// All zero.
    public init() {}

    /// How many were refused for `reason`.
    public func refusals(_ reason: Refusal) -> Int { refused[reason] ?? 0 }

    mutating func count(_ reason: Refusal) { refused[reason, default: 0] += 1 }
}
