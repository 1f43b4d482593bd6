// WebSockets over real sockets on 127.0.0.1: push order, both close directions, slow
// clients, refused upgrades, stop().

import ControlAPI
import Glibc
import TestSupport
import Testing

@Suite struct WebSocketTests {
    @Test func serverPushesInOrderAndClientCloseFiresOnCloseOnce() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port, path: "/events?topic=calls")
        let connection = try #require(await events.waitForOpen())
        #expect(connection.request.path == "/events")
        #expect(connection.request.query == ["topic": "calls"])
        #expect(connection.request.headers["upgrade"]?.lowercased() == "websocket")
        #expect(connection.isOpen)

        for i in 0..<100 {
            #expect(connection.send(text: "event \(i)"))
        }
        for i in 0..<100 {
            let frame = try await client.readFrame()
            #expect(frame.opcode == 0x1 && frame.fin)
            #expect(frame.text == "event \(i)")
        }

        // Client-initiated close: the server echoes the code, then closes.
        try await client.sendClose(code: 1000)
        let reply = try await client.readUntilClose()
        #expect(reply.closeCode == 1000)
        #expect(await client.socket.isClosedByPeer())
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 })
        #expect(!connection.isOpen)
        #expect(!connection.send(text: "too late"))
        // A window in which a second onClose would show (what is tested), not a wait.
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(events.closeCount(of: connection.id) == 1)
    }

    @Test func onOpenHasRunWhenTheClientSeesTheHandshake() async throws {
        // A subscription made in onWebSocketOpen must exist before the client can act on the
        // 101 (the Swift client subscribes, then creates the session it wants events of).
        for _ in 0..<20 {
            let (server, port, events) = try startServer()
            defer { server.stop() }
            let client = try await TestWebSocket.open(port: port)
            #expect(events.openedConnections.count == 1)
            withExtendedLifetime(client) {}
        }
    }

    @Test func serverCloseSendsCloseFrameAndFiresOnCloseOnce() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        let connection = try #require(await events.waitForOpen())
        connection.send(text: "last words")
        connection.close()
        #expect(!connection.isOpen)
        #expect(!connection.send(text: "after close"))

        // Messages queued before close() still arrive, then the close frame.
        #expect(try await client.readFrame().text == "last words")
        let close = try await client.readFrame()
        #expect(close.opcode == 0x8)
        #expect(close.closeCode == 1000)
        try await client.sendClose(code: 1000)
        #expect(await client.socket.isClosedByPeer())
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 })
        connection.close()
        // A window in which a second onClose would show (what is tested), not a wait.
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(events.closeCount(of: connection.id) == 1)
    }

    @Test func serverCloseCutsAClientThatNeverAnswers() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        let connection = try #require(await events.waitForOpen())
        connection.close()
        #expect(try await client.readFrame().closeCode == 1000)
        // No close frame back: the server gives up after its grace period.
        #expect(await client.socket.isClosedByPeer())
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 })
    }

    @Test func pingGetsPong() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        _ = try #require(await events.waitForOpen())
        try await client.send(opcode: 0x9, Array("are you there".utf8))
        let pong = try await client.readFrame()
        #expect(pong.opcode == 0xA)
        #expect(pong.text == "are you there")
        // Client text frames are ignored, and the connection stays up.
        try await client.send(text: "hello server")
        try await client.send(opcode: 0x9, [1])
        #expect(try await client.readFrame().opcode == 0xA)
    }

    @Test func slowClientIsDroppedWithoutBlockingSendOrOtherConnections() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        // A small receive buffer and no reads: the server's writes back up quickly.
        let slow = try await TestWebSocket.open(port: port, path: "/slow", receiveBuffer: 4096)
        let slowConnection = try #require(await events.waitForOpen(0))
        let healthy = try await TestWebSocket.open(port: port, path: "/healthy")
        let healthyConnection = try #require(await events.waitForOpen(1))

        // 5000 x 64 KiB (~320 MB) for a client that reads nothing: that the loop finishes at
        // all shows send(text:) never blocks; the queue limit (1024) drops the client.
        let big = String(repeating: "x", count: 64 * 1024)
        // (How many go through first depends on how much the kernel buffers on loopback.)
        var firstRefusal: Int?
        var acceptedAfterRefusal = 0
        for i in 0..<5000 {
            if slowConnection.send(text: big) {
                if firstRefusal != nil { acceptedAfterRefusal += 1 }
            } else if firstRefusal == nil {
                firstRefusal = i
            }
        }
        #expect(firstRefusal != nil)
        #expect(acceptedAfterRefusal == 0)  // dropped for good
        #expect(!slowConnection.isOpen)
        #expect(await eventually(timeout: 10) { events.closeCount(of: slowConnection.id) == 1 })

        // The other connection was never held up.
        #expect(healthyConnection.send(text: "still here"))
        #expect(try await healthy.readFrame().text == "still here")
        #expect(healthyConnection.isOpen)
        #expect(events.closeCount(of: healthyConnection.id) == 0)
        withExtendedLifetime(slow) {}
    }

    @Test func refusedUpgradeGetsTheHandlersResponse() async throws {
        let (server, port, events) = try startServer(webSocket: { request in
            request.query["token"] == "secret"
                ? .accept(group: "keyed")
                : .refuse(.json(401, Array(#"{"error":{"code":-401,"message":"unauthorized"}}"#.utf8)))
        })
        defer { server.stop() }

        guard case .refused(let response) = try await TestWebSocket.connect(port: port, path: "/events?token=wrong")
        else {
            Issue.record("upgrade without the token was accepted")
            return
        }
        #expect(response.status == 401)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.text == #"{"error":{"code":-401,"message":"unauthorized"}}"#)
        #expect(events.openedConnections.isEmpty)

        let accepted = try await TestWebSocket.open(port: port, path: "/events?token=secret")
        let connection = try #require(await events.waitForOpen())
        connection.send(text: "welcome")
        #expect(try await accepted.readFrame().text == "welcome")
        // Plain requests still reach the handler.
        #expect(try await httpRequest(port: port, "GET", "/events").status == 404)
    }

    @Test func stopClosesOpenWebSocketsAndReturns() async throws {
        let (server, port, events) = try startServer()
        let clients = try await TestWebSocket.open(3, port: port)
        for i in 0..<3 { _ = try #require(await events.waitForOpen(i)) }
        let connections = events.openedConnections

        // The clients do not answer the close frame while stop() runs: it cuts them.
        server.stop()
        #expect(events.closedIDs.sorted() == connections.map(\.id).sorted())
        for connection in connections {
            #expect(!connection.isOpen)
            #expect(!connection.send(text: "after stop"))
        }
        for client in clients {
            #expect(try await client.readUntilClose().closeCode == 1001)
            #expect(await client.socket.isClosedByPeer())
        }
    }

    @Test func webSocketsHoldNoWorker() async throws {
        // Three workers, five WebSockets: a WebSocket lives on the event loop, so plain
        // requests still find a worker.
        let (server, port, events) = try startServer(threads: 3)
        defer { server.stop() }

        let clients = try await TestWebSocket.open(5, port: port)
        _ = try #require(await events.waitForOpen(4))
        #expect(try await httpRequest(port: port, "GET", "/").status == 404)
        for (i, connection) in events.openedConnections.enumerated() {
            #expect(connection.send(text: "to \(i)"))
        }
        for client in clients {
            #expect(try await client.readFrame().text.hasPrefix("to "))
        }
    }
}
