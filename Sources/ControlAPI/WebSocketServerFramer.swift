// Cuts a client's WebSocket frames (RFC 6455 §5, masked) out of the connection's bytes once
// the connection has switched protocols. A frame the codec refuses is a frame too
// (`.failed` with the close code), so the connection can send its close frame before it
// ends; everything after it is dropped.

import HTTP
import IOCore

struct WebSocketServerFramer: StreamFramer {
    enum Frame {
        case frame(WebSocketFrame)
        /// The client broke the protocol: fail the connection with this close code.
        case failed(UInt16)
    }

    /// The largest frame payload taken (`maxWebSocketMessageBytes`).
    let limit: Int
    private var input = ByteBuffer()
    private var failed = false

    init(limit: Int) { self.limit = limit }

    var pending: Int { input.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [Frame] {
        guard !failed else { return [] }
        input.append(bytes)
        var frames: [Frame] = []
        while true {
            do {
                guard let (frame, used) = try WebSocketFrame.parseMasked(input.unread, limit: limit) else {
                    return frames
                }
                input.consume(used)
                frames.append(.frame(frame))
            } catch {
                failed = true
                input.removeAll()
                frames.append(.failed(error.closeCode))
                return frames
            }
        }
    }
}
