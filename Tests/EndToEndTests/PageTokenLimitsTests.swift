import Foundation
import TestSupport
import Testing
import WebClient

/// What one routing id's page tokens may hold at once (`pageTokens` in the serve config), and
/// the end of a page's event socket with its token, against a real `irisgw serve`
/// (docs/api.md, "Page tokens").
extension GatewaySuites {
    @Suite struct PageTokenLimitsTests {
        typealias Scope = PageTokenScopeTests

        static func eventSocket(_ gw: GatewayProcess, _ token: String) throws(IrisTransportError) -> WebSocketClient {
            try WebSocketClient(
                url: gw.apiURL.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events?access_token=" + token)
        }

        /// The status of a refused event socket (0 when it opened or failed otherwise).
        static func refusal(_ gw: GatewayProcess, _ token: String) -> (status: Int, body: String) {
            do {
                let socket = try eventSocket(gw, token)
                socket.close()
                return (0, "opened")
            } catch .handshakeRejected(let status, let body) {
                return (status, body)
            } catch {
                return (0, "\(error)")
            }
        }

        @Test func sessionsArePerRoutingIdAndOverTheQuotaIs429() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [sim.port])],
                config: "{ pageTokens: { sessionsPerRoutingId: 2, webSocketsPerRoutingId: 2 } }")
            defer { gw.stop() }
            let a1 = try await Scope.mint(gw, routingId: "web-1"), a2 = try await Scope.mint(gw, routingId: "web-1")
            let b = try await Scope.mint(gw, routingId: "web-2")

            let first = try await Scope.create(gw, bearer: a1, routingId: nil)
            let second = try await Scope.create(gw, bearer: a2, routingId: nil)
            #expect(first.status == 201 && second.status == 201, "\(first) \(second)")
            // Every token of web-1 shares its quota: a third is refused, whichever token asks.
            for token in [a1, a2] {
                let over = try await Scope.create(gw, bearer: token, routingId: nil)
                #expect(over.status == 429 && Scope.code(over.json) == -503, "\(over)")
                #expect(Scope.message(over.json).contains("routing id web-1 has 2 live sessions"), "\(over)")
            }
            #expect(try await Scope.sessions(gw).count == 2, "a refused create leaves nothing")
            // Not across routing ids; and the API key is not limited by it.
            #expect(try await Scope.create(gw, bearer: b, routingId: nil).status == 201)
            #expect(try await Scope.create(gw, bearer: gw.apiKey, routingId: "web-1").status == 201)
            #expect(
                try await Scope.create(gw, bearer: a1, routingId: nil).status == 429,
                "the key's session counts for web-1 too"
            )

            // Once web-1's sessions end, its pages may call again.
            for s in try await Scope.sessions(gw) where s["routingId"] as? String == "web-1" {
                _ = try await Scope.call(
                    gw, "DELETE", "/v1/sessions/\(s["roomId"] as? String ?? "")", bearer: gw.apiKey)
            }
            #expect(
                await eventually(timeout: 10) {
                    ((try? await Scope.sessions(gw)) ?? []).allSatisfy { $0["routingId"] as? String != "web-1" }
                })
            #expect(try await Scope.create(gw, bearer: a2, routingId: nil).status == 201)
            try await Scope.closeAll(gw)
        }

        @Test func eventSocketsArePerRoutingIdAndOverTheQuotaIs429() async throws {
            let gw = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [5])],
                config: "{ pageTokens: { webSocketsPerRoutingId: 2 } }")
            defer { gw.stop() }
            let a1 = try await Scope.mint(gw, routingId: "web-1"), a2 = try await Scope.mint(gw, routingId: "web-1")
            let b = try await Scope.mint(gw, routingId: "web-2")
            let first = try Self.eventSocket(gw, a1)
            defer { first.close() }
            let second = try Self.eventSocket(gw, a2)
            defer { second.close() }
            for token in [a1, a2] {
                let refused = Self.refusal(gw, token)
                #expect(refused.status == 429 && refused.body.contains("-503"), "\(refused)")
            }
            // The two already open were not replaced: both still answer a ping.
            for socket in [first, second] {
                try socket.ping()
                // A timeout: still open.
                await #expect(throws: IrisTransportError.self) { try await socket.receive(timeout: 0.3) }
                #expect(socket.closeFrame == nil)
            }
            // Another routing id and the API key are not limited by web-1's quota.
            let other = try Self.eventSocket(gw, b)
            defer { other.close() }
            let keyed = try (0..<3).map { _ in try Self.eventSocket(gw, gw.apiKey) }
            defer { keyed.forEach { $0.close() } }
            // One of web-1's closes: its slot is free again.
            first.close()
            #expect(await eventually(timeout: 10) { Self.refusal(gw, a1).status == 0 })
        }

        /// A page's event socket ends with its token: 1008 and the reason, after the expiry.
        @Test(.timeLimit(.minutes(1)))
        func aPagesEventSocketClosesWhenItsTokenExpires() async throws {
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [5])])
            defer { gw.stop() }
            let token = try await Scope.mint(gw, routingId: "web-1", ttlSec: 2)
            let page = try Self.eventSocket(gw, token)
            defer { page.close() }
            let keyed = try Self.eventSocket(gw, gw.apiKey)
            defer { keyed.close() }
            let deadline = Date().addingTimeInterval(15)
            var ended = false
            while !ended, Date() < deadline {
                do {
                    ended = try await page.receive(timeout: 1) == nil
                } catch .timeout {
                    continue
                }
            }
            #expect(ended, "the server closed the page's socket")
            #expect(page.closeFrame == WebSocketCloseFrame(code: 1008, reason: "the page token has expired"))
            // The key's socket stays.
            await #expect(throws: IrisTransportError.self) { try await keyed.receive(timeout: 0.3) }
            #expect(keyed.closeFrame == nil)
        }
    }
}
