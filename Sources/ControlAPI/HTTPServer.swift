// The control API's HTTP/1.1 + WebSocket server: one event loop thread (IOCore.EventLoop)
// accepts, reads, parses, writes and times out every connection; a small worker pool runs
// the handlers, which may block. Files:
//   HTTPServerCore.swift        the listener, connections, WebSocket caps, statistics, shutdown
//   HTTPConnection.swift        one connection's requests and responses on the stream layer
//   HTTPRequestFramer.swift, WebSocketServerFramer.swift, HTTPOrWebSocketFramer.swift
//                               the connection's framer (the HTTP module's grammar and codec)
// IOCore's stream layer (StreamListener, StreamConnection) accepts, caps, reads, writes, runs
// TLS and the deadlines.
//   HTTPTarget.swift            path decoding and the unsafe-path check
//   HTTPResponseEncoder.swift   response heads
//   HTTPConnection+WebSocketFrames.swift the WebSocket phase of a connection
//   WebSocketConnection.swift   what the application holds of a WebSocket
//   HTTPWorkerPool.swift        the handler threads

import Foundation
import IOCore
import Synchronization
import TLS

/// An HTTP/1.1 and WebSocket server for the control API, with bounds on what any client can
/// hold (see `HTTPServerConfiguration`).
public final class HTTPServer: Sendable {
    /// The settings the server was created with.
    public let configuration: HTTPServerConfiguration

    private enum Lifecycle {
        case idle
        case running(HTTPServerCore, port: Int)
        /// The last statistics, frozen.
        case stopped(HTTPServerStatistics)
    }

    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let webSocket: @Sendable (HTTPRequest) -> WebSocketUpgrade
    private let onWebSocketOpen: @Sendable (WebSocketConnection) -> Void
    private let onWebSocketClose: @Sendable (WebSocketConnection) -> Void
    private let lifecycle = Mutex(Lifecycle.idle)

    /// - Parameters:
    ///   - handler: answers every request that is not a WebSocket upgrade, on any path. Runs
    ///     on a worker thread and may block (that worker only).
    ///   - webSocket: decides each upgrade request (on a worker thread): accept it in a client
    ///     group, or refuse it with a response (e.g. 401).
    ///   - onWebSocketOpen: the handshake is done; `send(text:)` may be used from now on.
    ///   - onWebSocketClose: called exactly once per opened connection, whoever closed it.
    /// The two WebSocket callbacks run in order on one serial queue, never on the event loop.
    public init(
        configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        webSocket: @escaping @Sendable (HTTPRequest) -> WebSocketUpgrade,
        onWebSocketOpen: @escaping @Sendable (WebSocketConnection) -> Void,
        onWebSocketClose: @escaping @Sendable (WebSocketConnection) -> Void
    ) {
        self.configuration = configuration
        self.handler = handler
        self.webSocket = webSocket
        self.onWebSocketOpen = onWebSocketOpen
        self.onWebSocketClose = onWebSocketClose
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

    /// Open connections and refusals so far (all zero before `start()`; frozen after `stop()`).
    public var statistics: HTTPServerStatistics {
        lifecycle.withLock { state in
            switch state {
            case .idle: HTTPServerStatistics()
            case .running(let core, _): core.statistics
            case .stopped(let last): last
            }
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
            if let problem = configuration.problem() {
                throw HTTPServerError("invalid HTTP server configuration: \(problem)")
            }
            let address = try configuration.listenAddress()
            var context: TLSContext?
            if let tls = configuration.tls {
                do throws(TLSFailure) {
                    context = try TLSContext(server: tls)
                } catch {
                    throw HTTPServerError("cannot serve HTTPS on \(configuration.listen): \(error)")
                }
            }
            let loop: EventLoop
            do {
                loop = try EventLoop()
            } catch {
                throw HTTPServerError("cannot start the HTTP event loop: \(error)")
            }
            let core = HTTPServerCore(
                configuration: configuration, loop: loop, handler: handler, upgrade: webSocket,
                onOpen: onWebSocketOpen, onClose: onWebSocketClose)
            core.tlsContext = context
            core.updateStatistics { $0.tls = context != nil }
            loop.start(name: "irisgw-http")
            // The listener belongs to the loop; made there (a caller's thread, never a loop, waits).
            let bound = loop.sync { () -> Result<Int, SocketError> in
                do throws(SocketError) { return .success(try core.listen(address)) } catch { return .failure(error) }
            }
            let port: Int
            switch bound {
            case .success(let p): port = p
            case .failure(let error):
                loop.stop()
                throw HTTPServerError("cannot listen on \(address): \(error)")
            }
            core.workers.start(name: "irisgw-http-worker")
            state = .running(core, port: port)
            return port
        }
    }

    /// Sends close 1001 to every WebSocket and closes every other connection, cuts the
    /// WebSockets still open after `webSocketCloseGrace`, then stops the event loop and the
    /// workers (waiting for handlers already running) and returns once every
    /// `onWebSocketClose` has run. Idempotent; a concurrent second call returns at once.
    /// Not to be called from a handler or a WebSocket callback (it waits for them).
    public func stop() {
        let running = lifecycle.withLock { state -> HTTPServerCore? in
            guard case .running(let core, _) = state else {
                if case .idle = state { state = .stopped(HTTPServerStatistics()) }
                return nil
            }
            // A snapshot while stopping; the final counts are stored once the core is done.
            state = .stopped(core.statistics)
            return core
        }
        guard let core = running else { return }
        let done = DispatchSemaphore(value: 0)
        core.loop.execute { core.beginShutdown(done: done) }
        // The loop cuts what is left at the grace; the margin only guards against a stuck loop.
        _ = done.wait(timeout: .now() + configuration.webSocketCloseGrace + 5)
        core.loop.stop()
        core.workers.stop()
        core.callbacks.sync {}
        lifecycle.withLock { $0 = .stopped(core.statistics) }
    }

    /// Rereads the HTTPS certificate and key (and client CA) from the configured files: new
    /// connections use them, open ones go on with the old. A file that cannot be used
    /// changes nothing and throws why. Does nothing on a plain HTTP server or when stopped.
    public func reloadTLS() throws(TLSFailure) {
        guard let settings = configuration.tls, let core = runningCore else { return }
        let context = try TLSContext(server: settings)
        core.loop.sync { core.tlsContext = context }
    }

    /// Tests: the core while running (to check it is released after `stop()`).
    var runningCore: HTTPServerCore? {
        guard case .running(let core, _) = lifecycle.withLock({ $0 }) else { return nil }
        return core
    }

    /// Tests: the next accept calls fail with these errno values (EMFILE, ...).
    func simulateAcceptFailures(_ codes: [Int32]) {
        guard case .running(let core, _) = lifecycle.withLock({ $0 }) else { return }
        core.loop.sync { core.simulateAcceptFailures(codes) }
    }

    /// Tests: accept(2) calls made so far.
    var acceptCalls: Int {
        guard case .running(let core, _) = lifecycle.withLock({ $0 }) else { return 0 }
        return core.loop.sync { core.acceptCalls }
    }
}
