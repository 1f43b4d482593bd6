import ControlAPI
import Foundation
import IrisAPI
import IrisClient
import Synchronization
import TestSupport
import Testing

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
                server = HTTPServer(configuration: .init(listen: "127.0.0.1:0", threads: 4), handler: { [unowned self] r in
                    let n = bodies.withLock { b -> Int in
                        b.append(String(decoding: r.body, as: UTF8.self))
                        return b.count
                    }
                    if self.blocking { _ = self.gate.wait(timeout: .now() + 10) }
                    return .json(n <= self.failFirst ? 500 : 200, Array("{}".utf8))
                }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
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
            #expect(event.event == .onNotification && event.type == "notify" && event.routingid == "alice" && event.roomtoken != nil)
            #expect(posted.count == 2 && posted[0] == posted[1])
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)
        }

        @Test func aWebhookThatHangsDoesNotHoldTheCall() async throws {
            let receiver = try Receiver(blocking: true)
            defer { receiver.stop() }
            let gw = try await GatewayProcess(profiles: [.init()], config: Self.config(receiver.url, retries: 0))
            defer { gw.stop() }
            let (note, caller) = try GatewayInboundTests.notification(gw) {
                try GatewayInboundTests.caller(gw, CallerScenarios.answered(talkMs: 300))
            }
            defer { caller.stop() }
            let n = try #require(note)
            // The webhook is still blocked: the call is answered and completes all the same.
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed)
            #expect(receiver.bodies.withLock { $0.count } == 1)
            receiver.gate.signal()
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)
        }
    }
}
