import Crypto
import DNS
import Dispatch
import HTTP
import IOCore
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
/// checked). `receive(timeout:)` returns whole text messages, reassembled from fragments;
/// pings are answered as they arrive; a close frame from the server is answered and ends
/// the stream (`nil`). Frames we send are masked, as clients must.
///
/// The connection runs on the shared client event loop (the name resolved with the DNS
/// module, each address tried in turn); the caller's thread waits on its own side for what
/// the loop has read. Threading: any number of threads may `receive`, `send` and `close` at
/// once; `close()` wakes the receivers, which then return nil.
public final class WebSocketClient: Sendable {
    /// The URL connected to.
    public let url: String
    /// The 101 response's header fields (lower-cased names).
    public let responseHeaders: [String: String]
    /// Largest message (and frame) accepted, in bytes; larger ones close with 1009.
    public let maxMessageBytes: Int

    private let session: LoopBound<WebSocketSession>
    private let inbox: WebSocketInbox
    /// A `pullFeed` is queued on the loop.
    private let pullScheduled = SharedFlag()

    /// Connects to `url` (`ws://host[:port]/path?query` or `wss://`; `http://` and `https://`
    /// are accepted too; the host an IPv4/IPv6 literal, `localhost` or a DNS name) and
    /// performs the opening handshake with the extra `headers` (e.g. Authorization), all
    /// within `timeout` seconds. Over TLS the certificate is checked against `caFile` (nil:
    /// the system store) and must name the URL's host (RFC 6125): else `.tls`. A host name
    /// is resolved through `dns` (default: the system's servers).
    ///
    /// Throws `.handshakeRejected(status:body:)` when the server answers anything but 101
    /// (e.g. 401 with a JSON error body), `.handshakeInvalid` for a broken 101, and the
    /// connection errors of `IrisTransportError`.
    public init(
        url: String, headers: [String: String] = [:], timeout: Double = 10,
        maxMessageBytes: Int = 16 << 20, caFile: String? = nil,
        dns: DNSResolverConfiguration = DNSResolverConfiguration()
    ) throws(IrisTransportError) {
        let upgrade = try Upgrade(url: url, headers: headers, caFile: caFile)
        let inbox = WebSocketInbox()
        let loop = ClientLoop.shared.loop
        loop.assertNotHere()
        let outcome = Mutex<Result<Opened, IrisTransportError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Self.open(upgrade, timeout: timeout, maxMessageBytes: maxMessageBytes, dns: dns, inbox: inbox) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        // The loop answers by the deadline; the margin only guards a stuck loop.
        if done.wait(timeout: .now() + max(0, timeout.isNaN ? 0 : timeout) + 5) == .timedOut {
            throw .timeout(operation: "the WebSocket upgrade (the client loop did not answer)", seconds: timeout)
        }
        let opened = try outcome.withLock { $0! }.get()
        self.url = url
        self.responseHeaders = opened.headers
        self.maxMessageBytes = maxMessageBytes
        self.session = opened.session
        self.inbox = inbox
    }

    /// `init(url:...)` without waiting: connects and upgrades on the client loop, then calls
    /// `completion` there with the open client or why it could not open (the errors of
    /// `init`). The client's messages and its end go to `handler` (on the loop, in order; the
    /// end once, last) instead of `receive`. For callers that must never block (a media
    /// thread); `send`, `feed` and `closeWithoutWaiting` never wait either.
    public static func connect(
        url: String, headers: [String: String] = [:], timeout: Double = 10,
        maxMessageBytes: Int = 16 << 20, caFile: String? = nil,
        dns: DNSResolverConfiguration = DNSResolverConfiguration(),
        handler: @escaping @Sendable (WebSocketEvent) -> Void,
        completion: @escaping @Sendable (Result<WebSocketClient, IrisTransportError>) -> Void
    ) {
        let upgrade: Upgrade
        do {
            upgrade = try Upgrade(url: url, headers: headers, caFile: caFile)
        } catch {
            return ClientLoop.shared.loop.execute { completion(.failure(error)) }
        }
        let inbox = WebSocketInbox(handler: handler)
        open(upgrade, timeout: timeout, maxMessageBytes: maxMessageBytes, dns: dns, inbox: inbox) { result in
            completion(
                result.map {
                    WebSocketClient(
                        url: url, headers: $0.headers, maxMessageBytes: maxMessageBytes, session: $0.session,
                        inbox: inbox)
                })
        }
    }

