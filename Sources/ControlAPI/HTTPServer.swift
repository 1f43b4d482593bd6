// The only file that touches CivetWeb. Every C pointer stays here; callers see
// `HTTPServer`, `HTTPRequest`, `HTTPResponse` and `WebSocketConnection`.
//
// Threading: CivetWeb runs handlers on its worker threads, one connection per worker for
// the connection's life (a WebSocket holds its worker until it closes). The C callbacks
// find their Swift side through `Unmanaged`: the server's `ServerCore` as CivetWeb's user
// data (owned by `HTTPServer`, which outlives the CivetWeb context), and each
// `WebSocketConnection` as connection data (retained from the upgrade until CivetWeb's
// `connection_close`).
//
// What CivetWeb 1.15 makes us do ourselves:
// - No pong or close reply: the data handler answers both.
// - No response from the WebSocket connect handler through mg_response_header_*: a refused
//   upgrade is written raw.
// - No way to close a WebSocket from another thread while a write is blocked on a client
//   that does not read (mg_disable_connection_keep_alive only ends the read loop at its next
//   poll). CivetWeb does not expose the socket, so the upgrade handler finds it by its
//   address pair and `abort()` shuts it down, which fails the blocked write at once.
// - mg_stop waits up to 2 s for the accept thread's poll; `stopCivetWeb` wakes it.
// - mg_start ignores SIGPIPE for the whole process (CivetWeb writes with MSG_NOSIGNAL anyway).
// - Debian's build has no IPv6: IPv4 listen addresses only.
// Port 0 needs nothing special: mg_get_server_ports reports the port the OS picked.

internal import CCivetWeb
import Foundation
import Glibc
import Synchronization

/// An HTTP/1.1 and WebSocket server (CivetWeb) for the control API.
public final class HTTPServer: Sendable {
    /// The settings the server was created with.
    public let configuration: HTTPServerConfiguration

    private enum Lifecycle {
        case idle
        case running(CivetHandle, port: Int)
        case stopped
    }

    private let core: ServerCore
    private let lifecycle = Mutex(Lifecycle.idle)

    /// - Parameters:
    ///   - handler: answers every request that is not a WebSocket upgrade, on any path.
    ///   - webSocket: called for each upgrade request: nil accepts it, a response refuses
    ///     it (e.g. 401) and is sent as is.
    ///   - onWebSocketOpen: the handshake is done; `send(text:)` may be used from now on.
    ///   - onWebSocketClose: called exactly once per opened connection, whoever closed it.
    /// All of them run on CivetWeb worker threads; a slow handler holds its worker.
    public init(configuration: HTTPServerConfiguration,
                handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
                webSocket: @escaping @Sendable (HTTPRequest) -> HTTPResponse?,
                onWebSocketOpen: @escaping @Sendable (WebSocketConnection) -> Void,
                onWebSocketClose: @escaping @Sendable (WebSocketConnection) -> Void) {
        self.configuration = configuration
        core = ServerCore(configuration: configuration, handler: handler, webSocket: webSocket,
                          onOpen: onWebSocketOpen, onClose: onWebSocketClose)
    }

    deinit {
        stop()
    }

    /// The bound port while running, else nil.
    public var port: Int? {
        lifecycle.withLock { state in
            if case .running(_, let port) = state { return port }
            return nil
        }
    }

    /// Starts listening and returns the bound port (the OS's pick when the configured port is 0).
    /// Throws `HTTPServerError` when the address cannot be bound (e.g. port in use), the
    /// configuration is invalid, or the server was already started.
    public func start() throws -> Int {
        try lifecycle.withLock { state throws(HTTPServerError) -> Int in
            switch state {
            case .running: throw HTTPServerError("HTTP server already started")
            case .stopped: throw HTTPServerError("HTTP server was stopped; create a new one")
            case .idle: break
            }
            let (handle, port) = try startCivetWeb()
            state = .running(handle, port: port)
            return port
        }
    }

