import Crypto
import HTTP
import Synchronization

/// A complete WebSocket message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// The close frame the server sent (RFC 6455 §5.5.1).
public struct WebSocketCloseFrame: Sendable, Equatable {
    /// The status code (1000 normal, 1001 going away, ...); nil when the frame had no body
    /// (reported as 1005 by RFC 6455 §7.4.1).
    public let code: UInt16?
    /// The UTF-8 reason, possibly empty.
    public let reason: String

    /// A close frame's contents.
    public init(code: UInt16?, reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// An RFC 6455 WebSocket client over TCP (`ws://`) or TLS (`wss://`), for the gateway's
/// event stream.
///
/// `init` connects and completes the opening handshake (the Sec-WebSocket-Accept value is
/// checked). `receive(timeout:)` returns whole text messages, reassembling fragments and
/// answering pings on the way; a close frame from the server is answered and ends the
/// stream (`nil`). Frames we send are masked, as clients must.
///
/// Threading: one thread may block in `receive` while others `send` or `close`; `close()`
/// wakes a blocked receiver, which then returns nil. Concurrent receivers are serialised.
public final class WebSocketClient: Sendable {
    /// The URL connected to.
    public let url: String
    /// The 101 response's header fields (lower-cased names).
    public let responseHeaders: [String: String]
    /// Largest message (and frame) accepted, in bytes; larger ones close with 1009.
    public let maxMessageBytes: Int

    private let stream: TCPStream
    private let receiving: Mutex<ReceiveState>
    /// Whether our close frame has gone out; held while a frame is being written, so
    /// frames from different threads never interleave.
    private let sending = Mutex<Bool>(false)
    private let closeRequested = Atomic<Bool>(false)
    private let serverClose = Mutex<WebSocketCloseFrame?>(nil)

    private struct ReceiveState: Sendable {
        var reader: StreamReader
        /// Fragments of a message whose later frames have not come yet.
        var assembler: WebSocketMessageAssembler
        /// No more messages: closed by either side or failed.
        var finished = false
    }

    /// Connects to `url` (`ws://host[:port]/path?query` or `wss://`; `http://` and `https://`
    /// are accepted too; the host an IPv4/IPv6 literal, `localhost` or a DNS name) and
    /// performs the opening handshake with the extra `headers` (e.g. Authorization), all
    /// within `timeout` seconds. Over TLS the certificate is checked against `caFile` (nil:
    /// the system store) and must name the URL's host (RFC 6125): else `.tls`.
    ///
    /// Throws `.handshakeRejected(status:body:)` when the server answers anything but 101
    /// (e.g. 401 with a JSON error body), `.handshakeInvalid` for a broken 101, and the
    /// connection errors of `IrisTransportError`.
    public init(url: String, headers: [String: String] = [:], timeout: Double = 10,
                maxMessageBytes: Int = 16 << 20, caFile: String? = nil) throws(IrisTransportError) {
        let deadline = Deadline(seconds: timeout)
        let parsed = try ClientURL.parse(url)
        let tls = parsed.scheme.isSecure ? try ClientTLS(host: parsed.host, caFile: caFile, url: url) : nil
        // RFC 6455 §4.1: a fresh random 16-byte nonce, base64.
        let key = Base64.encode(Crypto.randomBytes(count: 16))

        let reserved: Set<String> = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
                                     "sec-websocket-extensions", "content-length"]
        var fields = headers.filter { !reserved.contains($0.key.lowercased()) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        fields += [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")]
        let request: [UInt8]
        do { request = try HTTPRequestWriter.head(method: "GET", target: parsed.target, host: parsed.hostHeader, headers: fields) } catch {
            throw .invalidRequest(error.message)
        }

        let stream = try TCPStream.connect(host: parsed.host, port: parsed.port, deadline: deadline, tls: tls)
        try stream.send(request, deadline: deadline, operation: "sending the WebSocket upgrade request")
        var reader = StreamReader(stream: stream)
        let headBytes = try reader.readHead(limit: 64 * 1024, deadline: deadline, operation: "waiting for the WebSocket upgrade response")
        let head: HTTPResponseHead
        do { head = try HTTPResponseHead.parse(headBytes) } catch { throw .malformedResponse(error.message) }
        guard head.status == 101 else {
            // The body usually says why (a JSON error); a body we cannot read is left out.
            let body = (try? HTTPBodyReader.read(for: head, method: "GET", from: &reader, limit: 64 * 1024, deadline: deadline)) ?? []
            stream.shutdown()
            throw .handshakeRejected(status: head.status, body: String(decoding: body, as: UTF8.self))
        }
        let expected = WebSocketHandshake.accept(key: key)
        let problem: String? =
            if head.headers["upgrade"]?.lowercased() != "websocket" {
                "Upgrade is \"\(head.headers["upgrade"] ?? "")\", not websocket"
            } else if !(head.headers["connection"] ?? "").lowercased().split(separator: ",").contains(where: { $0.trimmingSpaces() == "upgrade" }) {
                "Connection does not contain upgrade"
            } else if head.headers["sec-websocket-accept"] != expected {
                "Sec-WebSocket-Accept is \"\(head.headers["sec-websocket-accept"] ?? "")\", expected \"\(expected)\""
            } else if let extensions = head.headers["sec-websocket-extensions"] {
                "the server chose extensions (\(extensions)) the client did not offer"
            } else {
                nil
            }
        if let problem {
            stream.shutdown()
            throw .handshakeInvalid(problem)
        }
        self.url = url
        self.responseHeaders = head.headers
        self.maxMessageBytes = maxMessageBytes
        self.stream = stream
        // Bytes after the 101 head (frames sent at once) stay in the reader.
        self.receiving = Mutex(ReceiveState(reader: reader, assembler: WebSocketMessageAssembler(limit: maxMessageBytes)))
    }

    deinit {
        // The fd closes with the stream; a peer still reading sees the end of the stream.
        stream.shutdown()
    }

    /// The server's close frame, once one has arrived.
    public var closeFrame: WebSocketCloseFrame? { serverClose.withLock { $0 } }

    /// The next text message; binary messages are skipped (see `receiveMessage`). Returns
    /// nil once the WebSocket is closed cleanly (the server's close frame, or our `close()`).
    ///
    /// Throws `.timeout` when no whole message arrives within `timeout` seconds (the stream
    /// stays usable: partial data is kept for the next call), `.connectionClosed` when the
    /// TCP connection ends without a close frame, `.webSocketProtocol` when the server
    /// breaks the framing rules (the connection is then closed).
    public func receive(timeout: Double) throws(IrisTransportError) -> String? {
        let deadline = Deadline(seconds: timeout)
        while true {
            switch try receiveMessage(deadline: deadline) {
            case .text(let text): return text
            case .binary: continue
            case nil: return nil
            }
        }
    }

    /// The next message, text or binary; nil once closed cleanly (as `receive(timeout:)`).
    public func receiveMessage(timeout: Double) throws(IrisTransportError) -> WebSocketMessage? {
        try receiveMessage(deadline: Deadline(seconds: timeout))
    }

    /// Sends a text message in one frame.
    public func send(text: String, timeout: Double = 5) throws(IrisTransportError) {
        try sendData(.text, Array(text.utf8), timeout: timeout)
    }

    /// Sends a binary message in one frame.
    public func send(binary: [UInt8], timeout: Double = 5) throws(IrisTransportError) {
        try sendData(.binary, binary, timeout: timeout)
    }

    /// Sends a ping (at most 125 bytes of payload); the pong is consumed by `receive`.
    public func ping(_ payload: [UInt8] = [], timeout: Double = 5) throws(IrisTransportError) {
        guard payload.count <= 125 else { throw .invalidRequest("a ping payload is at most 125 bytes, got \(payload.count)") }
        try sendData(.ping, payload, timeout: timeout)
    }

    /// Starts the closing handshake with `code` and ends the connection: waits up to one
    /// second for the server's close frame when no other thread is receiving, otherwise
    /// wakes that thread (its `receive` returns nil). Idempotent; never throws.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard !closeRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        sendClose(code: code, reason: reason)
        receiving.withLockIfAvailable { state in
            let deadline = Deadline(seconds: 1)
            // Read until the server's answering close frame (or the end); messages after
            // our close are discarded, as RFC 6455 §1.4 allows.
            while !state.finished {
                guard let frame = try? nextFrame(&state, deadline: deadline) else { break }
                if frame.opcode == .close {
                    noteServerClose(frame.payload)
                    break
                }
            }
            state.finished = true
        }
        stream.shutdown()
    }

    // MARK: - Receiving

    private func receiveMessage(deadline: Deadline) throws(IrisTransportError) -> WebSocketMessage? {
        try receiving.withLock { (state) throws(IrisTransportError) -> WebSocketMessage? in
            do throws(IrisTransportError) {
                return try receiveLocked(&state, deadline: deadline)
            } catch {
                switch error {
                case .timeout:
                    throw error
                case .webSocketProtocol(_, let code):
                    fail(&state, code: code)
                    throw error
                case .tooLarge:
                    fail(&state, code: 1009)
                    throw error
                default:
                    state.finished = true
                    // A local close() shuts the socket under a blocked receive: a clean end.
                    if closeRequested.load(ordering: .acquiring) { return nil }
                    stream.shutdown()
                    throw error
                }
            }
        }
    }

    private func receiveLocked(_ state: inout ReceiveState, deadline: Deadline) throws(IrisTransportError) -> WebSocketMessage? {
        while !state.finished {
            guard let frame = try nextFrame(&state, deadline: deadline) else {
                state.finished = true
                if closeRequested.load(ordering: .acquiring) { return nil }
                throw .connectionClosed(during: "WebSocket receive (the server ended the connection without a close frame)")
            }
            switch frame.opcode {
            case .ping:
                // Best effort: if the pong cannot go out, the next read reports why.
                try? sendFrame(WebSocketFrame(fin: true, opcode: .pong, payload: frame.payload), deadline: Deadline(seconds: 2))
            case .pong:
                continue
            case .close:
                guard frame.payload.count != 1 else { throw .webSocketProtocol("close frame with a 1-byte body", code: 1002) }
                let received = noteServerClose(frame.payload)
                // Echo the code (§5.5.1); 1005 means "none given" and must not be sent.
                sendClose(code: received.code ?? 1000, reason: "")
                state.finished = true
                stream.shutdown()
                return nil
            case .text, .binary, .continuation:
                let whole: (opcode: WebSocketFrame.Opcode, payload: [UInt8])?
                do { whole = try state.assembler.add(frame) } catch { throw IrisTransportError(error) }
                if let (opcode, payload) = whole { return try message(opcode, payload) }
            }
        }
        return nil
    }

    /// The next whole frame, or nil at the end of the stream. Bytes are consumed only once
    /// a whole frame is buffered, so a timeout loses nothing.
    private func nextFrame(_ state: inout ReceiveState, deadline: Deadline) throws(IrisTransportError) -> WebSocketFrame? {
        while true {
            let parsed: (WebSocketFrame, Int)?
            do { parsed = try WebSocketFrame.parse(state.reader.unread, limit: maxMessageBytes) } catch { throw IrisTransportError(error) }
            if let (frame, length) = parsed {
                state.reader.consume(length)
                return frame
            }
            guard try state.reader.fill(deadline: deadline, operation: "waiting for a WebSocket message") else { return nil }
        }
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8]) throws(IrisTransportError) -> WebSocketMessage {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw .webSocketProtocol("text message is not valid UTF-8", code: 1007)
        }
        return .text(text)
    }

