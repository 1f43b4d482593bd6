import ControlAPI
import Foundation
import Gateway
import IrisAPI
import IrisClient
import Synchronization
import TestSupport
import Testing
import irisgw

extension GatewaySuites {
    /// The inbound-notification webhook (`serve --config` with `webhook`): delivered, retried,
    /// and never in the call's way.
    @Suite struct GatewayWebhookTests {
        /// A webhook receiver on 127.0.0.1 (the project's own HTTP server).
        final class Receiver: @unchecked Sendable {
            let bodies = Mutex<[String]>([])
            let failFirst: Int
            let gate = DispatchSemaphore(value: 0)
            let blocking: Bool
            var server: HTTPServer!
            var port = 0

            init(failFirst: Int = 0, blocking: Bool = false) throws {
                self.failFirst = failFirst
                self.blocking = blocking
                server = HTTPServer(
                    configuration: .init(listen: "127.0.0.1:0", threads: 4),
                    handler: { [unowned self] r in
                        let n = bodies.withLock { b -> Int in
                            b.append(String(decoding: r.body, as: UTF8.self))
                            return b.count
                        }
                        // On the receiver's worker thread: the slow receiver under test.
                        if self.blocking { _ = self.gate.wait(timeout: .now() + 10) }
                        return .json(n <= self.failFirst ? 500 : 200, Array("{}".utf8))
                    }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in },
                    onWebSocketClose: { _ in })
                port = try server.start()
            }

            var url: String { "http://127.0.0.1:\(port)/irisgw/notify" }
            func stop() {
                gate.signal()
                server.stop()
            }
        }

        static func config(_ url: String, retries: Int) -> String {
            "{ webhook: { url: \"\(url)\", timeoutSec: 2, retries: \(retries) } }"
        }

        @Test func notificationIsPostedAndRetried() async throws {
            let receiver = try Receiver(failFirst: 1)
            defer { receiver.stop() }
            let gw = try await GatewayProcess(profiles: [.init()], config: Self.config(receiver.url, retries: 2))
            defer { gw.stop() }
            let caller = try GatewayInboundTests.caller(gw, CallerScenarios.cancels(afterMs: 500))
            defer { caller.stop() }
            // The first POST gets 500, the retry (after 1 s) 200.
            #expect(await eventually(timeout: 10) { receiver.bodies.withLock { $0.count } >= 2 })
            let posted = receiver.bodies.withLock { $0 }
            let event = try JSONDecoder().decode(SessionEvent.self, from: Data(try #require(posted.last).utf8))
            #expect(
                event.event == .onNotification && event.type == "notify" && event.routingid == "alice"
                    && event.roomtoken != nil)
            #expect(posted.count == 2 && posted[0] == posted[1])
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)
        }

        @Test func aReceiverThatNeverAnswersDoesNotDelayTheNextDelivery() async throws {
            // The first POST is never answered (until the test ends); the others are at once.
            let gate = DispatchSemaphore(value: 0)
            let bodies = Mutex<[String]>([])
            let server = HTTPServer(
                configuration: .init(listen: "127.0.0.1:0", threads: 4),
                handler: { r in
                    let n = bodies.withLock { b -> Int in
                        b.append(String(decoding: r.body, as: UTF8.self))
                        return b.count
                    }
                    if n == 1 { _ = gate.wait(timeout: .now() + 30) }  // on the receiver's worker thread
                    return .json(200, Array("{}".utf8))
                }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
            let port = try server.start()
            defer {
                gate.signal()
                server.stop()
            }
            // 30 s per attempt: a delivery queued behind the first would wait that long.
            let notifier = try WebhookNotifier(
                configuration: .init(url: "http://127.0.0.1:\(port)/hook", timeoutSec: 30, retries: 0))
            notifier.post(SessionEvent(event: .onNotification, roomId: "first", traceId: "t1"))
            #expect(await eventually(timeout: 10) { bodies.withLock { $0.count } == 1 })
            notifier.post(SessionEvent(event: .onNotification, roomId: "second", traceId: "t2"))
            #expect(await eventually(timeout: 10) { notifier.statistics.delivered == 1 })
            let posted = bodies.withLock { $0 }
            #expect(posted.count == 2 && posted[1].contains("second"), "\(posted)")
            // The first is still under way.
            #expect(notifier.inFlight.running == 1 && notifier.statistics.failed == 0)
            gate.signal()
            #expect(await eventually(timeout: 10) { notifier.statistics.delivered == 2 })
        }

        @Test func deliveriesBeyondTheBoundWaitTheirTurn() async throws {
            let gate = DispatchSemaphore(value: 0)
            let bodies = Mutex<[String]>([])
            let server = HTTPServer(
                configuration: .init(listen: "127.0.0.1:0", threads: 4),
                handler: { r in
                    let n = bodies.withLock { b -> Int in
                        b.append(String(decoding: r.body, as: UTF8.self))
                        return b.count
                    }
                    if n <= 2 { _ = gate.wait(timeout: .now() + 30) }  // on the receiver's worker thread
                    return .json(200, Array("{}".utf8))
                }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
            let port = try server.start()
            defer {
                gate.signal()
                gate.signal()
                server.stop()
            }
            let notifier = try WebhookNotifier(
                configuration: .init(url: "http://127.0.0.1:\(port)/hook", timeoutSec: 30, retries: 0),
                maxInFlight: 2)
            for i in 0..<3 { notifier.post(SessionEvent(event: .onNotification, roomId: "r\(i)", traceId: "t\(i)")) }
            // Two under way (held by the receiver), the third waits for a place.
            #expect(await eventually(timeout: 10) { bodies.withLock { $0.count } == 2 && notifier.inFlight == (2, 1) })
            gate.signal()
            #expect(
                await eventually(timeout: 10) {
                    notifier.statistics.delivered == 2 && bodies.withLock { $0.count } == 3
                })
            gate.signal()
            #expect(await eventually(timeout: 10) { notifier.statistics.delivered == 3 && notifier.inFlight == (0, 0) })
        }

        @Test func aWebhookThatHangsDoesNotHoldTheCall() async throws {
            let receiver = try Receiver(blocking: true)
            defer { receiver.stop() }
            let gw = try await GatewayProcess(profiles: [.init()], config: Self.config(receiver.url, retries: 0))
            defer { gw.stop() }
            let (note, caller) = try await GatewayInboundTests.notification(gw) {
                try GatewayInboundTests.caller(gw, CallerScenarios.answered(talkMs: 300))
            }
            defer { caller.stop() }
            let n = try #require(note)
            // The webhook is still blocked: the call is answered and completes all the same.
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed)
            #expect(receiver.bodies.withLock { $0.count } == 1)
            receiver.gate.signal()
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)
        }
    }
}
