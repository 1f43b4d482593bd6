// The event-loop side of `HTTPServer`: the stream layer's listener (which holds the
// connection caps and the out-of-descriptors back-off), the connections, the WebSocket caps,
// statistics and the shutdown.
//
// Threading: the state below the `Loop-confined` mark belongs to the server's one event
// loop thread (IOCore.EventLoop), in a `LoopBoundBox` checked on every access in debug
// builds; other threads reach it only through `loop.execute`.
// What the loop holds on to (timers, queued work) captures the core weakly: a stopped loop
// keeps whatever was still queued, and must not keep the core (and its sockets) alive.
// Handlers run on `workers`; WebSocket open/close callbacks on `callbacks`, a serial queue,
// so a callback that blocks never stalls the loop and a close never overtakes its open.

import Foundation
import Glibc
import IOCore
import IrisAPI
import Logging
import Synchronization
import TLS

final class HTTPServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let loop: EventLoop
    let workers: HTTPWorkerPool
    let callbacks = DispatchQueue(label: "irisgw-http-websocket-callbacks")
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let upgrade: @Sendable (HTTPRequest) -> WebSocketUpgrade
    let onOpen: @Sendable (WebSocketConnection) -> Void
    let onClose: @Sendable (WebSocketConnection) -> Void
    private let stats = Mutex(HTTPServerStatistics())

    /// How long an answered connection that is being closed keeps reading (and discarding)
    /// before it is closed for good: closing with unread input would reset the connection
    /// and could destroy the response before the client reads it.
    static let lingerTime = 1.0
    /// How long the listener rests after accept ran out of file descriptors.
    static let acceptBackoff = 0.1

    // MARK: Loop-confined

    private struct LoopState {
        var listener: StreamListener?
        /// Every connection, counted in all and per source (an IPv6 client's /64).
        let caps: StreamConnectionCaps
        var tlsContext: TLSContext?
        var connections: [Int: HTTPConnection] = [:]
        /// Open WebSocket connections by group.
        var groups: [String: Set<Int>] = [:]
        var webSocketCount = 0
        var nextID = 1
        var shuttingDown = false
        var shutdownDone: DispatchSemaphore?
        var dates = HTTPDateCache()
    }
    private let loopState: LoopBoundBox<LoopState>

    private var listener: StreamListener? {
        get { loopState.value.listener }
        set { loopState.value.listener = newValue }
    }
    private var caps: StreamConnectionCaps { loopState.value.caps }
    /// The HTTPS listener's context (nil: plain HTTP); a reload replaces it, connections
    /// already made keep the one they started with.
    var tlsContext: TLSContext? {
        get { loopState.value.tlsContext }
        set { loopState.value.tlsContext = newValue }
    }
    private(set) var connections: [Int: HTTPConnection] {
        get { loopState.value.connections }
        _modify { yield &loopState.value.connections }
    }
    /// Open WebSocket connections by group.
    private var groups: [String: Set<Int>] {
        get { loopState.value.groups }
        _modify { yield &loopState.value.groups }
    }
    private var webSocketCount: Int {
        get { loopState.value.webSocketCount }
        set { loopState.value.webSocketCount = newValue }
    }
    private var nextID: Int {
        get { loopState.value.nextID }
        set { loopState.value.nextID = newValue }
    }
    private(set) var shuttingDown: Bool {
        get { loopState.value.shuttingDown }
        set { loopState.value.shuttingDown = newValue }
    }
    private var shutdownDone: DispatchSemaphore? {
        get { loopState.value.shutdownDone }
        set { loopState.value.shutdownDone = newValue }
    }
    var dates: HTTPDateCache {
        get { loopState.value.dates }
        _modify { yield &loopState.value.dates }
    }

    init(
        configuration: HTTPServerConfiguration, loop: EventLoop,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        upgrade: @escaping @Sendable (HTTPRequest) -> WebSocketUpgrade,
        onOpen: @escaping @Sendable (WebSocketConnection) -> Void,
        onClose: @escaping @Sendable (WebSocketConnection) -> Void
    ) {
        self.configuration = configuration
        self.loop = loop
        self.handler = handler
        self.upgrade = upgrade
        self.onOpen = onOpen
        self.onClose = onClose
        workers = HTTPWorkerPool(threads: configuration.threads, queueLimit: configuration.requestQueueLimit)
        // Built before the loop runs: the loop owns it from `start` on.
        loopState = LoopBoundBox(
            LoopState(
                caps: StreamConnectionCaps(
                    maxConnections: configuration.maxConnections,
                    maxPerSource: configuration.maxConnectionsPerSource,
                    sourceKey: { Self.sourceKey(Self.clientHost($0)) })),
            loop: loop)
    }

    // MARK: Statistics (any thread)

    var statistics: HTTPServerStatistics { stats.withLock { $0 } }

    func count(_ reason: HTTPServerStatistics.Refusal) {
        stats.withLock { $0.count(reason) }
    }

    func updateStatistics(_ change: (inout HTTPServerStatistics) -> Void) {
        stats.withLock { change(&$0) }
    }

    private func log(_ level: LogLevel, _ line: @autoclosure () -> String, peer: SocketAddress? = nil) {
        guard let log = configuration.log else { return }
        if let peer { log.log(level, line(), ["peer": "\(peer)"]) } else { log.log(level, line()) }
    }

    // MARK: Accepting

    /// Binds the listening socket (on the loop, which owns it) and starts accepting.
    func listen(_ address: SocketAddress) throws(SocketError) -> Int {
        let listener = try StreamListener(
            loop: loop, bind: address, caps: caps, acceptBackoff: Self.acceptBackoff,
            backlog: 511, dualStack: address.host == "::")
        // Reset at once: no TIME_WAIT kept for a connection never served.
        listener.resetRefused = true
        listener.onRefused = { [unowned self] why in refused(why) }
        listener.onAccept = { [unowned self] fd, peer in accepted(fd, peer: peer) }
        listener.start()
        self.listener = listener
        return listener.local.port
    }

    /// Tests: the next accept calls fail with these errno values.
    func simulateAcceptFailures(_ codes: [Int32]) { listener?.simulatedAcceptErrors += codes }

    /// Tests: accept(2) calls made so far.
    var acceptCalls: Int { listener?.acceptCalls ?? 0 }

    private func refused(_ why: StreamRefusal) {
        switch why {
        case .tooManyConnections: count(.tooManyConnections)
        case .tooManyFromSource: count(.perSourceCap)
        case .outOfDescriptors:
            let total = stats.withLock { s -> Int in
                s.acceptBackoffs += 1
                return s.acceptBackoffs
            }
            if total == 1 || total % 100 == 0 {
                log(
                    .warning,
                    "http: accept ran out of file descriptors; pausing accepts for \(Int(Self.acceptBackoff * 1000)) ms (\(total) times so far)"
                )
            }
        }
    }

    private func accepted(_ fd: Int32, peer address: SocketAddress) {
        let peer = SocketAddress(host: Self.clientHost(address.host), port: address.port)
        var tls: TLSStream?
        if let tlsContext {
            guard let stream = TLSStream(server: tlsContext) else {
                tlsFailed(.handshakeFailed("cannot create a TLS session"), peer: peer, duringHandshake: true)
                Glibc.close(fd)
                return
            }
            tls = stream
        }
        let stream = HTTPConnection.Stream(
            accepted: fd, peer: peer, loop: loop,
            framer: .http(
                HTTPRequestFramer(
                    maxHeaderBytes: configuration.maxHeaderBytes,
                    maxBodyBytes: configuration.maxBodyBytes)),
            security: tls, settings: HTTPConnection.settings(configuration), caps: caps)
        let connection = HTTPConnection(id: nextID, stream: stream, core: self)
        nextID += 1
        connections[connection.id] = connection
        stats.withLock {
            $0.openConnections += 1
            $0.acceptedConnections += 1
        }
        connection.start()
    }

    // MARK: TLS

    /// A TLS connection failed: counted by kind, and logged with the reason (the first 20,
    /// then every 100th, so a scanner cannot flood the log). Never anything secret: the
    /// peer's address and OpenSSL's classified reason.
    func tlsFailed(_ failure: TLSFailure, peer: SocketAddress, duringHandshake: Bool) {
        let total = stats.withLock { s -> Int in
            s.tlsFailures[failure.kind, default: 0] += 1
            return s.tlsFailures.values.reduce(0, +)
        }
        if total <= 20 || total % 100 == 0 {
            log(
                .notice,
                "api: TLS \(duringHandshake ? "handshake" : "connection") with \(peer) failed: \(failure) (\(total) TLS failures so far)",
                peer: peer)
        }
    }

    func tlsEstablished() {
        stats.withLock { $0.tlsHandshakes += 1 }
    }

    /// The address handlers see: an IPv4 client of a dual-stack listener without its
    /// "::ffff:" prefix.
    static func clientHost(_ host: String) -> String {
        host.lowercased().hasPrefix("::ffff:") && host.contains(".") ? String(host.dropFirst(7)) : host
    }

    /// What `maxConnectionsPerSource` counts by: the IPv4 address, or the IPv6 /64 (one
    /// client usually holds a whole /64, so single IPv6 addresses would be no limit).
    static func sourceKey(_ host: String) -> String {
        guard host.contains(":") else { return host }
        var address = in6_addr()
        guard inet_pton(AF_INET6, host, &address) == 1 else { return host }
        withUnsafeMutableBytes(of: &address) { bytes in
            for i in 8..<16 { bytes[i] = 0 }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
    }

    // MARK: Connections

    /// The loop calls this once for each connection that closed.
    func removed(_ connection: HTTPConnection) {
        connections[connection.id] = nil
        if let webSocket = connection.webSocket {
            groups[webSocket.group]?.remove(connection.id)
            if groups[webSocket.group]?.isEmpty == true { groups[webSocket.group] = nil }
            webSocketCount -= 1
            callbacks.async { [onClose] in onClose(webSocket) }
        }
        stats.withLock {
            $0.openConnections -= 1
            if connection.webSocket != nil { $0.openWebSockets -= 1 }
        }
        if shuttingDown, connections.isEmpty { finishShutdown() }
    }

    /// Hands a complete request to a worker; false when the queue is full.
    func dispatch(_ request: HTTPRequest, from connection: HTTPConnection) -> Bool {
        let id = connection.id
        let accepted = workers.submit { [weak self] in
            guard let self else { return }
            let response = handler(request)
            loop.execute { [weak self] in self?.connections[id]?.responseReady(response) }
        }
        if accepted { stats.withLock { $0.requests += 1 } }
        return accepted
    }

    /// Hands an upgrade request to a worker for the `webSocket:` callback's decision.
    func dispatchUpgrade(_ request: HTTPRequest, from connection: HTTPConnection) -> Bool {
        let id = connection.id
        let accepted = workers.submit { [weak self] in
            guard let self else { return }
            let decision = upgrade(request)
            loop.execute { [weak self] in self?.connections[id]?.upgradeDecided(decision) }
        }
        if accepted { stats.withLock { $0.requests += 1 } }
        return accepted
    }

    // MARK: WebSocket caps

    /// Makes room for one more WebSocket of `group`: at the group's cap (or the total cap)
    /// the group's own slowest connection is dropped; at the group's own `limit`, 429 and
    /// nothing is dropped. nil when admitted, else the refusal.
    func admitWebSocket(group: String, limit: Int? = nil) -> HTTPResponse? {
        if shuttingDown { return .error(503, code: IrisCode.serviceUnavailable, message: "server stopping") }
        let members = groups[group] ?? []
        if let limit, members.count >= limit {
            count(.webSocketGroupLimit)
            return .error(
                429, code: IrisCode.serviceUnavailable, message: "this client has \(limit) WebSockets open, its limit")
        }
        if members.count >= configuration.maxWebSocketsPerClient || webSocketCount >= configuration.maxWebSockets {
            guard let victim = slowest(of: members) else {
                count(.tooManyWebSockets)
                return .error(503, code: IrisCode.serviceUnavailable, message: "too many WebSocket connections")
            }
            count(.webSocketDroppedSlowest)
            victim.dropSlow()
        }
        return nil
    }

    /// The WebSocket furthest behind: most messages queued unsent, then most bytes waiting
    /// for the socket, then the oldest.
    private func slowest(of ids: Set<Int>) -> HTTPConnection? {
        let candidates = ids.compactMap { connections[$0] }
        return candidates.max { a, b in
            let qa = a.webSocket?.queuedCount ?? 0, qb = b.webSocket?.queuedCount ?? 0
            if qa != qb { return qa < qb }
            if a.pendingOutput != b.pendingOutput { return a.pendingOutput < b.pendingOutput }
            return a.id > b.id
        }
    }

    /// Counts the WebSocket in its group and runs `onWebSocketOpen`; the connection writes
    /// its 101 once that returned.
    func opened(_ webSocket: WebSocketConnection, on connection: HTTPConnection) {
        groups[webSocket.group, default: []].insert(connection.id)
        webSocketCount += 1
        stats.withLock { $0.openWebSockets += 1 }
        let id = connection.id
        callbacks.async { [weak self, onOpen] in
            onOpen(webSocket)
            self?.loop.execute { [weak self] in self?.connections[id]?.handshakeReady() }
        }
    }

    /// What a WebSocketConnection calls to reach its connection on the loop.
    func notifier(for id: Int) -> @Sendable (WebSocketConnection.Notice) -> Void {
        { [weak self] notice in
            guard let self else { return }
            loop.execute { [self] in connections[id]?.webSocketNotice(notice) }
        }
    }

    // MARK: Shutdown

    /// Stops accepting, closes every WebSocket with 1001 and every other connection at once,
    /// and signals `done` when no connection is left (at the latest after the close grace).
    func beginShutdown(done: DispatchSemaphore) {
        shuttingDown = true
        shutdownDone = done
        listener?.close()
        listener = nil
        for connection in Array(connections.values) { connection.serverStopping() }
        if connections.isEmpty {
            finishShutdown()
            return
        }
        loop.schedule(after: configuration.webSocketCloseGrace) { [weak self] in
            guard let self else { return }
            for connection in Array(connections.values) { connection.teardown() }
        }
    }

    private func finishShutdown() {
        shutdownDone?.signal()
        shutdownDone = nil
    }
}
