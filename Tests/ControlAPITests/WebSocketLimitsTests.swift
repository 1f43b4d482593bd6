// WebSocket caps by client group, the slowest-first eviction, frame rules (masking,
// fragments, size, binary, close codes), IPv6, and stop().

import Dispatch
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import ControlAPI

/// The upgrade callback of these tests: the group is the `group` query parameter.
@Sendable private func byGroup(_ request: HTTPRequest) -> WebSocketUpgrade {
    .accept(group: request.query["group"] ?? "none")
}

@Suite struct WebSocketLimitsTests {
    @Test func clientsThatNeverReadCannotTakeAnotherGroupsSlots() async throws {
        let (server, port, events) = try startServer(
            webSocketQueueLimit: 256,
            configure: {
                $0.maxWebSocketsPerClient = 41
                $0.maxWebSockets = 100
                $0.maxConnectionsPerSource = 200
            }, webSocket: byGroup)
        defer { server.stop() }

        // Group A at its cap of 41: one client that reads, 40 that never do (tiny receive buffers).
        let reader = try await TestWebSocket.open(port: port, path: "/events?group=A")
        let readerConnection = try #require(await events.waitForOpen(0))
        let stalled = try await TestWebSocket.open(40, port: port, path: "/events?group=A", receiveBuffer: 4096)
        _ = try #require(await events.waitForOpen(40))
        let stalledConnections = Array(events.openedConnections[1...40])
        #expect(server.statistics.openWebSockets == 41)

        // The server keeps sending to the stalled ones until each has messages queued unsent
        // (well under the queue limit: they stay open, holding their slots).
        let big = String(repeating: "x", count: 32 * 1024)
        for connection in stalledConnections {
            var sent = 0
            while connection.queuedCount < 8, sent < 200, connection.send(text: big) {
                sent += 1
                // the socket drains meanwhile
                if connection.queuedCount < 8 { try await Task.sleep(nanoseconds: 1_000_000) }  // suspends: a poll
            }
            #expect(connection.queuedCount >= 8)
        }
        #expect(readerConnection.send(text: "for the reader"))
        #expect(try await reader.readFrame().text == "for the reader")

        // Group B is not affected by A being at its cap.
        let b = try await TestWebSocket.open(port: port, path: "/events?group=B")
        let bConnection = try #require(await events.waitForOpen(41))
        #expect(bConnection.group == "B")
        #expect(bConnection.send(text: "hello B"))
        #expect(try await b.readFrame().text == "hello B")
        #expect(server.statistics.refusals(.webSocketDroppedSlowest) == 0)

        // A 42nd client of A: the slowest of A makes room (not the reader, not B).
        let newcomer = try await TestWebSocket.open(port: port, path: "/events?group=A")
        let newcomerConnection = try #require(await events.waitForOpen(42))
        #expect(newcomerConnection.send(text: "welcome"))
        #expect(try await newcomer.readFrame().text == "welcome")
        #expect(server.statistics.refusals(.webSocketDroppedSlowest) == 1)
        #expect(await eventually(timeout: 5) { events.closedIDs.count == 1 })
        let dropped = try #require(events.closedIDs.first)
        #expect(stalledConnections.map(\.id).contains(dropped))
        #expect(readerConnection.isOpen && bConnection.isOpen)
        #expect(server.statistics.openWebSockets == 42)
        #expect(server.statistics.refusals(.webSocketDroppedOverflow) == 0)
        withExtendedLifetime(stalled) {}
    }

    @Test func totalCapReplacesOnlyWithinTheGroup() async throws {
        let (server, port, events) = try startServer(
            configure: {
                $0.maxWebSocketsPerClient = 10
                $0.maxWebSockets = 3
            }, webSocket: byGroup)
        defer { server.stop() }

        let a = try await TestWebSocket.open(2, port: port, path: "/events?group=A")
        let b = try await TestWebSocket.open(port: port, path: "/events?group=B")
        _ = try #require(await events.waitForOpen(2))

        // Full, and C has nothing to give up: refused.
        guard case .refused(let response) = try await TestWebSocket.connect(port: port, path: "/events?group=C") else {
            Issue.record("a fourth WebSocket was accepted over maxWebSockets")
            return
        }
        #expect(response.status == 503)
        #expect(server.statistics.refusals(.tooManyWebSockets) == 1)

        // B replaces its own.
        let b2 = try await TestWebSocket.open(port: port, path: "/events?group=B")
        #expect(await eventually(timeout: 5) { events.closedIDs.count == 1 })
        #expect(events.closedIDs == [events.openedConnections[2].id])
        #expect(server.statistics.refusals(.webSocketDroppedSlowest) == 1)
        #expect(events.openedConnections[0].isOpen && events.openedConnections[1].isOpen)
        withExtendedLifetime((a, b, b2)) {}
    }