    /// Closes every WebSocket (close frame 1001, then cut after a short grace), stops
    /// CivetWeb and returns once its threads are gone. Idempotent; a concurrent second call
    /// returns at once. Not to be called from a handler (it waits for the handler's thread).
    public func stop() {
        let running = lifecycle.withLock { state -> (CivetHandle, Int)? in
            defer { state = .stopped }
            if case .running(let handle, let port) = state { return (handle, port) }
            return nil
        }
        guard let (handle, port) = running else { return }
        core.accepting.store(false, ordering: .releasing)
        for connection in core.openConnections() {
            connection.close(code: 1001)
        }
        // Clients that answer the close frame are gone well within the grace period.
        let deadline = ContinuousClock.now + .milliseconds(Int(WebSocketConnection.closeGrace * 1000))
        while !core.openConnections().isEmpty, ContinuousClock.now < deadline {
            usleep(5_000)
        }
        for connection in core.openConnections() {
            connection.abort()
        }
        stopCivetWeb(handle, port: port)
    }

    /// mg_stop, without its wait of up to 2 s: CivetWeb's accept thread polls the listening
    /// socket in 2 s slices and looks at the stop flag only between them, so a throwaway
    /// connection (once the flag is set) lets it finish at once.
    private func stopCivetWeb(_ handle: CivetHandle, port: Int) {
        let stopped = Atomic<Bool>(false)
        if let wakeAddress = ListenAddress(configuration.listen)?.with(port: port) {
            let poker = Thread {
                while !stopped.load(ordering: .acquiring) {
                    usleep(10_000)
                    wakeAddress.connectAndClose()
                }
            }
            poker.name = "irisgw-http-stop"
            poker.start()
        }
        mg_stop(handle.pointer)
        stopped.store(true, ordering: .releasing)
    }

    private func startCivetWeb() throws(HTTPServerError) -> (CivetHandle, Int) {
        guard CivetWebLibrary.hasWebSockets else {
            throw HTTPServerError("libcivetweb was built without WebSocket support")
        }
        let config = configuration
        guard config.threads >= 1 else { throw HTTPServerError("threads must be at least 1 (got \(config.threads))") }
        guard config.maxBodyBytes >= 0 else { throw HTTPServerError("maxBodyBytes must not be negative") }
        guard config.webSocketQueueLimit >= 1 else { throw HTTPServerError("webSocketQueueLimit must be at least 1") }
        guard !config.listen.isEmpty, !config.listen.contains(",") else {
            throw HTTPServerError("listen must be one address:port (got \"\(config.listen)\")")
        }
        guard !config.listen.hasPrefix("[") else {
            throw HTTPServerError("cannot listen on \(config.listen): Debian's libcivetweb 1.15 is built without IPv6")
        }

        let options = [
            "listening_ports", config.listen,
            "num_threads", String(config.threads),
            "enable_keep_alive", "yes",
            // How often a WebSocket's read loop wakes up to notice a close asked from
            // another thread when the socket could not be shut down directly.
            "websocket_timeout_ms", "1000",
        ]
        var callbacks = mg_callbacks()
        callbacks.log_message = { conn, message in
            if let core = ServerCore.from(connection: conn), let message {
                core.log(String(cString: message))
            }
            return 1 // never let CivetWeb print
        }
        callbacks.connection_close = { conn in
            ServerCore.from(connection: conn)?.connectionClosed(conn)
        }

        let userData = Unmanaged.passUnretained(core).toOpaque()
        var errorCode: UInt32 = 0
        var errorText = [CChar](repeating: 0, count: 256)
        let cOptions = options.map { strdup($0) }
        defer { cOptions.forEach { free($0) } }
        var optionPointers: [UnsafePointer<CChar>?] = cOptions.map { UnsafePointer($0) } + [nil]

        let context: OpaquePointer? = optionPointers.withUnsafeMutableBufferPointer { optionsBuffer in
            errorText.withUnsafeMutableBufferPointer { textBuffer in
                withUnsafeMutablePointer(to: &errorCode) { codePointer in
                    withUnsafePointer(to: &callbacks) { callbacksPointer in
                        var initData = mg_init_data(callbacks: callbacksPointer, user_data: userData,
                                                    configuration_options: optionsBuffer.baseAddress)
                        var errorData = mg_error_data(code: codePointer, text: textBuffer.baseAddress,
                                                      text_buffer_size: textBuffer.count)
                        return mg_start2(&initData, &errorData)
                    }
                }
            }
        }
        guard let context else {
            let text = cString(errorText)
            throw HTTPServerError("cannot start HTTP server on \(config.listen): \(text.isEmpty ? "CivetWeb error \(errorCode)" : text)")
        }

        var ports = [mg_server_port](repeating: mg_server_port(), count: 4)
        let count = mg_get_server_ports(context, Int32(ports.count), &ports)
        guard count >= 1, ports[0].port > 0 else {
            mg_stop(context)
            throw HTTPServerError("CivetWeb reports no listening port for \(config.listen)")
        }

        // "/" is a prefix of every path: one handler of each kind catches everything.
        // CivetWeb sends upgrade requests to the WebSocket handler, the rest to the request handler.
        mg_set_request_handler(context, "/", { conn, cbdata in
            guard let conn, let cbdata else { return 500 }
            return Unmanaged<ServerCore>.fromOpaque(cbdata).takeUnretainedValue().handleRequest(conn)
        }, userData)
        mg_set_websocket_handler(context, "/", { conn, cbdata in
            guard let conn, let cbdata else { return 1 }
            return Unmanaged<ServerCore>.fromOpaque(cbdata).takeUnretainedValue().handleUpgrade(conn)
        }, { conn, cbdata in
            guard let conn, let cbdata else { return }
            Unmanaged<ServerCore>.fromOpaque(cbdata).takeUnretainedValue().handleReady(conn)
        }, { conn, bits, data, length, cbdata in
            guard let conn, let cbdata else { return 0 }
            return Unmanaged<ServerCore>.fromOpaque(cbdata).takeUnretainedValue().handleData(conn, bits: bits, data: data, length: length)
        }, { conn, cbdata in
            guard let conn, let cbdata else { return }
            Unmanaged<ServerCore>.fromOpaque(cbdata).takeUnretainedValue().handleClose(conn)
        }, userData)

        return (CivetHandle(pointer: context), Int(ports[0].port))
    }
}