    @discardableResult
    private func noteServerClose(_ payload: [UInt8]) -> WebSocketCloseFrame {
        let frame = payload.count >= 2
            ? WebSocketCloseFrame(code: UInt16(payload[0]) << 8 | UInt16(payload[1]),
                                  reason: String(decoding: payload.dropFirst(2), as: UTF8.self))
            : WebSocketCloseFrame(code: nil, reason: "")
        serverClose.withLock { $0 = frame }
        return frame
    }

    /// Fails the connection (§7.1.7): a close frame with `code`, then no more reading.
    private func fail(_ state: inout ReceiveState, code: UInt16) {
        sendClose(code: code, reason: "")
        state.finished = true
        stream.shutdown()
    }

    // MARK: - Sending

    private func sendData(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8], timeout: Double) throws(IrisTransportError) {
        guard !closeRequested.load(ordering: .acquiring) else { throw .closed }
        try sendFrame(WebSocketFrame(fin: true, opcode: opcode, payload: payload), deadline: Deadline(seconds: timeout))
    }

    /// Writes one frame whole (under the send lock); nothing goes out after our close frame.
    private func sendFrame(_ frame: WebSocketFrame, deadline: Deadline) throws(IrisTransportError) {
        let bytes = frame.encodedMasked(key: UInt32.random(in: .min ... .max))
        try sending.withLock { (closeSent) throws(IrisTransportError) in
            guard !closeSent else { throw .closed }
            if frame.opcode == .close { closeSent = true }
            try stream.send(bytes, deadline: deadline, operation: "sending a WebSocket \(frame.opcode) frame")
        }
    }

    /// Sends our close frame once (best effort: the connection may already be gone).
    private func sendClose(code: UInt16, reason: String) {
        try? sendFrame(WebSocketFrame(fin: true, opcode: .close, payload: WebSocketFrame.closePayload(code: code, reason: reason)),
                       deadline: Deadline(seconds: 1))
    }
}
