import Glibc

/// Why a stream connection ended or could not open: the one classification every owner maps
/// to its own words (SIP's `SIPConnectionFailure` and refusal counters).
public enum StreamFailure: Error, Sendable, CustomStringConvertible {
    /// connect(2) (or socket(2)) failed, with its errno.
    case connect(errno: Int32)
    /// The stream layer refused to open it (a cap).
    case refused(StreamRefusal)
    /// The peer closed the connection (EOF).
    case closedByPeer
    /// A read or write failed, with its errno (reset, broken pipe ...).
    case socket(errno: Int32)
    /// The connection ended while the security layer was still handshaking.
    case closedDuringHandshake
    /// The security layer failed (for TLS a `TLSFailure`).
    case security(any Error & Sendable)
    /// The peer closed the secure session (TLS close_notify).
    case securityClosed
    /// `handshakeTimeout` passed with the handshake unfinished.
    case handshakeTimeout
    /// `firstFrameTimeout` passed without a first complete frame.
    case firstFrameTimeout
    /// `frameTimeout` passed with a frame begun but not complete.
    case frameTimeout
    /// `idleTimeout` passed with nothing carried.
    case idle
    /// Nothing came back within `keepaliveTimeout` of a keep-alive.
    case keepaliveTimeout
    /// The framer refused the bytes (its own error).
    case framing(any Error & Sendable)
    /// The peer does not read: this many bytes were queued when more came.
    case writeQueueFull(queued: Int)

    /// strerror's text for an errno.
    public static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    public var description: String {
        switch self {
        case .connect(let code): "connect: \(Self.errorText(code))"
        case .refused(let why): "refused: \(why)"
        case .closedByPeer: "closed by the peer"
        case .socket(let code): Self.errorText(code)
        case .closedDuringHandshake: "closed during the handshake"
        case .security(let failure): "security: \(failure)"
        case .securityClosed: "the peer closed the secure session"
        case .handshakeTimeout: "handshake timeout"
        case .firstFrameTimeout: "no first frame in time"
        case .frameTimeout: "frame timeout"
        case .idle: "idle"
        case .keepaliveTimeout: "no answer to the keep-alive"
        case .framing(let error): "framing: \(error)"
        case .writeQueueFull(let queued): "the peer does not read (\(queued) bytes queued)"
        }
    }
}
