import IOCore
import Logging
import TLS

/// Settings for `HTTPServer`, including every bound that keeps an unauthenticated client
/// from tying up the server (docs/operations.md has them in a table).
public struct HTTPServerConfiguration: Sendable {
    /// Where to listen: "127.0.0.1:8080", "[::1]:8080", "[::]:8080" (IPv6 and IPv4 on every
    /// interface), "0.0.0.0:8080", or "8080" (every IPv4 interface). Numeric hosts only.
    /// Port 0 lets the OS pick; `HTTPServer.start()` returns the real port.
    public var listen: String
    /// Worker threads that run the handler (and the upgrade callback). Only complete
    /// requests reach them, so a slow client never holds one. Default 8.
    public var threads: Int
    /// Complete requests waiting for a free worker, at most; one more gets 503 JSON
    /// (counted as `workersBusy`). Default 256.
    public var requestQueueLimit: Int
    /// The largest request body a handler is given; bigger ones (by Content-Length, before
    /// reading, or counted while reading a chunked body) get a 413 JSON error, the handler is
    /// not called and the connection closes. Default 64 KiB.
    public var maxBodyBytes: Int
    /// The largest request head (request line and header fields); a bigger one gets 431 and
    /// the connection closes. Default 16 KiB.
    public var maxHeaderBytes: Int
    /// Seconds for a whole request head to arrive, counted from the connection's accept (first
    /// request) or from the first byte of the request (keep-alive). Then: 408 and close.
    /// Default 10 s.
    public var headerTimeout: Double
    /// Seconds for the body to arrive once the head is in; then 408 and close. Default 10 s.
    public var bodyTimeout: Double
    /// Seconds a keep-alive connection may wait for its next request (and a response may
    /// wait for the client to read it); then it is closed. Default 30 s.
    public var idleTimeout: Double
    /// Open connections at most (HTTP and WebSocket); more are closed at accept. Default 1024.
    public var maxConnections: Int
    /// Open connections from one client address at most (an IPv6 client's /64 counts as one
    /// address); more are closed at accept. Default 64.
    public var maxConnectionsPerSource: Int
    /// Open WebSockets at most. When full, a new one replaces the slowest of its own group, or
    /// gets 503 when its group has none. Default 512.
    public var maxWebSockets: Int
    /// Open WebSockets per client group (`WebSocketUpgrade.accept(group:)`); a new one beyond
    /// it replaces the group's slowest (most messages queued unsent). Default 128.
    public var maxWebSocketsPerClient: Int
    /// Messages queued per WebSocket before the client counts as too slow and is dropped.
    /// Default 1024.
    public var webSocketQueueLimit: Int
    /// The largest message a client may send on a WebSocket, fragments added up; a bigger one
    /// closes the connection with 1009. Default 64 KiB.
    public var maxWebSocketMessageBytes: Int
    /// Seconds a closing WebSocket (`close()`, `stop()`) waits for the client's close frame
    /// before the connection is cut. Default 1 s.
    public var webSocketCloseGrace: Double
    /// HTTPS and WSS only, with this certificate and key (nil: plain HTTP). The files are
    /// read at `start()` and again on `HTTPServer.reloadTLS()`.
    public var tls: TLSServerSettings?
    /// Writes the server's rare log lines (accept back-off when out of file descriptors:
    /// warning; TLS failures with their reason: notice). They never hold request data.
    /// Default nil: they are dropped (`irisgw serve` gives it `Logger(.api)`).
    public var log: Logger?

    /// Every setting with its documented default.
    public init(
        listen: String = "127.0.0.1:8080",
        threads: Int = 8,
        maxBodyBytes: Int = 65_536,
        webSocketQueueLimit: Int = 1024,
        requestQueueLimit: Int = 256,
        maxHeaderBytes: Int = 16_384,
        headerTimeout: Double = 10,
        bodyTimeout: Double = 10,
        idleTimeout: Double = 30,
        maxConnections: Int = 1024,
        maxConnectionsPerSource: Int = 64,
        maxWebSockets: Int = 512,
        maxWebSocketsPerClient: Int = 128,
        maxWebSocketMessageBytes: Int = 65_536,
        webSocketCloseGrace: Double = 1,
        tls: TLSServerSettings? = nil,
        log: Logger? = nil
    ) {
        self.tls = tls
        self.listen = listen
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.webSocketQueueLimit = webSocketQueueLimit
        self.requestQueueLimit = requestQueueLimit
        self.maxHeaderBytes = maxHeaderBytes
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerSource = maxConnectionsPerSource
        self.maxWebSockets = maxWebSockets
        self.maxWebSocketsPerClient = maxWebSocketsPerClient
        self.maxWebSocketMessageBytes = maxWebSocketMessageBytes
        self.webSocketCloseGrace = webSocketCloseGrace
        self.log = log
    }

    /// The first setting that cannot work, or nil.
    func problem() -> String? {
        let counts: [(String, Int, Int)] = [
            ("threads", threads, 1), ("requestQueueLimit", requestQueueLimit, 1), ("maxBodyBytes", maxBodyBytes, 0),
            ("maxHeaderBytes", maxHeaderBytes, 256), ("maxConnections", maxConnections, 1),
            ("maxConnectionsPerSource", maxConnectionsPerSource, 1), ("maxWebSockets", maxWebSockets, 1),
            ("maxWebSocketsPerClient", maxWebSocketsPerClient, 1), ("webSocketQueueLimit", webSocketQueueLimit, 1),
            ("maxWebSocketMessageBytes", maxWebSocketMessageBytes, 125)
        ]
        for (name, value, least) in counts where value < least {
            return "\(name) must be at least \(least) (got \(value))"
        }
        let times: [(String, Double)] = [
            ("headerTimeout", headerTimeout), ("bodyTimeout", bodyTimeout),
            ("idleTimeout", idleTimeout), ("webSocketCloseGrace", webSocketCloseGrace)
        ]
        for (name, value) in times where !(value > 0 && value < 86_400) {
            return "\(name) must be between 0 and 86400 s (got \(value))"
        }
        return nil
    }
}

extension HTTPServerConfiguration {
    /// The address `listen` names; a bare port means every IPv4 interface. "[::]" is
    /// dual-stack (IPv4 clients too); other IPv6 addresses are IPv6 only.
    func listenAddress() throws(HTTPServerError) -> SocketAddress {
        if !listen.isEmpty, listen.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let port = Int(listen),
            port <= 65_535
        {
            return SocketAddress(host: "0.0.0.0", port: port)
        }
        guard let address = SocketAddress.parse(listen, defaultPort: -1), address.port >= 0, !address.host.isEmpty
        else {
            throw HTTPServerError("listen must be host:port or [v6]:port (got \"\(listen)\")")
        }
        return address
    }
}
