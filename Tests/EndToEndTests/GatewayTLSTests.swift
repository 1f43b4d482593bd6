import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// SIP over TLS through real processes: `irisgw serve`, SIPp behind stunnel (SIPp has no
    /// TLS) as the carrier or the caller, the Swift client as the app. Certificates come from
    /// `openssl` in a temporary folder (TestPKI). RTP stays plain.
    @Suite struct GatewayTLSTests {
        /// The CA and the certificates every test here uses.
        final class Certificates: @unchecked Sendable {
            let pki: TestPKI
            let rogue: TestPKI
            let carrier: TestPKI.Issued
            let wrongName: TestPKI.Issued
            let expired: TestPKI.Issued
            let unknownCA: TestPKI.Issued
            let client: TestPKI.Issued
            let gateway: TestPKI.Issued
            let gatewayNext: TestPKI.Issued

            init() async throws {
                pki = try await TestPKI()
                rogue = try await TestPKI(name: "rogue CA")
                carrier = try await pki.issue(
                    "carrier", commonName: "carrier.test", altNames: ["DNS:carrier.test", "URI:sip:carrier.test"])
                wrongName = try await pki.issue("other", commonName: "other.test", altNames: ["DNS:other.test"])
                expired = try await pki.issue(
                    "expired", commonName: "carrier.test", altNames: ["DNS:carrier.test"], expired: true)
                unknownCA = try await rogue.issue("rogue", commonName: "carrier.test", altNames: ["DNS:carrier.test"])
                client = try await pki.issue(
                    "gw-client", commonName: "gw-client.test", altNames: ["DNS:gw-client.test"])
                gateway = try await pki.issue("gw-a", commonName: "gw-a.test", altNames: ["DNS:gw.test"])
                gatewayNext = try await pki.issue("gw-b", commonName: "gw-b.test", altNames: ["DNS:gw.test"])
            }

            func remove() {
                pki.remove()
                rogue.remove()
            }
        }

        static let start = ["onSessionCreated", "Initializing", "Connecting"]
        /// No INVITE ever left, so no Connecting.
        static let refused = ["onSessionCreated", "Initializing", "Disconnected", "error:-412", "ended:failed"]

        /// The carrier: SIPp over TCP behind a stunnel TLS server showing `certificate`. Its
        /// Contact names the stunnel port with `transport=tls`, so the gateway's in-dialog
        /// requests take the same TLS connection.
        static func carrier(
            _ xml: String, certificate: TestPKI.Issued, clientCA: String? = nil, sippArguments: [String] = []
        )
            async throws -> (SIPp, Stunnel)
        {
            // The scenario names stunnel's port, so stunnel starts first, toward SIPp's port.
            // A port another process takes before SIPp binds it (tests run in parallel) is
            // given up for a fresh pair, up to three times.
            var report = ""
            for _ in 0..<3 {
                let sippPort = try freePort()
                let tunnel = try await Stunnel.start(
                    .server(
                        certificate: certificate.certificate, key: certificate.key, to: sippPort,
                        clientCA: clientCA))
                let scenario = xml.replacingOccurrences(
                    of: "<sip:carrier@[local_ip]:[local_port]>",
                    with: "<sip:carrier@127.0.0.1:\(tunnel.port);transport=tls>")
                let sipp: SIPp
                do {
                    sipp = try SIPp(
                        .inline(name: "carrier", xml: scenario), transport: .tcp, port: sippPort, timeout: 30,
                        arguments: sippArguments)
                } catch {
                    tunnel.stop()
                    throw error
                }
                if await sipp.waitUntilListening(timeout: 10) { return (sipp, tunnel) }
                report = "\(sipp.report)"
                sipp.stop()
                tunnel.stop()
            }
            throw SocketError("SIPp did not start behind stunnel: \(report)", code: ECONNREFUSED)
        }

        /// A trunk whose proxies are `proxies` (URIs), checked as `carrier.test` against the test CA.
        static func profile(
            _ proxies: [String], _ certs: Certificates, clientCertificate: Bool = false
        ) -> GatewayProcess.Profile {
            var p = GatewayProcess.Profile(proxyURIs: proxies)
            var tls = "caFile: \"\(certs.pki.caFile)\", serverName: \"carrier.test\""
            if clientCertificate {
                tls += ", certificateFile: \"\(certs.client.certificate)\", keyFile: \"\(certs.client.key)\""
            }
            p.sipExtra = "tls: { \(tls) }"
            return p
        }

        @Test func outboundCallOverTLSCarriesAudioAndOurByeEndsIt() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let (sipp, tunnel) = try await Self.carrier(
                CarrierScenarios.answer(), certificate: certs.carrier, sippArguments: ["-rtp_echo"])
            defer { tunnel.stop(); sipp.stop() }
            let gw = try await GatewayProcess(profiles: [Self.profile(["sips:127.0.0.1:\(tunnel.port)"], certs)])
            defer { gw.stop() }
            let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw, source: .tone(hz: 440, amplitude: 0.3))
            { session, rec in
                #expect(
                    await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)\n\(tunnel.log)\n\(gw.printed)")
                var level = 0.0
                _ = await eventually(timeout: 5) {
                    level = session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.5)
                    return level > 0.3
                }
                #expect(level > 0.3, "440 Hz came back at \(level)")
                try await session.close()
            }
            #expect(
                rec.trace == Self.start + ["Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"],
                "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // What SIPp got came through TLS: our Via says so, the Request-URI is sips:.
            #expect(sipp.messages.contains("Via: SIP/2.0/TLS ") && sipp.messages.contains("INVITE sips:"), sipp.report)
            #expect(sipp.received("BYE ") == 1 && sipp.received("ACK ") == 1)
        }

        @Test func outboundCallOverTLSEndsWithTheCarriersBye() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let (sipp, tunnel) = try await Self.carrier(
                CarrierScenarios.answer(byeAfterMs: 1000), certificate: certs.carrier)
            defer { tunnel.stop(); sipp.stop() }
            let gw = try await GatewayProcess(profiles: [
                Self.profile(["sip:127.0.0.1:\(tunnel.port);transport=tls"], certs)
            ])
            defer { gw.stop() }
            let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw)
            #expect(
                rec.trace == Self.start + ["Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"],
                "\(rec.events)\n\(sipp.report)\n\(gw.printed)")
            #expect(rec.ended?.sip?.cause == 16)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            #expect(
                sipp.messages.contains("Contact: <sip:irisgw@127.0.0.1:") && sipp.messages.contains(";transport=tls>"),
                sipp.report)
        }

        struct RefusalRow: Sendable, CustomStringConvertible {
            var name: String
            /// Which of `Certificates` the carrier shows.
            var certificate: String
            var reason: String
            var description: String { name }
        }

        static let refusals: [RefusalRow] = [
            RefusalRow(
                name: "wrong name", certificate: "wrongName",
                reason: "wrong name: certificate names other.test, not carrier.test"),
            RefusalRow(name: "expired", certificate: "expired", reason: "certificate expired"),
            RefusalRow(name: "unknown CA", certificate: "unknownCA", reason: "certificate from an unknown CA")
        ]

        /// The gateway refuses the carrier's certificate: the session fails with what was
        /// wrong, stderr says it, and SIPp behind stunnel never sees a request.
        @Test(arguments: refusals)
        func aCertificateTheGatewayRefusesFailsTheCallAndSendsNothing(_ row: RefusalRow) async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let shown =
                switch row.certificate {
                case "wrongName": certs.wrongName
                case "expired": certs.expired
                default: certs.unknownCA
                }
            let (sipp, tunnel) = try await Self.carrier(CarrierScenarios.answer(), certificate: shown)
            defer { tunnel.stop(); sipp.stop() }
            let gw = try await GatewayProcess(profiles: [Self.profile(["sips:127.0.0.1:\(tunnel.port)"], certs)])
            defer { gw.stop() }
            let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw, timeout: 10)
            let reason = "TLS: carrier.test: \(row.reason)"
            #expect(rec.trace == Self.refused, "\(rec.events)\n\(gw.printed)")
            let error = rec.events.first { $0.event == .onSessionError }
            #expect(error?.message == "remote unreachable: " + reason, "\(String(describing: error))")
            #expect(rec.ended?.sip?.code == 503 && rec.ended?.sip?.reason == reason)
            #expect(await gw.waitForOutput(containing: "(carrier.test): \(row.reason)", timeout: 5), "\(gw.printed)")
            #expect(sipp.received("INVITE ") == 0 && sipp.messages.isEmpty, sipp.report)
            let records = try await gw.recordsAfterStop()
            #expect(records.first?.sipReason == reason && records.first?.endReason == "failed", "\(records)")
        }

        /// A TLS failure moves the call to the next proxy at once (no Timer B wait).
        @Test func aRefusedCertificateFailsOverToTheNextProxyAtOnce() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let badTunnel = try await Stunnel.start(
                .server(certificate: certs.expired.certificate, key: certs.expired.key, to: try freePort()))
            defer { badTunnel.stop() }
            let (sipp, tunnel) = try await Self.carrier(CarrierScenarios.answer(), certificate: certs.carrier)
            defer { tunnel.stop(); sipp.stop() }
            let gw = try await GatewayProcess(profiles: [
                Self.profile(["sips:127.0.0.1:\(badTunnel.port)", "sips:127.0.0.1:\(tunnel.port)"], certs)
            ])
            defer { gw.stop() }
            let started = SIPEventLoop.now()
            let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connected, timeout: 8), "\(rec.trace)\n\(gw.printed)\n\(sipp.report)")
                #expect(SIPEventLoop.now() - started < 8)
                try await session.close()
            }
            #expect(
                rec.trace == Self.start + ["Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"],
                "\(rec.events)")
            #expect(await gw.waitForOutput(containing: "certificate expired", timeout: 5), "\(gw.printed)")
        }

        /// A carrier that demands a client certificate: the trunk's works; without one the
        /// call fails and says so, and SIPp sees nothing.
        @Test func aCarrierThatDemandsAClientCertificate() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            do {
                let (sipp, tunnel) = try await Self.carrier(
                    CarrierScenarios.answer(), certificate: certs.carrier, clientCA: certs.pki.caFile)
                defer { tunnel.stop(); sipp.stop() }
                let gw = try await GatewayProcess(profiles: [
                    Self.profile(["sips:127.0.0.1:\(tunnel.port)"], certs, clientCertificate: true)
                ])
                defer { gw.stop() }
                let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw) { session, rec in
                    #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(tunnel.log)\n\(gw.printed)")
                    try await session.close()
                }
                #expect(rec.ended?.reason == .completed, "\(rec.events)")
                #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            }
            do {
                let (sipp, tunnel) = try await Self.carrier(
                    CarrierScenarios.answer(), certificate: certs.carrier, clientCA: certs.pki.caFile)
                defer { tunnel.stop(); sipp.stop() }
                let gw = try await GatewayProcess(profiles: [Self.profile(["sips:127.0.0.1:\(tunnel.port)"], certs)])
                defer { gw.stop() }
                let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw, timeout: 10)
                let reason = "TLS: carrier.test: the server requires a client certificate and none is configured"
                #expect(rec.trace == Self.refused, "\(rec.events)\n\(gw.printed)")
                #expect(rec.ended?.sip?.reason == reason, "\(rec.events)")
                #expect(sipp.received("INVITE ") == 0, sipp.report)
            }
        }

        // MARK: Inbound

        /// A caller over TLS: SIPp over TCP into a stunnel client that speaks TLS to the
        /// gateway's TLS listener, which demands a client certificate from the test CA.
        static func tlsGateway(
            _ certs: Certificates, requireClientCertificate: Bool = true
        ) async throws -> GatewayProcess {
            var args = [
                "--sip-tls-listen", "127.0.0.1:0", "--tls-certificate", certs.gateway.certificate, "--tls-key",
                certs.gateway.key
            ]
            if requireClientCertificate {
                args += ["--tls-verify-client", "require", "--tls-client-ca", certs.pki.caFile]
            }
            return try await GatewayProcess(profiles: [.init()], extraArguments: args)
        }

        static func caller(
            _ gw: GatewayProcess, _ certs: Certificates, clientCertificate: Bool = true, talkMs: Int = 2000
        )
            async throws -> (SIPp, Stunnel)
        {
            let tlsPort = try #require(gw.tlsPort, "\(gw.printed)")
            let tunnel = try await Stunnel.start(
                .client(
                    to: tlsPort, ca: certs.pki.caFile, name: "gw.test",
                    certificate: clientCertificate ? certs.client.certificate : nil,
                    key: clientCertificate ? certs.client.key : nil))
            let remote = SIPPeer(transport: .tcp, address: SocketAddress(host: "127.0.0.1", port: tunnel.port))
            do {
                let sipp = try SIPp(
                    .inline(name: "caller", xml: CallerScenarios.answered(talkMs: talkMs)), remote: remote,
                    transport: .tcp,
                    timeout: 40, arguments: ["-s", "+15550001000", "-rtp_echo"])
                return (sipp, tunnel)
            } catch {
                tunnel.stop()
                throw error
            }
        }

        /// Waits for the notification of the next call to `alice`, starting the caller.
        static func notification(
            _ gw: GatewayProcess, start: () async throws -> (SIPp, Stunnel)
        ) async throws -> (SessionEvent?, SIPp, Stunnel) {
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let (sipp, tunnel) = try await start()
            return await (listener.next(timeout: 10), sipp, tunnel)
        }

        @Test func inboundCallOverTLSWithAClientCertificate() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let gw = try await Self.tlsGateway(certs)
            defer { gw.stop() }
            let (note, sipp, tunnel) = try await Self.notification(gw) { try await Self.caller(gw, certs) }
            defer { tunnel.stop(); sipp.stop() }
            let n = try #require(note, "\(sipp.report)\n\(tunnel.log)\n\(gw.printed)")
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 600, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            var level = 0.0
            _ = await eventually(timeout: 4) {
                level = session.stream.leg.toneLevel(hz: 600, lastSeconds: 0.5)
                return level > 0.3
            }
            #expect(level > 0.3, "600 Hz came back at \(level)")
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // Our 200's Contact names the TLS listener.
            #expect(
                sipp.messages.contains("transport=tls") && sipp.messages.contains(":\(gw.tlsPort!);transport=tls"),
                sipp.report)
        }

        @Test func aCallerWithoutAClientCertificateIsRefused() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            let gw = try await Self.tlsGateway(certs)
            defer { gw.stop() }
            let (sipp, tunnel) = try await Self.caller(gw, certs, clientCertificate: false)
            defer { tunnel.stop(); sipp.stop() }
            #expect(
                await gw.waitForOutput(containing: "no client certificate", timeout: 10), "\(gw.printed)\n\(tunnel.log)"
            )
            #expect(!gw.printed.contains("PRIVATE KEY"))
            #expect(sipp.received("SIP/2.0 ") == 0, sipp.report)
        }

        /// SIGHUP rereads the certificate: new connections get the new one, the call in
        /// progress over the old connection goes on to its BYE.
        @Test func sighupReloadsTheCertificateWithoutDroppingCalls() async throws {
            let certs = try await Certificates()
            defer { certs.remove() }
            // The listener's files are copies the test can overwrite.
            let certificate = certs.pki.path("listener.pem"), key = certs.pki.path("listener.key")
            try FileManager.default.copyItem(atPath: certs.gateway.certificate, toPath: certificate)
            try FileManager.default.copyItem(atPath: certs.gateway.key, toPath: key)
            let gw = try await GatewayProcess(
                profiles: [.init()],
                extraArguments: [
                    "--sip-tls-listen", "127.0.0.1:0",
                    "--tls-certificate", certificate, "--tls-key", key
                ])
            defer { gw.stop() }
            let tlsPort = try #require(gw.tlsPort)
            #expect(await presentedSubject(port: tlsPort, serverName: "gw.test") == "CN = gw-a.test")

            let (note, sipp, tunnel) = try await Self.notification(gw) {
                try await Self.caller(gw, certs, talkMs: 4000)
            }
            defer { tunnel.stop(); sipp.stop() }
            let n = try #require(note, "\(sipp.report)\n\(gw.printed)")
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .silence), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")

            // A broken file changes nothing.
            try "not a certificate\n".write(toFile: certificate, atomically: true, encoding: .utf8)
            kill(gw.processID, SIGHUP)
            #expect(await gw.waitForOutput(containing: "were not reloaded", timeout: 5), "\(gw.printed)")
            #expect(await presentedSubject(port: tlsPort, serverName: "gw.test") == "CN = gw-a.test")

            try FileManager.default.removeItem(atPath: certificate)
            try FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: certs.gatewayNext.certificate, toPath: certificate)
            try FileManager.default.copyItem(atPath: certs.gatewayNext.key, toPath: key)
            kill(gw.processID, SIGHUP)
            #expect(await gw.waitForOutput(containing: "tls certificates reloaded", timeout: 5), "\(gw.printed)")
            #expect(await presentedSubject(port: tlsPort, serverName: "gw.test") == "CN = gw-b.test")

            // The call set up over the old certificate ends normally, by the caller's BYE.
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }
    }
}
