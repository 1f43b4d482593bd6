import Foundation
import Synchronization
import TestSupport
import Testing
import WebClient

/// `WebSocketClient.connect`, the form that never waits: the upgrade's outcome through the
/// completion, messages and the end through the handler, a pulled feed, a close that does
/// not wait; against the Python RFC 6455 server of `WebSocketClientTests`.
struct WebSocketClientEventTests {
    /// What the handler and the completion were given.
    final class Recorder: Sendable {
        private let state = Mutex<(events: [WebSocketEvent], opened: Result<WebSocketClient, IrisTransportError>?)>(
            ([], nil))

        func handle(_ event: WebSocketEvent) { state.withLock { $0.events.append(event) } }
        func opened(_ result: Result<WebSocketClient, IrisTransportError>) { state.withLock { $0.opened = result } }
        var events: [WebSocketEvent] { state.withLock { $0.events } }
        var result: Result<WebSocketClient, IrisTransportError>? { state.withLock { $0.opened } }
        var ends: [WebSocketEvent] {
            events.filter {
                if case .message = $0 { false } else { true }
            }
        }

        func connect(_ url: String, headers: [String: String]) {
            WebSocketClient.connect(
                url: url, headers: headers, timeout: 5, handler: { self.handle($0) }, completion: { self.opened($0) })
        }
    }

    private func url(_ server: PythonServer, _ query: String) -> String {
        "ws://127.0.0.1:\(server.port)/v1/events?\(query)"
    }

    private let auth = ["Authorization": "Bearer good"]

    @Test func feedIsPulledInOrderAndCloseWithoutWaitingEndsOnce() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let recorder = Recorder()
        recorder.connect(url(server, "mode=echo"), headers: auth)
        #expect(await eventually(timeout: 10) { recorder.result != nil })
        let socket = try #require(try recorder.result?.get())
        let queue = Mutex<[String]>((1...20).map { "message \($0)" })
        socket.feed(lowWater: 64) { queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
        #expect(await eventually(timeout: 10) { recorder.events.count == 20 })
        // More queued later goes out on the next pull.
        queue.withLock { $0.append("late") }
        socket.pullFeed()
        #expect(await eventually(timeout: 10) { recorder.events.count == 21 })
        #expect(recorder.events == ((1...20).map { "message \($0)" } + ["late"]).map { .message(.text($0)) })
        socket.closeWithoutWaiting(code: 1000, reason: "done")
        #expect(await eventually(timeout: 10) { !recorder.ends.isEmpty })
        #expect(recorder.ends == [.closed(WebSocketCloseFrame(code: 1000, reason: "done"))])
    }

    @Test func droppedConnectionIsReportedOnce() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let recorder = Recorder()
        recorder.connect(url(server, "mode=drop"), headers: auth)
        #expect(await eventually(timeout: 10) { !recorder.ends.isEmpty })
        #expect(recorder.events.first == .message(.text("last")))
        guard case .failed(let error) = recorder.ends.first, recorder.ends.count == 1 else {
            Issue.record("ended \(recorder.ends)")
            return
        }
        #expect(error.kind == .connection, "\(error)")
    }

    @Test func refusedUpgradeGoesToTheCompletionAlone() async throws {
        let server = try await PythonServer(source: ServerScripts.webSocket)
        defer { server.stop() }
        let recorder = Recorder()
        recorder.connect(url(server, "mode=script"), headers: ["Authorization": "Bearer wrong"])
        #expect(await eventually(timeout: 10) { recorder.result != nil })
        guard case .failure(let error)? = recorder.result else {
            Issue.record("opened despite the refusal")
            return
        }
        #expect(error.status == 401, "\(error)")
        #expect(recorder.events.isEmpty)
    }
}