/// A local IPv4 address that reaches the listening socket (127.0.0.1 for a wildcard).
private struct ListenAddress: Sendable {
    let host: String
    let port: UInt16

    /// Parses CivetWeb's "host:port" or "port"; nil for anything else.
    init?(_ listen: String) {
        var host = "127.0.0.1"
        var portText = Substring(listen)
        if let colon = listen.lastIndex(of: ":") {
            host = String(listen[..<colon])
            portText = listen[listen.index(after: colon)...]
            if host == "0.0.0.0" { host = "127.0.0.1" }
        }
        guard let port = UInt16(portText.prefix { $0.isNumber }) else { return nil }
        self.host = host
        self.port = port
    }

    func with(port: Int) -> ListenAddress? {
        ListenAddress("\(host):\(port)")
    }

    func connectAndClose() {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else { return }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

/// A CivetWeb context or connection handle crossing threads. CivetWeb's calls made through
/// it are thread-safe where used: the context's own locking, and mg_lock_connection around
/// every WebSocket write.
struct CivetHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

private enum CivetWebLibrary {
    /// mg_init_library is not thread-safe; a static's initializer runs exactly once.
    static let hasWebSockets: Bool = {
        _ = mg_init_library(0)
        return mg_check_feature(UInt32(MG_FEATURES_WEBSOCKET)) != 0
    }()
}

/// The callbacks' side of the server: handlers, settings and the open WebSockets.
private final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let webSocket: @Sendable (HTTPRequest) -> HTTPResponse?
    let onOpen: @Sendable (WebSocketConnection) -> Void
    let onClose: @Sendable (WebSocketConnection) -> Void

    /// False once `stop()` began: new upgrades are refused.
    let accepting = Atomic<Bool>(true)
    /// Connections that hold a `WebSocketConnection` (upgrade accepted, not yet closed).
    private let webSockets = Atomic<Int>(0)
    private let nextID = Atomic<Int>(1)
    private let open = Mutex<[Int: WebSocketConnection]>([:])

    init(configuration: HTTPServerConfiguration,
         handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
         webSocket: @escaping @Sendable (HTTPRequest) -> HTTPResponse?,
         onOpen: @escaping @Sendable (WebSocketConnection) -> Void,
         onClose: @escaping @Sendable (WebSocketConnection) -> Void) {
        self.configuration = configuration
        self.handler = handler
        self.webSocket = webSocket
        self.onOpen = onOpen
        self.onClose = onClose
    }

    static func from(connection: OpaquePointer?) -> ServerCore? {
        guard let connection, let raw = mg_get_user_context_data(connection) else { return nil }
        return Unmanaged<ServerCore>.fromOpaque(raw).takeUnretainedValue()
    }

    func openConnections() -> [WebSocketConnection] {
        open.withLock { Array($0.values) }
    }

    func log(_ message: String) {
        guard let log = configuration.log else { return }
        var line = message
        while line.last == "\n" || line.last == "\r" { line.removeLast() }
        log(line)
    }

    // MARK: - HTTP

    func handleRequest(_ conn: OpaquePointer) -> Int32 {
        guard let info = mg_get_request_info(conn) else { return 500 }
        var request = Self.request(from: info)
        let limit = configuration.maxBodyBytes
        // Refuse before reading: the client may not even send the body.
        if info.pointee.content_length > Int64(limit) {
            return send(.bodyTooLarge, to: conn, head: false, close: true)
        }
        switch readBody(conn, limit: limit, expected: Int(max(0, info.pointee.content_length))) {
        case .tooLarge:
            return send(.bodyTooLarge, to: conn, head: false, close: true)
        case .failed:
            mg_disable_connection_keep_alive(conn)
            return 400
        case .complete(let body):
            request.body = body
        }
        let response = handler(request)
        return send(response, to: conn, head: request.method == "HEAD", close: false)
    }

    private enum Body {
        case complete([UInt8])
        case tooLarge
        case failed
    }

    /// Reads the body (Content-Length or chunked; CivetWeb decodes chunks), stopping as soon
    /// as it grows past `limit`.
    private func readBody(_ conn: OpaquePointer, limit: Int, expected: Int) -> Body {
        var body: [UInt8] = []
        body.reserveCapacity(min(expected, limit))
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { mg_read(conn, $0.baseAddress, $0.count) }
            if n == 0 { return .complete(body) }
            if n < 0 { return .failed }
            if body.count + Int(n) > limit { return .tooLarge }
            body += chunk[0..<Int(n)]
        }
    }

