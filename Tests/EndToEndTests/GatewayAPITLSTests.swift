import ControlAPI
import Foundation
import Glibc
import IrisAPI
import IrisClient
import Synchronization
import TLS
import TestSupport
import Testing

extension GatewaySuites {
    /// The control API over HTTPS and WSS (`serve --api-tls-certificate/--api-tls-key`), and an
    /// HTTPS webhook: the real binary, certificates made by the test (TestPKI), the CLI and
    /// the Swift client trusting the test CA, the carrier simulator as the PSTN.
    @Suite struct GatewayAPITLSTests {
        /// A gateway whose API speaks HTTPS with a certificate for 127.0.0.1 from `pki`'s CA.
        static func gateway(
            _ pki: TestPKI, profiles: [GatewayProcess.Profile], config: String? = nil,
            extraArguments: [String] = []
        ) async throws -> GatewayProcess {
            let cert = try await pki.issue("api", commonName: "irisgw api", altNames: ["IP:127.0.0.1"])
            return try await GatewayProcess(
                profiles: profiles,
                extraArguments: ["--api-tls-certificate", cert.certificate, "--api-tls-key", cert.key] + extraArguments,
                config: config, apiCAFile: pki.caFile)
        }

        @Test func cliAndSwiftClientPlaceCallsOverHTTPSAndWSS() async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await Self.gateway(pki, profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            #expect(gw.apiURL.hasPrefix("https://127.0.0.1:"), "\(gw.apiURL)")

            // The CLI: +15550100001 answers; the events come over WSS.
            let r = try await GatewayCLITests.run([
                "call", "+15550100001", "--from", "+15557654321", "--api", gw.apiURL,
                "--ca-file", pki.caFile, "--data-dir", gw.dataDir, "--hangup-after", "1.5", "--json"
            ])
            #expect(r.status == 0, "\(r.lines)")
            let events = GatewayCLITests.events(r.lines)
            #expect(events.contains { $0.status == .connected }, "\(r.lines)")
            #expect(events.last?.event == .onSessionEnded && events.last?.reason == .completed, "\(r.lines)")

            // Without the test CA the CLI cannot reach the gateway (exit 3) and says why.
            let refused = try await ChildProcess.run(
                GatewayProcess.binary,
                [
                    "call", "+15550100001", "--from", "+15557654321",
                    "--api", gw.apiURL, "--data-dir", gw.dataDir
                ], timeout: 20)
            let said = refused.output
            #expect(refused.status == 3, "\(said)")
            #expect(said.contains("unknown CA"), "\(said)")

            // The Swift client: +15550100002 is busy (486, cause 17), the end event over WSS.
            let (busy, _) = try await GatewayOutboundTests.call(gw, target: "+15550100002")
            #expect(busy.trace.last == "ended:busy", "\(busy.trace)")
            #expect(busy.ended?.sip?.code == 486)

            // Plain HTTP to the HTTPS port gets nothing, and the gateway counts it.
            let plain = try HTTPClient(baseURL: gw.apiURL.replacingOccurrences(of: "https://", with: "http://"))
            await #expect(throws: IrisTransportError.self) {
                try await plain.request(method: "GET", path: "/healthz", timeout: 5)
            }
            let metrics = try await HTTPClient(
                baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey], caFile: pki.caFile
            )
            .request(method: "GET", path: "/metrics", timeout: 5)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains(#"irisgw_api_tls_failures_total{reason="not_tls"} 1"#), "\(text)")
            #expect(await gw.waitForOutput(containing: "does not speak TLS", timeout: 5), "\(gw.printed)")
        }

