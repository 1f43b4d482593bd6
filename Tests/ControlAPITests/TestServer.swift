// An HTTPServer on 127.0.0.1 (or [::1]), port 0, that records what its callbacks saw.

import ControlAPI
import Glibc
import Synchronization
import TestSupport

final class ServerEvents: Sendable {
    private let requests = Mutex<[HTTPRequest]>([])
    private let opened = Mutex<[WebSocketConnection]>([])
    private let closed = Mutex<[Int]>([])

    func record(_ request: HTTPRequest) { requests.withLock { $0.append(request) } }
    func recordOpen(_ c: WebSocketConnection) { opened.withLock { $0.append(c) } }
    func recordClose(_ c: WebSocketConnection) { closed.withLock { $0.append(c.id) } }

    var handledRequests: [HTTPRequest] { requests.withLock { $0 } }
    var openedConnections: [WebSocketConnection] { opened.withLock { $0 } }
    var closedIDs: [Int] { closed.withLock { $0 } }

    func closeCount(of id: Int) -> Int { closedIDs.filter { $0 == id }.count }

    /// The `n`th opened connection (0-based), waiting up to `timeout` seconds for it.
    func waitForOpen(_ n: Int = 0, timeout: Double = 5) async -> WebSocketConnection? {
        guard await eventually(timeout: timeout, { self.openedConnections.count > n }) else { return nil }
        return openedConnections[n]
    }
}

/// Starts a server; the default handler answers JSON 404 for everything, the default
/// upgrade callback accepts every WebSocket in group "test". `configure` adjusts the
/// settings (short timeouts keep the suite fast).
func startServer(
    listen: String = "127.0.0.1:0",
    threads: Int = 8,
    maxBodyBytes: Int = 65_536,
    webSocketQueueLimit: Int = 1024,
    configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    handler: (@Sendable (HTTPRequest) -> HTTPResponse)? = nil,
    webSocket: @escaping @Sendable (HTTPRequest) -> WebSocketUpgrade = { _ in .accept(group: "test") }
)
    throws -> (server: HTTPServer, port: Int, events: ServerEvents)
{
    let events = ServerEvents()
    var configuration = HTTPServerConfiguration(
        listen: listen, threads: threads,
        maxBodyBytes: maxBodyBytes, webSocketQueueLimit: webSocketQueueLimit)
    // A close() or stop() waits this long for clients that never answer the close frame.
    configuration.webSocketCloseGrace = 0.3
    configure(&configuration)
    let answer = handler ?? { _ in .json(404, Array(#"{"error":{"code":-404,"message":"not found"}}"#.utf8)) }
    let server = HTTPServer(
        configuration: configuration,
        handler: { request in
            events.record(request)
            return answer(request)
        },
        webSocket: webSocket,
        onWebSocketOpen: { events.recordOpen($0) },
        onWebSocketClose: { events.recordClose($0) })
    let port = try server.start()
    return (server, port, events)
}