    /// Writes `response` with Content-Length; CivetWeb adds Date and Connection.
    /// `close` ends the connection after it (the request body was not read).
    private func send(_ response: HTTPResponse, to conn: OpaquePointer, head: Bool, close: Bool) -> Int32 {
        let status = (100...999).contains(response.status) ? response.status : 500
        if close { mg_disable_connection_keep_alive(conn) }
        guard mg_response_header_start(conn, Int32(status)) == 0 else { return Int32(status) }
        for (name, value) in Self.sendableHeaders(response.headers) {
            if name.lowercased() == "connection", value.lowercased().contains("close") {
                mg_disable_connection_keep_alive(conn)
            }
            _ = mg_response_header_add(conn, name, value, -1)
        }
        _ = mg_response_header_add(conn, "Content-Length", String(response.body.count), -1)
        _ = mg_response_header_send(conn)
        if !head, !response.body.isEmpty {
            _ = response.body.withUnsafeBytes { mg_write(conn, $0.baseAddress, $0.count) }
        }
        return Int32(status)
    }

    /// The handler's headers minus framing ones (the server owns those) and any that would
    /// break the header block.
    private static func sendableHeaders(_ headers: [(String, String)]) -> [(String, String)] {
        headers.filter { name, value in
            let lower = name.lowercased()
            return !name.isEmpty && lower != "content-length" && lower != "transfer-encoding"
                && !name.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == UInt8(ascii: ":") })
                && !value.utf8.contains(where: { $0 == 13 || $0 == 10 })
        }
    }

    private static func request(from info: UnsafePointer<mg_request_info>) -> HTTPRequest {
        let ri = info.pointee
        var headers: [String: String] = [:]
        for i in 0..<Int(max(0, min(ri.num_headers, MG_MAX_HEADERS))) {
            guard let field = CCivetWeb_header(info, Int32(i))?.pointee, let name = field.name else { continue }
            let key = String(cString: name).lowercased()
            let value = field.value.map { String(cString: $0) } ?? ""
            if let earlier = headers[key] {
                headers[key] = earlier + ", " + value
            } else {
                headers[key] = value
            }
        }
        let path = ri.local_uri ?? ri.request_uri
        return HTTPRequest(
            method: ri.request_method.map { String(cString: $0) } ?? "",
            path: path.map { String(cString: $0) } ?? "/",
            query: ri.query_string.map { QueryString.parse(String(cString: $0)) } ?? [:],
            headers: headers,
            body: [],
            remoteAddress: String(cString: CCivetWeb_remote_addr(info)),
            remotePort: Int(ri.remote_port))
    }

    // MARK: - WebSocket

    /// CivetWeb's connect handler: 0 goes on with the handshake, 1 closes the connection.
    func handleUpgrade(_ conn: OpaquePointer) -> Int32 {
        guard let info = mg_get_request_info(conn) else { return 1 }
        let request = Self.request(from: info)
        guard accepting.load(ordering: .acquiring) else {
            refuse(conn, .error(503, code: -503, message: "server stopping"))
            return 1
        }
        if let refusal = webSocket(request) {
            refuse(conn, refusal)
            return 1
        }
        // Each WebSocket keeps its worker thread: leave one for plain requests.
        let held = webSockets.add(1, ordering: .acquiringAndReleasing).newValue
        guard held < configuration.threads else {
            webSockets.subtract(1, ordering: .acquiringAndReleasing)
            refuse(conn, .error(503, code: -503, message: "too many WebSocket connections"))
            return 1
        }
        let socket = Self.findSocket(localPort: Int(info.pointee.server_port),
                                     remoteAddress: request.remoteAddress, remotePort: request.remotePort)
        let connection = WebSocketConnection(
            id: nextID.add(1, ordering: .relaxed).oldValue, request: request,
            queueLimit: configuration.webSocketQueueLimit,
            transport: CivetWebSocketTransport(connection: CivetHandle(pointer: conn), socket: socket))
        mg_set_user_connection_data(conn, Unmanaged.passRetained(connection).toOpaque())
        return 0
    }

    func handleReady(_ conn: OpaquePointer) {
        guard let connection = Self.connection(of: conn) else { return }
        open.withLock { $0[connection.id] = connection }
        connection.start()
        onOpen(connection)
    }

    /// A frame from the client: answer ping and close, ignore the rest. 0 ends the connection.
    func handleData(_ conn: OpaquePointer, bits: Int32, data: UnsafeMutablePointer<CChar>?, length: Int) -> Int32 {
        guard let connection = Self.connection(of: conn) else { return 0 }
        switch bits & 0x0f {
        case Int32(MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE):
            mg_lock_connection(conn)
            if connection.claimCloseFrame() {
                // Echo the status code (RFC 6455 §5.5.1); a 1-byte payload is invalid, send none.
                _ = mg_websocket_write(conn, Int32(MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE), data, length >= 2 ? 2 : 0)
            }
            mg_unlock_connection(conn)
            connection.peerClosed()
            return 0
        case Int32(MG_WEBSOCKET_OPCODE_PING):
            mg_lock_connection(conn)
            if connection.mayWrite {
                _ = mg_websocket_write(conn, Int32(MG_WEBSOCKET_OPCODE_PONG), data, length)
            }
            mg_unlock_connection(conn)
            return 1
        default:
            return 1
        }
    }

    func handleClose(_ conn: OpaquePointer) {
        guard let connection = Self.connection(of: conn) else { return }
        let wasOpen = connection.finish()
        open.withLock { _ = $0.removeValue(forKey: connection.id) }
        if wasOpen { onClose(connection) }
    }

    /// CivetWeb's connection_close, for every connection: drops the WebSocket's retain.
    func connectionClosed(_ conn: OpaquePointer?) {
        guard let conn, let raw = mg_get_user_connection_data(conn) else { return }
        mg_set_user_connection_data(conn, nil)
        let connection = Unmanaged<WebSocketConnection>.fromOpaque(raw).takeRetainedValue()
        // Normally done by handleClose; not reached when the handshake itself failed.
        _ = connection.finish()
        open.withLock { _ = $0.removeValue(forKey: connection.id) }
        webSockets.subtract(1, ordering: .acquiringAndReleasing)
    }

    private static func connection(of conn: OpaquePointer) -> WebSocketConnection? {
        guard let raw = mg_get_user_connection_data(conn) else { return nil }
        return Unmanaged<WebSocketConnection>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Refuses an upgrade with `response`. CivetWeb's response API is not usable from the
    /// connect handler, so the response is written raw; the connection closes after it.
    private func refuse(_ conn: OpaquePointer, _ response: HTTPResponse) {
        let status = (100...999).contains(response.status) ? response.status : 500
        let reason = mg_get_response_code_text(conn, Int32(status)).map { String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in Self.sendableHeaders(response.headers) where name.lowercased() != "connection" {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + response.body
        mg_disable_connection_keep_alive(conn)
        _ = bytes.withUnsafeBytes { mg_write(conn, $0.baseAddress, $0.count) }
    }

    /// The socket CivetWeb accepted for this client: the one whose local port is the
    /// server's and whose peer is the client. CivetWeb keeps it open while the connection's
    /// handlers run, so the match cannot be a stale descriptor. -1 when not found.
    private static func findSocket(localPort: Int, remoteAddress: String, remotePort: Int) -> Int32 {
        guard let dir = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let fd = Int32(name),
                  endpoint(fd, getsockname)?.port == localPort,
                  let peer = endpoint(fd, getpeername), peer.port == remotePort, peer.address == remoteAddress
            else { continue }
            return fd
        }
        return -1
    }

    /// The address and port `query` (getsockname or getpeername) reports for an IPv4 socket.
    private static func endpoint(_ fd: Int32, _ query: (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32) -> (address: String, port: Int)? {
        var sin = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(fd, $0, &length) == 0 }
        }
        guard ok, Int32(sin.sin_family) == AF_INET else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var addr = sin.sin_addr
        inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
        return (cString(text), Int(UInt16(bigEndian: sin.sin_port)))
    }
}

