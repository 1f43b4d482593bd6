/// Joins fragmented data frames into messages (RFC 6455 §5.4), for both ends.
package struct WebSocketMessageAssembler: Sendable {
    /// The largest message accepted, fragments added up.
    package let limit: Int
    private var opcode: WebSocketFrame.Opcode?
    private var fragments: [UInt8] = []

    package init(limit: Int) { self.limit = limit }

    /// Takes a text, binary or continuation frame; returns the message once its last
    /// fragment is in. Throws 1002 for a continuation with nothing to continue or a new
    /// message inside a fragmented one, and `.tooLarge` (1009) past `limit`.
    package mutating func add(
        _ frame: WebSocketFrame
    ) throws(WebSocketFrameError) -> (opcode: WebSocketFrame.Opcode, payload: [UInt8])? {
        switch frame.opcode {
        case .text, .binary:
            guard opcode == nil else {
                throw .protocolViolation("a new \(frame.opcode) message began inside a fragmented one", code: 1002)
            }
            guard frame.payload.count <= limit else { throw .tooLarge(what: "WebSocket message", limit: limit) }
            if frame.fin { return (frame.opcode, frame.payload) }
            opcode = frame.opcode
            fragments = frame.payload
            return nil
        case .continuation:
            guard let first = opcode else {
                throw .protocolViolation("continuation frame with no message to continue", code: 1002)
            }
            guard fragments.count + frame.payload.count <= limit else {
                throw .tooLarge(what: "WebSocket message", limit: limit)
            }
            fragments += frame.payload
            guard frame.fin else { return nil }
            defer { fragments = []; opcode = nil }
            return (first, fragments)
        case .close, .ping, .pong:
            return nil
        }
    }
}