    /// An upgraded connection: its session and the 101's header fields.
    private typealias Opened = (session: LoopBound<WebSocketSession>, headers: [String: String])

    /// The opening request of one connection: the URL taken apart, the trust, the nonce.
    private struct Upgrade: Sendable {
        let url: String
        let parsed: ClientURL
        let tls: ClientTLS?
        let key: String
        let request: [UInt8]

        init(url: String, headers: [String: String], caFile: String?) throws(IrisTransportError) {
            self.url = url
            parsed = try ClientURL.parse(url)
            tls = parsed.scheme.isSecure ? try ClientTLS(host: parsed.host, caFile: caFile, url: url) : nil
            // RFC 6455 §4.1: a fresh random 16-byte nonce, base64.
            key = Base64.encode(Crypto.randomBytes(count: 16))
            let reserved: Set<String> = [
                "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
                "sec-websocket-extensions", "content-length"
            ]
            var fields = headers.filter { !reserved.contains($0.key.lowercased()) }.sorted { $0.key < $1.key }.map {
                ($0.key, $0.value)
            }
            fields += [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
                ("Sec-WebSocket-Version", "13")
            ]
            do {
                request = try HTTPRequestWriter.head(
                    method: "GET", target: parsed.target, host: parsed.hostHeader, headers: fields)
            } catch {
                throw .invalidRequest(error.message)
            }
        }

        /// Why the server's 101 does not open this WebSocket (RFC 6455 §4.1), or nil.
        func problem(with head: HTTPClientResponse) -> String? {
            let expected = WebSocketHandshake.accept(key: key)
            return if head.headers["upgrade"]?.lowercased() != "websocket" {
                "Upgrade is \"\(head.headers["upgrade"] ?? "")\", not websocket"
            } else if !(head.headers["connection"] ?? "").lowercased().split(separator: ",").contains(where: {
                $0.trimmingSpaces() == "upgrade"
            }) {
                "Connection does not contain upgrade"
            } else if head.headers["sec-websocket-accept"] != expected {
                "Sec-WebSocket-Accept is \"\(head.headers["sec-websocket-accept"] ?? "")\", expected \"\(expected)\""
            } else if let extensions = head.headers["sec-websocket-extensions"] {
                "the server chose extensions (\(extensions)) the client did not offer"
            } else {
                nil
            }
        }
    }

    /// Opens the session on the loop; `completion` (on the loop) gets the client once the
    /// 101 checked out.
    private static func open(
        _ upgrade: Upgrade, timeout: Double, maxMessageBytes: Int, dns: DNSResolverConfiguration,
        inbox: WebSocketInbox, completion: @escaping @Sendable (Result<Opened, IrisTransportError>) -> Void
    ) {
        let loop = ClientLoop.shared.loop
        loop.execute {
            var session: WebSocketSession?
            session = WebSocketSession(
                url: upgrade.parsed, tls: upgrade.tls, dns: dns, request: upgrade.request,
                maxMessageBytes: maxMessageBytes, timeout: timeout, inbox: inbox, loop: loop
            ) { result in
                // Called once; on the loop, where the session may be bound (possibly from its init).
                let opened = result.flatMap { head -> Result<Opened, IrisTransportError> in
                    guard head.status == 101 else {
                        return .failure(
                            .handshakeRejected(status: head.status, body: String(decoding: head.body, as: UTF8.self)))
                    }
                    if let problem = upgrade.problem(with: head) {
                        session!.abandon()
                        return .failure(.handshakeInvalid(problem))
                    }
                    inbox.arm()
                    return .success((LoopBound(session!, loop: loop), head.headers))
                }
                completion(opened)
            }
        }
    }

    private init(
        url: String, headers: [String: String], maxMessageBytes: Int, session: LoopBound<WebSocketSession>,
        inbox: WebSocketInbox
    ) {
        self.url = url
        self.responseHeaders = headers
        self.maxMessageBytes = maxMessageBytes
        self.session = session
        self.inbox = inbox
    }

    deinit {
        // A peer still reading sees the end of the stream.
        let session = session
        if !inbox.closeRequested.load(ordering: .acquiring) { session.loop.execute { session.value.abandon() } }
    }

    /// The server's close frame, once one has arrived.
    public var closeFrame: WebSocketCloseFrame? { inbox.serverClose }

