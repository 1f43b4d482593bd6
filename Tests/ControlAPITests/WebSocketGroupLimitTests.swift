// What an upgrade decision may add to its group: a hard limit of the group's own (refused
// with 429, nothing replaced) and an expiry (the server closes with 1008 and the reason).

import Foundation
import TestSupport
import Testing

@testable import ControlAPI

@Suite struct WebSocketGroupLimitTests {
    /// Group from the `group` query parameter; `limit` 2 for every group; an expiry in
    /// `expires` seconds when that parameter is given.
    @Sendable private static func decide(_ request: HTTPRequest) -> WebSocketUpgrade {
        let expiry = request.query["expires"].flatMap(Double.init).map {
            WebSocketExpiry(at: Date().timeIntervalSince1970 + $0, reason: "the credential has expired")
        }
        return .accept(group: request.query["group"] ?? "none", limit: 2, expiry: expiry)
    }

    @Test func aGroupAtItsOwnLimitIsRefusedAndNothingIsReplaced() async throws {
        let (server, port, events) = try startServer(webSocket: Self.decide)
        defer { server.stop() }
        let a = try await TestWebSocket.open(2, port: port, path: "/events?group=A")
        let opened = try #require(await events.waitForOpen(1))
        guard case .refused(let response) = try await TestWebSocket.connect(port: port, path: "/events?group=A") else {
            Issue.record("a third WebSocket of A was accepted")
            return
        }
        #expect(response.status == 429 && response.text.contains("its limit"), "\(response.status) \(response.text)")
        #expect(server.statistics.refusals(.webSocketGroupLimit) == 1)
        #expect(server.statistics.refusals(.webSocketDroppedSlowest) == 0 && server.statistics.openWebSockets == 2)
        #expect(opened.send(text: "still here"))
        #expect(try await a[1].readFrame().text == "still here")
        // Another group is not limited by A's.
        let b = try await TestWebSocket.open(port: port, path: "/events?group=B")
        #expect(server.statistics.openWebSockets == 3)
        // One of A's closes: its slot is free again.
        try await a[0].sendClose(code: 1000)
        _ = try await a[0].readUntilClose()
        #expect(
            await eventually(timeout: 5) { server.statistics.openWebSockets == 2 },
            "\(server.statistics.openWebSockets) \(events.closedIDs)")
        let again = try await TestWebSocket.open(port: port, path: "/events?group=A")
        #expect(server.statistics.openWebSockets == 3)
        withExtendedLifetime((a, b, again)) {}
    }

    @Test func anExpiredWebSocketGetsWhatWasQueuedThenClose1008WithTheReason() async throws {
        let (server, port, events) = try startServer(webSocket: Self.decide)
        defer { server.stop() }
        // The lasting one first: from the expiring one's open to the send below, as little as can be.
        let lasting = try await TestWebSocket.open(port: port, path: "/events?group=B")
        let lastingConnection = try #require(await events.waitForOpen())
        let client = try await TestWebSocket.open(port: port, path: "/events?group=A&expires=1")
        let connection = try #require(await events.waitForOpen(1))
        #expect(connection.send(text: "before the end"))
        #expect(try await client.readFrame().text == "before the end")
        let close = try await client.readUntilClose()
        #expect(
            close.closeCode == 1008
                && String(decoding: close.payload.dropFirst(2), as: UTF8.self) == "the credential has expired")
        try await client.sendClose(code: 1008)
        #expect(await eventually(timeout: 5) { events.closeCount(of: connection.id) == 1 })
        #expect(server.statistics.refusals(.webSocketExpired) == 1)
        // One without an expiry stays.
        #expect(lastingConnection.isOpen && lastingConnection.send(text: "on"))
        #expect(try await lasting.readFrame().text == "on")
    }

    @Test func aWebSocketExpiredByTheTimeItOpensIsClosedAtOnce() async throws {
        let (server, port, events) = try startServer(webSocket: Self.decide)
        defer { server.stop() }
        let client = try await TestWebSocket.open(port: port, path: "/events?group=A&expires=-1")
        let connection = try #require(await events.waitForOpen())
        #expect(try await client.readUntilClose().closeCode == 1008)
        #expect(await eventually(timeout: 5) { !connection.isOpen })
    }
}
