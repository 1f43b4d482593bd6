import Crypto
import Glibc
import HTTP
import IrisAPI

/// Per-connection WebSocket protocol state.
struct WebSocketServerState {
    var assembler: WebSocketMessageAssembler
    /// Our close frame is queued: nothing may follow it.
    var closeSent = false
    /// The client's close frame came in: the close handshake is done once ours is written.
    var closeReceived = false
    /// We are failing the connection (protocol error): close right after our close frame.
    var failing = false
    /// Accepted, `onWebSocketOpen` not yet returned: the 101 (this Sec-WebSocket-Accept)
    /// waits for it, so a subscription made there exists before the client can act.
    var pendingAccept: String?

    init(limit: Int) { assembler = WebSocketMessageAssembler(limit: limit) }
}