/// The text of a NUL-terminated C buffer.
private func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A WebSocket's socket side over CivetWeb.
private struct CivetWebSocketTransport: WebSocketTransport {
    let connection: CivetHandle
    /// The accepted socket, or -1 when it could not be found (then only the read loop's
    /// timeout ends a connection, and a blocked write waits for CivetWeb's request timeout).
    let socket: Int32

    func withWriteLock<T>(_ body: () -> T) -> T {
        mg_lock_connection(connection.pointer)
        defer { mg_unlock_connection(connection.pointer) }
        return body()
    }

    func writeText(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { write(opcode: MG_WEBSOCKET_OPCODE_TEXT, UnsafeRawBufferPointer($0)) }
    }

    func writeClose(code: UInt16) -> Bool {
        let payload: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xff)]
        return payload.withUnsafeBytes { write(opcode: MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, $0) }
    }

    private func write(opcode: Int, _ payload: UnsafeRawBufferPointer) -> Bool {
        let data = payload.baseAddress?.assumingMemoryBound(to: CChar.self)
        let written = mg_websocket_write(connection.pointer, Int32(opcode), data, payload.count)
        return written > 0 && Int(written) >= payload.count
    }

    func abort() {
        // Ends CivetWeb's read loop; shutdown also fails a write blocked on a full socket.
        mg_disable_connection_keep_alive(connection.pointer)
        if socket >= 0 { _ = shutdown(socket, Int32(SHUT_RDWR)) }
    }

    func finish() {
        // The read loop is over: only a write still blocked needs releasing. What the kernel
        // already holds is still delivered before the FIN.
        if socket >= 0 { _ = shutdown(socket, Int32(SHUT_WR)) }
    }
}
