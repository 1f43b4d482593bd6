// The suite's WebSocket server reads one HTTP upgrade request, then the client's masked
// frames (RFC 6455 §5.1), with the HTTP module's grammar and codec. The gateway sends
// nothing between its request and our 101, so one framer reads straight on.

import HTTP
import IOCore

struct StreamServerFramer: StreamFramer {
    enum Frame {
        /// The upgrade request's head.
        case head(HTTPRequestHead)
        /// Not an HTTP request we can read: answer 400 and close.
        case refused(String)
        case frame(WebSocketFrame)
        /// The client broke the WebSocket protocol: close with this code.
        case failed(UInt16, String)
    }

    /// The largest request head, and the largest frame payload taken.
    static let maxHeadBytes = 16_384
    static let maxFrameBytes = 1 << 20

    private var input = ByteBuffer()
    private var readingHead = true
    private var done = false

    var pending: Int { input.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [Frame] {
        guard !done else { return [] }
        input.append(bytes)
        var frames: [Frame] = []
        if readingHead {
            guard let length = HTTPRequestParser.headLength(input.unread, from: 0) else {
                if input.count > Self.maxHeadBytes { return stop("request head too large") }
                return []
            }
            do {
                frames.append(.head(try HTTPRequestParser.parseHead(input.unread.prefix(length))))
            } catch {
                return stop(error.message)
            }
            input.consume(length)
            readingHead = false
        }
        while true {
            do {
                guard let (frame, used) = try WebSocketFrame.parseMasked(input.unread, limit: Self.maxFrameBytes)
                else { return frames }
                input.consume(used)
                frames.append(.frame(frame))
            } catch {
                done = true
                input.removeAll()
                return frames + [.failed(error.closeCode, "\(error)")]
            }
        }
    }

    private mutating func stop(_ why: String) -> [Frame] {
        done = true
        input.removeAll()
        return [.refused(why)]
    }
}
