import Foundation
import IrisClient
import Testing
import WebClient

/// WebSocketClient against a Python RFC 6455 server on 127.0.0.1.
struct WebSocketClientTests {
    private func url(_ server: PythonServer, _ query: String) -> String {
        "ws://127.0.0.1:\(server.port)/v1/events?\(query)"
    }

    private let auth = ["Authorization": "Bearer good"]

    @Test func messagesArriveInOrderAndCloseIsClean() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let socket = try WebSocketClient(url: url(server, "mode=script&n=5"), headers: auth, timeout: 5)
        defer { socket.close() }
        for i in 0..<5 {
            let text = try #require(try socket.receive(timeout: 5))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(json["seq"] as? Int == i)
            #expect(json["type"] as? String == "call.ringing")
        }
        // Three fragments with a ping between them.
        #expect(try socket.receive(timeout: 5) == #"{"frag":"mented"}"#)
        // 80000 bytes: the 64-bit length form.
        #expect(try socket.receive(timeout: 5) == String(repeating: "é", count: 40_000))
        // The binary message is skipped by receive(); both pings were answered, masked.
        let report = try #require(try socket.receive(timeout: 5))
        let pongs = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: [[Any]]])
        #expect(pongs["pongs"]?.map { $0[0] as? Bool } == [true, true])
        #expect(pongs["pongs"]?.map { $0[1] as? String } == ["mid", "are-you-there"])
        // The server's close frame ends the stream.
        #expect(try socket.receive(timeout: 5) == nil)
        #expect(socket.closeFrame == WebSocketCloseFrame(code: 1000, reason: "bye"))
        #expect(try socket.receive(timeout: 1) == nil)
        #expect(throws: IrisTransportError.closed) { try socket.send(text: "late") }
    }

    @Test func echoRoundTripAndLocalClose() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let socket = try WebSocketClient(url: url(server, "mode=echo"), headers: auth, timeout: 5)
        let long = String(repeating: "0123456789", count: 30)
        try socket.send(text: "hello")
        try socket.send(text: long)
        try socket.send(binary: [0, 1, 2, 255])
        try socket.ping([7])
        #expect(try socket.receiveMessage(timeout: 5) == .text("hello"))
        #expect(try socket.receiveMessage(timeout: 5) == .text(long))
        #expect(try socket.receiveMessage(timeout: 5) == .binary([0, 1, 2, 255]))
        socket.close(code: 1000, reason: "done")
        // close() waited for the server's answering close frame.
        #expect(socket.closeFrame == WebSocketCloseFrame(code: 1000, reason: "done"))
        #expect(try socket.receive(timeout: 1) == nil)
        #expect(throws: IrisTransportError.closed) { try socket.send(text: "after close") }
    }

    @Test func receiveTimesOutWithADistinctError() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let socket = try WebSocketClient(url: url(server, "mode=idle"), headers: auth, timeout: 5)
        defer { socket.close() }
        do throws(IrisTransportError) {
            _ = try socket.receive(timeout: 0.2)
            Issue.record("receive should have timed out")
        } catch {
            guard case .timeout = error else {
                Issue.record("expected .timeout, got \(error)")
                return
            }
        }
        // Still usable after a timeout.
        #expect(throws: IrisTransportError.self) { try socket.receive(timeout: 0.1) }
        try socket.send(text: "still here")
    }

    @Test func closeFromAnotherThreadWakesTheReceiver() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let socket = try WebSocketClient(url: url(server, "mode=idle"), headers: auth, timeout: 5)
        let start = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { socket.close() }
        #expect(try socket.receive(timeout: 10) == nil)
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func connectionDroppedWithoutCloseFrameThrows() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let socket = try WebSocketClient(url: url(server, "mode=drop"), headers: auth, timeout: 5)
        defer { socket.close() }
        #expect(try socket.receive(timeout: 5) == "last")
        do throws(IrisTransportError) {
            _ = try socket.receive(timeout: 5)
            Issue.record("expected connectionClosed")
        } catch {
            #expect(error.kind == .connection, "\(error)")
        }
    }

    @Test func unauthorizedUpgradeThrowsWithStatus() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        do throws(IrisTransportError) {
            _ = try WebSocketClient(
                url: url(server, "mode=script"), headers: ["Authorization": "Bearer wrong"], timeout: 5)
            Issue.record("the upgrade should have been refused")
        } catch {
            #expect(error.status == 401, "\(error)")
            #expect(error.kind == .rejected)
            guard case .handshakeRejected(_, let body) = error else { return }
            #expect(body == #"{"error":"unauthorized"}"#)
        }
    }

    @Test func connectionRefused() {
        let port = unusedTCPPort()
        #expect(throws: IrisTransportError.connectionRefused(host: "127.0.0.1", port: port)) {
            try WebSocketClient(url: "ws://127.0.0.1:\(port)/v1/events", timeout: 2)
        }
    }
}
