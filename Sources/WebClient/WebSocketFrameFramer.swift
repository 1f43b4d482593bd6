import HTTP
import IOCore

/// Cuts the server's WebSocket frames (RFC 6455 §5.2, unmasked) out of the client's stream
/// with the HTTP module's codec; a frame over `limit` or one that breaks the framing rules
/// is the framer's error, with the close code to fail the connection with.
struct WebSocketFrameFramer: StreamFramer {
    typealias Frame = WebSocketFrame
    typealias Failure = WebSocketFrameError

    let limit: Int
    private var buffer: ByteBuffer

    /// `buffer`: bytes already read after the upgrade (frames the server sent at once).
    init(limit: Int, buffer: ByteBuffer = ByteBuffer()) {
        self.limit = limit
        self.buffer = buffer
    }

    var pending: Int { buffer.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(WebSocketFrameError) -> [WebSocketFrame] {
        let (frames, error) = add(bytes)
        if let error { throw error }
        return frames
    }

    /// `bytes` added, then every whole frame in the buffer, and the error that stopped the
    /// cutting if one did (the frames before it are good).
    mutating func add(_ bytes: UnsafeRawBufferPointer? = nil) -> ([WebSocketFrame], WebSocketFrameError?) {
        if let bytes { buffer.append(bytes) }
        var frames: [WebSocketFrame] = []
        do {
            while let (frame, length) = try WebSocketFrame.parse(buffer.unread, limit: limit) {
                buffer.consume(length)
                frames.append(frame)
            }
        } catch {
            return (frames, error)
        }
        return (frames, nil)
    }
}
