import HTTP
import IOCore

/// A WebSocket client's framer: the upgrade's response first (`HTTPResponseFramer`), then,
/// after a 101, the server's frames (`WebSocketFrameFramer`), the bytes that came with the
/// 101 handed over. A framing error is given as the last frame (`.invalid`) so the owner
/// can send its close frame with the code before the connection ends.
struct WebSocketUpgradeFramer: StreamFramer {
    enum Frame {
        /// The answer to the upgrade request (a 101, or a refusal with its body).
        case response(HTTPClientResponse)
        case frame(WebSocketFrame)
        /// The server broke RFC 6455 framing; nothing after it is read.
        case invalid(WebSocketFrameError)
    }
    typealias Failure = IrisTransportError

    private enum State {
        case upgrading(HTTPResponseFramer)
        case frames(WebSocketFrameFramer)
        case broken
    }

    private var state: State
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        state = .upgrading(HTTPResponseFramer(method: "GET", maxBodyBytes: 64 * 1024, upgrade: true))
    }

    var pending: Int {
        switch state {
        case .upgrading(let http): http.pending
        case .frames(let ws): ws.pending
        case .broken: 0
        }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(IrisTransportError) -> [Frame] {
        switch state {
        case .broken:
            return []
        case .frames(var ws):
            return frames(ws.add(bytes), ws)
        case .upgrading(var http):
            let responses = try http.append(bytes)
            guard let response = responses.first else {
                state = .upgrading(http)
                return []
            }
            guard http.isUpgraded else {
                state = .broken
                return [.response(response)]
            }
            var ws = WebSocketFrameFramer(limit: limit, buffer: http.takeLeftover())
            return [.response(response)] + frames(ws.add(), ws)
        }
    }

    private mutating func frames(_ cut: ([WebSocketFrame], WebSocketFrameError?), _ ws: WebSocketFrameFramer) -> [Frame]
    {
        var out: [Frame] = cut.0.map { .frame($0) }
        if let error = cut.1 {
            state = .broken
            out.append(.invalid(error))
        } else {
            state = .frames(ws)
        }
        return out
    }

    /// The peer closed the connection during the upgrade: a refusal whose body ran to the end.
    mutating func endOfStream(during operation: String) throws(IrisTransportError) -> HTTPClientResponse? {
        guard case .upgrading(var http) = state else { return nil }
        return try http.endOfStream(during: operation)
    }
}