    /// The next text message; binary messages are skipped (see `receiveMessage`). Returns
    /// nil once the WebSocket is closed cleanly (the server's close frame, or our `close()`).
    ///
    /// Throws `.timeout` when no whole message arrives within `timeout` seconds (the stream
    /// stays usable: partial data is kept for the next call), `.connectionClosed` when the
    /// TCP connection ends without a close frame, `.webSocketProtocol` when the server
    /// breaks the framing rules (the connection is then closed).
    public func receive(timeout: Double) throws(IrisTransportError) -> String? {
        let deadline = EventLoop.now() + timeout
        while true {
            switch try inbox.next(timeout: max(0, deadline - EventLoop.now())) {
            case .text(let text): return text
            case .binary: continue
            case nil: return nil
            }
        }
    }

    /// The next message, text or binary; nil once closed cleanly (as `receive(timeout:)`).
    public func receiveMessage(timeout: Double) throws(IrisTransportError) -> WebSocketMessage? {
        try inbox.next(timeout: timeout)
    }

    /// Sends a text message in one frame. The frame is queued on the connection (bounded);
    /// `timeout` is kept for source compatibility: sending never waits for the peer.
    public func send(text: String, timeout: Double = 5) throws(IrisTransportError) {
        try sendData(.text, Array(text.utf8))
    }

    /// Sends a binary message in one frame.
    public func send(binary: [UInt8], timeout: Double = 5) throws(IrisTransportError) {
        try sendData(.binary, binary)
    }

    /// Sends a ping (at most 125 bytes of payload); the pong is consumed by `receive`.
    public func ping(_ payload: [UInt8] = [], timeout: Double = 5) throws(IrisTransportError) {
        guard payload.count <= 125 else {
            throw .invalidRequest("a ping payload is at most 125 bytes, got \(payload.count)")
        }
        try sendData(.ping, payload)
    }

    /// Starts the closing handshake with `code` and ends the connection: waits up to one
    /// second for the server's close frame; receivers on other threads wake and return nil.
    /// Idempotent; never throws.
    public func close(code: UInt16 = 1000, reason: String = "") {
        session.loop.assertNotHere()
        let done = DispatchSemaphore(value: 0)
        guard startClose(code: code, reason: reason, done: { done.signal() }) else { return }
        _ = done.wait(timeout: .now() + 2)
    }

    /// `close` without waiting: the close frame is queued after every frame sent before it,
    /// and the connection ends when the server answers (or after one second). Idempotent.
    public func closeWithoutWaiting(code: UInt16 = 1000, reason: String = "") {
        startClose(code: code, reason: reason, done: {})
    }

    @discardableResult
    private func startClose(code: UInt16, reason: String, done: @escaping @Sendable () -> Void) -> Bool {
        guard !inbox.closeRequested.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        inbox.wake()
        let session = session
        session.loop.execute { session.value.close(code: code, reason: reason, done: done) }
        return true
    }

    /// Makes the connection pull what it sends: on the client loop, `next` is asked for text
    /// messages while fewer than `lowWater` bytes wait to leave, again each time the socket
    /// has taken everything queued, and after `pullFeed()`. So the caller keeps its own
    /// bounded queue and chooses what to drop when the peer reads slowly; nil: nothing now.
    /// `next` runs on the loop (keep it short).
    public func feed(lowWater: Int, next: @escaping @Sendable () -> String?) {
        let session = session
        session.loop.execute { session.value.feed(lowWater: lowWater, next: next) }
    }

    /// Asks the loop to pull from the feed (several calls before it runs make one pull).
    /// Never waits.
    public func pullFeed() {
        guard !pullScheduled.value.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let session = session
        let scheduled = pullScheduled
        session.loop.execute {
            scheduled.value.store(false, ordering: .releasing)
            session.value.pullFeed()
        }
    }

    /// Queues one frame on the loop, in the order of the calls; nothing after our close frame.
    private func sendData(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8]) throws(IrisTransportError) {
        guard !inbox.closeRequested.load(ordering: .acquiring), !inbox.sendClosed else { throw .closed }
        let session = session
        session.loop.execute { session.value.send(WebSocketFrame(fin: true, opcode: opcode, payload: payload)) }
    }
}

/// An atomic flag that closures on another thread can hold.
private final class SharedFlag: Sendable {
    let value = Atomic<Bool>(false)
}
