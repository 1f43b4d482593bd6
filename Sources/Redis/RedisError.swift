/// Why a command has no value. Whether it may have run tells a caller what it may retry:
/// `.unavailable` and `.closed` were never sent; `.timeout` and `.connectionLost` were sent
/// and may have been carried out.
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an error reply (`ERR ...`, `WRONGTYPE ...`, `NOSCRIPT ...`).
    case server(String)
    /// No connection to the server at the moment (down, or reconnecting after a drop): the
    /// command was not sent. Nothing is queued for later; the caller decides.
    case unavailable
    /// No reply within the command's deadline; the connection was dropped and is re-made.
    case timeout
    /// The connection ended with the command sent but unanswered.
    case connectionLost
    /// `close()` was called.
    case closed
    /// The server's bytes are not RESP (hiredis's reader said why); the connection is dropped.
    case protocolError(String)

    /// The error reply's text, for `.server`.
    public var serverMessage: String? {
        if case .server(let message) = self { return message }
        return nil
    }

    public var description: String {
        switch self {
        case .server(let message): "redis: \(message)"
        case .unavailable: "redis: unavailable"
        case .timeout: "redis: no reply in time"
        case .connectionLost: "redis: connection lost before the reply"
        case .closed: "redis: client closed"
        case .protocolError(let why): "redis: protocol error: \(why)"
        }
    }
}