        @Test func sighupReloadsTheAPICertificateAndPlainHTTPIsOnlyWhereAsked() async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let gw = try await Self.gateway(
                pki, profiles: [.init()], extraArguments: ["--api-listen-plain", "127.0.0.1:0"])
            defer { gw.stop() }
            // The plain listener asked for, on loopback (so no warning), beside the HTTPS one.
            let plainLine = try #require(
                gw.lines.first { $0.hasPrefix("listening api-plain http://127.0.0.1:") }, "\(gw.printed)")
            let plainURL = String(plainLine.dropFirst("listening api-plain ".count))
            #expect(
                try await HTTPClient(baseURL: plainURL).request(method: "GET", path: "/healthz", timeout: 5).status
                    == 200)
            #expect(!gw.printed.contains("warning"), "\(gw.printed)")

            let next = try await TestPKI(name: "next CA")
            defer { next.remove() }
            let renewed = try await next.issue("api2", commonName: "irisgw api", altNames: ["IP:127.0.0.1"])
            let current = pki.path("api.pem"), currentKey = pki.path("api.key")
            try FileManager.default.removeItem(atPath: current)
            try FileManager.default.removeItem(atPath: currentKey)
            try FileManager.default.copyItem(atPath: renewed.certificate, toPath: current)
            try FileManager.default.copyItem(atPath: renewed.key, toPath: currentKey)
            kill(gw.processID, SIGHUP)
            #expect(await gw.waitForOutput(containing: "api tls certificate reloaded", timeout: 10), "\(gw.printed)")
            let health = try await HTTPClient(baseURL: gw.apiURL, caFile: next.caFile).request(
                method: "GET", path: "/healthz", timeout: 5)
            #expect(health.status == 200)
            await #expect(throws: IrisTransportError.self) {
                try await HTTPClient(baseURL: gw.apiURL, caFile: pki.caFile).request(
                    method: "GET", path: "/healthz", timeout: 5)
            }
            // The harness's own client (stop() reads /metrics) trusts the old CA: give it the new one.
            try FileManager.default.removeItem(atPath: pki.caFile)
            try FileManager.default.copyItem(atPath: next.caFile, toPath: pki.caFile)
        }

        @Test func serveRefusesIncompleteOrUnusableAPICertificates() async throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-apitls-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let base = try GatewayCLITests.serveArguments(in: dir)
            // A plain listener without HTTPS, a key without its certificate: usage errors.
            #expect(
                try await GatewayCLITests.run(base + ["--api-listen-plain", "127.0.0.1:0"], timeout: 20).status == 2)
            #expect(
                try await GatewayCLITests.run(
                    base + ["--api-tls-key", dir.appendingPathComponent("k.pem").path], timeout: 20
                ).status == 2)
            // Files that cannot be read stop the start.
            let missing = dir.appendingPathComponent("missing.pem").path
            let failed = try await ChildProcess.run(
                GatewayProcess.binary,
                base + ["--api-tls-certificate", missing, "--api-tls-key", missing], timeout: 20)
            let said = failed.output
            #expect(failed.status == 1, "\(said)")
            #expect(said.contains("missing.pem") && !said.contains("ready"), "\(said)")
            // The same keys from the --config file (ControlAPI reads them) reach the listener, and
            // a bad API key of the file is refused naming the file and the key.
            let config = dir.appendingPathComponent("serve.json5")
            try "{ apiTlsCertificate: \"\(missing)\", apiTlsKey: \"\(missing)\" }".write(
                to: config, atomically: true, encoding: .utf8)
            let fromFile = try await ChildProcess.run(
                GatewayProcess.binary, base + ["--config", config.path], timeout: 20)
            #expect(fromFile.status == 1, "\(fromFile.output)")
            #expect(fromFile.output.contains("missing.pem") && !fromFile.output.contains("ready"), "\(fromFile.output)")
            for (text, key) in [
                ("{ apiLimits: { maxConnections: 0 } }", "apiLimits.maxConnections"),
                ("{ apiTlsCertificate: \"a.pem\" }", "apiTlsKey")
            ] {
                try text.write(to: config, atomically: true, encoding: .utf8)
                let bad = try await ChildProcess.run(
                    GatewayProcess.binary, base + ["--config", config.path], timeout: 20)
                #expect(bad.status != 0 && bad.output.contains("serve.json5: \(key):"), "\(bad.output)")
            }
        }

        /// A webhook receiver speaking HTTPS (the project's own server with a certificate).
        final class TLSReceiver: @unchecked Sendable {
            let bodies = Mutex<[String]>([])
            var server: HTTPServer!
            var port = 0

            init(certificate: TestPKI.Issued) throws {
                let tls = TLSServerSettings(certificateFile: certificate.certificate, keyFile: certificate.key)
                server = HTTPServer(
                    configuration: .init(listen: "127.0.0.1:0", threads: 2, tls: tls),
                    handler: { [unowned self] r in
                        bodies.withLock { $0.append(String(decoding: r.body, as: UTF8.self)) }
                        return .json(200, Array("{}".utf8))
                    }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in },
                    onWebSocketClose: { _ in })
                port = try server.start()
            }

            var url: String { "https://127.0.0.1:\(port)/irisgw/notify" }
            func stop() { server.stop() }
        }

        @Test func httpsWebhookIsDeliveredWithTheRightCAAndRefusedWithTheWrongOne() async throws {
            let pki = try await TestPKI()
            defer { pki.remove() }
            let receiver = try TLSReceiver(
                certificate: try await pki.issue("hook", commonName: "hooks", altNames: ["IP:127.0.0.1"]))
            defer { receiver.stop() }

            // Trusting the receiver's CA: delivered.
            let gw = try await GatewayProcess(
                profiles: [.init()],
                config:
                    "{ webhook: { url: \"\(receiver.url)\", timeoutSec: 2, retries: 0, caFile: \"\(pki.caFile)\" } }")
            defer { gw.stop() }
            let caller = try GatewayInboundTests.caller(gw, CallerScenarios.cancels(afterMs: 500))
            defer { caller.stop() }
            #expect(await eventually(timeout: 10) { receiver.bodies.withLock { $0.count } == 1 })
            let event = try JSONDecoder().decode(
                SessionEvent.self, from: Data(try #require(receiver.bodies.withLock { $0.first }).utf8))
            #expect(event.event == .onNotification && event.routingid == "alice")
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)

            // Trusting another CA: refused before anything is sent, retried, then logged with the reason.
            let other = try await TestPKI(name: "another CA")
            defer { other.remove() }
            let wrong = try await GatewayProcess(
                profiles: [.init()],
                config:
                    "{ webhook: { url: \"\(receiver.url)\", timeoutSec: 2, retries: 1, caFile: \"\(other.caFile)\" } }")
            defer { wrong.stop() }
            let second = try GatewayInboundTests.caller(wrong, CallerScenarios.cancels(afterMs: 500))
            defer { second.stop() }
            #expect(await wrong.waitForOutput(containing: "failed after 2 attempts", timeout: 15), "\(wrong.printed)")
            #expect(wrong.printed.contains("unknown CA"), "\(wrong.printed)")
            #expect(receiver.bodies.withLock { $0.count } == 1)
            #expect(receiver.server.statistics.tlsFailures["certificate_refused", default: 0] >= 2)
            #expect(await second.waitForExit(timeout: 10) == 0, second.report)
        }
    }
}