    @Test func overflowingClientIsDroppedAndCounted() async throws {
        let (server, port, events) = try startServer(webSocketQueueLimit: 16)
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port, receiveBuffer: 4096)
        let connection = try #require(await events.waitForOpen())
        let big = String(repeating: "y", count: 64 * 1024)
        var sends = 0
        while connection.send(text: big), sends < 10_000 { sends += 1 }
        #expect(!connection.isOpen)
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 })
        #expect(server.statistics.refusals(.webSocketDroppedOverflow) == 1)
        withExtendedLifetime(client) {}
    }

    @Test func fragmentedMessagesAreJoinedUpToTheCap() async throws {
        let (server, port, events) = try startServer(configure: { $0.maxWebSocketMessageBytes = 1000 })
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        _ = try #require(await events.waitForOpen())
        // 3 x 300 bytes, with a ping between the fragments (control frames may interleave).
        try await client.sendRaw(fin: false, opcode: 0x1, [UInt8](repeating: 0x61, count: 300))
        try await client.sendRaw(fin: true, opcode: 0x9, Array("mid".utf8))
        #expect(try await client.readFrame().text == "mid")
        try await client.sendRaw(fin: false, opcode: 0x0, [UInt8](repeating: 0x62, count: 300))
        try await client.sendRaw(fin: true, opcode: 0x0, [UInt8](repeating: 0x63, count: 300))
        try await client.send(opcode: 0x9, Array("still open".utf8))
        #expect(try await client.readFrame().text == "still open")

        // Past the cap in fragments: 1009.
        try await client.sendRaw(fin: false, opcode: 0x1, [UInt8](repeating: 0x61, count: 600))
        try await client.sendRaw(fin: true, opcode: 0x0, [UInt8](repeating: 0x61, count: 600))
        #expect(try await client.readUntilClose().closeCode == 1009)
        #expect(await client.socket.isClosedByPeer())
        #expect(await eventually(timeout: 5) { events.closedIDs.count == 1 })
    }

    @Test(arguments: [
        ("unmasked frame", [UInt8]([0x81, 0x02, 0x68, 0x69]), UInt16(1002)),
        ("continuation first", TestWebSocket.maskedFrame(fin: true, opcode: 0x0, Array("x".utf8)), UInt16(1002)),
        ("binary message", TestWebSocket.maskedFrame(fin: true, opcode: 0x2, [1, 2, 3]), UInt16(1003)),
        ("invalid UTF-8", TestWebSocket.maskedFrame(fin: true, opcode: 0x1, [0xC3, 0x28]), UInt16(1007)),
        ("reserved bit", [0xC1, 0x80, 0, 0, 0, 0], UInt16(1002)),
        ("close code 1005", TestWebSocket.maskedFrame(fin: true, opcode: 0x8, [0x03, 0xED]), UInt16(1002)),
        ("fragmented ping", TestWebSocket.maskedFrame(fin: false, opcode: 0x9, []), UInt16(1002))
    ])
    func protocolErrorsCloseWithTheirCode(name: String, bytes: [UInt8], code: UInt16) async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        let connection = try #require(await events.waitForOpen())
        try await client.socket.write(bytes)
        #expect(try await client.readUntilClose().closeCode == code, "\(name)")
        #expect(await client.socket.isClosedByPeer(), "\(name)")
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 }, "\(name)")
    }

    @Test func closeFrameIsEchoed() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let client = try await TestWebSocket.open(port: port)
        let connection = try #require(await events.waitForOpen())
        try await client.sendClose(code: 4001)
        #expect(try await client.readUntilClose().closeCode == 4001)
        #expect(await client.socket.isClosedByPeer())
        #expect(!connection.isOpen)

        let bare = try await TestWebSocket.open(port: port)
        _ = try #require(await events.waitForOpen(1))
        try await bare.send(opcode: 0x8, [])
        let reply = try await bare.readUntilClose()
        #expect(reply.payload.isEmpty)
        #expect(await eventually(timeout: 5) { events.closedIDs.count == 2 })
    }

    @Test func badHandshakesAreRefused() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        let oldVersion = try TestSocket(port: port)
        try await oldVersion.write(
            "GET /events HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
        let version = try await oldVersion.readResponse()
        #expect(version.status == 426 && version.headers["sec-websocket-version"] == "13")

        let badKey = try TestSocket(port: port)
        try await badKey.write(
            "GET /events HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try await badKey.readResponse().status == 400)
        #expect(events.openedConnections.isEmpty)
    }

    @Test func ipv6ListenServesRequestsAndWebSockets() async throws {
        let (server, port, events) = try startServer(
            listen: "[::1]:0", handler: { request in .text(200, request.remoteAddress) })
        defer { server.stop() }

        let response = try TestSocket(port: port, host: "::1")
        try await response.sendRequest("GET", "/who")
        #expect(try await response.readResponse().text == "::1")

        let client = try await TestWebSocket.open(port: port, host: "::1")
        let connection = try #require(await events.waitForOpen())
        #expect(connection.request.remoteAddress == "::1")
        #expect(connection.send(text: "over v6"))
        #expect(try await client.readFrame().text == "over v6")
        // [::1] is IPv6 only.
        #expect(throws: (any Error).self) { try TestSocket(port: port) }
    }

    @Test func dualStackListenShowsIPv4ClientsAsIPv4() async throws {
        let (server, port, _) = try startServer(
            listen: "[::]:0", handler: { request in .text(200, request.remoteAddress) })
        defer { server.stop() }

        #expect(try await httpRequest(port: port, "GET", "/").text == "127.0.0.1")
        let v6 = try TestSocket(port: port, host: "::1")
        try await v6.sendRequest("GET", "/")
        #expect(try await v6.readResponse().text == "::1")
    }

    @Test(.timeLimit(.minutes(1)))
    func stopClosesWebSocketsWith1001AndDoesNotWaitForClientsThatAnswer() async throws {
        // A long grace: stop() returns as soon as every client has answered the close frame.
        let (server, port, events) = try startServer(configure: { $0.webSocketCloseGrace = 120 })
        let clients = try await TestWebSocket.open(4, port: port).map { UncheckedBox($0) }
        _ = try #require(await events.waitForOpen(3))
        let connections = events.openedConnections
        // Each client answers the server's close frame as it comes, while stop() waits for
        // them (on a dispatch thread: it blocks its caller).
        let codes = await withTaskGroup(of: UInt16?.self) { group in
            for client in clients {
                group.addTask {
                    guard let frame = try? await client.value.readUntilClose() else { return nil }
                    try? await client.value.sendClose(code: frame.closeCode ?? 1000)
                    _ = await client.value.socket.isClosedByPeer()
                    return frame.closeCode ?? 0
                }
            }
            group.addTask {
                await offThePool { server.stop() }
                return nil
            }
            return await group.reduce(into: [UInt16]()) { if let code = $1 { $0.append(code) } }
        }
        #expect(codes == [1001, 1001, 1001, 1001])
        for connection in connections {
            #expect(events.closeCount(of: connection.id) == 1)
            #expect(!connection.isOpen)
        }
        #expect(server.statistics.openConnections == 0)
        // A window in which a late onClose would show (what is tested), not a wait.
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(events.closedIDs.count == 4)
    }
}

@Suite struct HTTPServerLifetimeTests {
    @Test func stoppedServerReleasesItsCore() async throws {
        let (server, port, events) = try startServer(handler: { _ in .text(200, "ok") })
        weak let core = server.runningCore
        let client = try await TestWebSocket.open(port: port)
        _ = try #require(await events.waitForOpen())
        #expect(try await httpRequest(port: port, "GET", "/").status == 200)
        server.stop()
        // Timers and queued work on the stopped loop must not keep the core (and its loop's
        // descriptors) alive.
        #expect(await eventually(timeout: 5) { core == nil })
        withExtendedLifetime(client) {}
    }
}

/// Hands a non-Sendable test object to another thread that alone uses it from then on.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension TestWebSocket {
    /// A masked client frame with any FIN bit and opcode (fragments, bad frames).
    static func maskedFrame(fin: Bool, opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 126)
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [(fin ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + mask
            + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Sends a masked frame of up to 65535 bytes with the given FIN bit.
    func sendRaw(fin: Bool, opcode: UInt8, _ payload: [UInt8]) async throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        let mask: [UInt8] = [9, 8, 7, 6]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try await socket.write(frame)
    }
}
