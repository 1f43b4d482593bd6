// The control API connection's framer: HTTP requests until a 101, then WebSocket frames.
// The stream layer's connection has one framer type, so the switch is a state of this one
// (`StreamConnection.replaceFramer` hands the new state the bytes the HTTP one still held).

import IOCore

enum HTTPOrWebSocketFramer: StreamFramer {
    case http(HTTPRequestFramer)
    case webSocket(WebSocketServerFramer)

    enum Frame {
        case http(HTTPRequestFramer.Frame)
        case webSocket(WebSocketServerFramer.Frame)
    }

    var pending: Int {
        switch self {
        case .http(let framer): framer.pending
        case .webSocket(let framer): framer.pending
        }
    }

    /// A request body is being read.
    var inBody: Bool {
        if case .http(let framer) = self { return framer.inBody }
        return false
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [Frame] {
        switch self {
        case .http(var framer):
            self = Self.placeholder  // so the buffer is not shared (and copied) while it grows
            let frames = framer.append(bytes)
            self = .http(framer)
            return frames.map(Frame.http)
        case .webSocket(var framer):
            self = Self.placeholder
            let frames = framer.append(bytes)
            self = .webSocket(framer)
            return frames.map(Frame.webSocket)
        }
    }

    private static let placeholder = HTTPOrWebSocketFramer.webSocket(WebSocketServerFramer(limit: 0))

    /// Lets the request after the answered one come out.
    mutating func nextRequest() {
        guard case .http(var framer) = self else { return }
        framer.nextRequest()
        self = .http(framer)
    }

    /// From now on every byte is dropped.
    mutating func discard() {
        guard case .http(var framer) = self else {
            self = .http(HTTPRequestFramer(maxHeaderBytes: 0, maxBodyBytes: 0))
            discard()
            return
        }
        framer.discard()
        self = .http(framer)
    }

    /// Bytes received behind the last request, not framed.
    var unread: [UInt8] {
        if case .http(let framer) = self { return framer.takeUnread() }
        return []
    }
}
