// Cuts HTTP/1.1 requests out of a connection's bytes for the stream layer, with the HTTP
// module's grammar: a head (bounded by `maxHeaderBytes`), the body in pieces (bounded by
// `maxBodyBytes`, by Content-Length before reading or while decoding chunks), then `.end`.
// One request at a time: after `.end` the bytes behind it (a pipelined request) are held
// until the connection takes the next one (`nextRequest()`), so requests are answered in
// order. A request the server refuses is a frame (`.refused`), not a framing error, so the
// connection can answer it before it closes; everything after it is dropped.

import HTTP
import IOCore

struct HTTPRequestFramer: StreamFramer {
    enum Frame {
        /// A request head; `sendContinue`: it asked for 100 Continue and its body has not
        /// started to arrive.
        case head(HTTPRequestHead, sendContinue: Bool)
        /// The next piece of the body.
        case body([UInt8])
        /// The request is complete.
        case end
        /// Not a request the server takes (400, 413, 431 ...).
        case refused(HTTPRequestError)
    }

    private enum State {
        /// Looking for a head; `searched` bytes already hold no head end.
        case head(searched: Int)
        case body(remaining: Int)
        case chunked(ChunkedBodyDecoder)
        /// A request is complete and being answered: bytes are held.
        case held
        /// A request was refused: bytes are dropped.
        case discarding
    }

    let maxHeaderBytes: Int
    let maxBodyBytes: Int
    private var input = ByteBuffer()
    private var state = State.head(searched: 0)

    init(maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes of a request begun; above 0 through the whole body (its deadline runs), 0 while
    /// a request is answered or refused.
    var pending: Int {
        switch state {
        case .head: input.count
        case .body, .chunked: input.count + 1
        case .held, .discarding: 0
        }
    }

    /// Reading a body (a timeout now is the body's).
    var inBody: Bool {
        switch state {
        case .body, .chunked: true
        default: false
        }
    }

    /// Bytes received and not framed (what follows an upgrade request).
    func takeUnread() -> [UInt8] { Array(input.unread) }

    /// Drops what is held and all that comes (a connection lingering after its answer).
    mutating func discard() {
        state = .discarding
        input.removeAll()
    }

    /// The answered request's successor may come out now.
    mutating func nextRequest() {
        if case .held = state { state = .head(searched: 0) }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Never) -> [Frame] {
        if case .discarding = state { return [] }
        input.append(bytes)
        var frames: [Frame] = []
        while true {
            switch state {
            case .held, .discarding:
                return frames
            case .head(let searched):
                guard let cut = readHead(searched: searched) else { return frames }
                frames += cut
            case .body(let remaining):
                let n = min(remaining, input.count)
                guard n > 0 else { return frames }
                frames.append(.body(Array(input.unread.prefix(n))))
                input.consume(n)
                if n == remaining {
                    frames.append(.end)
                    state = .held
                } else {
                    state = .body(remaining: remaining - n)
                }
            case .chunked(var decoder):
                do {
                    let done = try decoder.decode(&input)
                    guard done else {
                        state = .chunked(decoder)
                        return frames
                    }
                    frames.append(.body(decoder.body))
                    frames.append(.end)
                    state = .held
                } catch {
                    frames.append(refuse(error))
                }
            }
        }
    }

    private mutating func refuse(_ error: HTTPRequestError) -> Frame {
        state = .discarding
        input.removeAll()
        return .refused(error)
    }

    /// The next head (and `.end` when it has no body), a refusal, or nil while the head is
    /// incomplete.
    private mutating func readHead(searched: Int) -> [Frame]? {
        if searched == 0 {
            // RFC 9112 §2.2: empty lines before a request line are ignored.
            while input.unread.starts(with: [13, 10]) { input.consume(2) }
        }
        guard !input.isEmpty else { return nil }
        guard let length = HTTPRequestParser.headLength(input.unread, from: searched) else {
            if input.count > maxHeaderBytes { return [refuse(HTTPRequestError(431, "request head too large"))] }
            state = .head(searched: input.count)
            return nil
        }
        guard length <= maxHeaderBytes else { return [refuse(HTTPRequestError(431, "request head too large"))] }
        let head: HTTPRequestHead
        do {
            head = try HTTPRequestParser.parseHead(input.unread.prefix(length))
        } catch {
            return [refuse(error)]
        }
        input.consume(length)
        switch head.body {
        case .none:
            state = .held
            return [.head(head, sendContinue: false), .end]
        case .length(let n):
            if head.wantsWebSocket { return [refuse(HTTPRequestError(400, "a WebSocket upgrade has no body"))] }
            // Refused before reading: with Expect: 100-continue the body is never sent.
            guard n <= maxBodyBytes else { return [refuse(HTTPRequestError(413, "request body too large"))] }
            guard n > 0 else {
                state = .held
                return [.head(head, sendContinue: false), .end]
            }
            state = .body(remaining: n)
        case .chunked:
            if head.wantsWebSocket { return [refuse(HTTPRequestError(400, "a WebSocket upgrade has no body"))] }
            state = .chunked(ChunkedBodyDecoder(maxBodyBytes: maxBodyBytes, maxTrailerBytes: maxHeaderBytes))
        }
        return [.head(head, sendContinue: head.expectsContinue && input.isEmpty)]
    }
}
