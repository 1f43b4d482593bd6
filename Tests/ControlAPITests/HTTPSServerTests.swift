import Foundation
import Glibc
import TLS
import TestSupport
import Testing
import WebClient

@testable import ControlAPI

/// The control API's server over TLS: HTTPS requests and WSS event sockets through the one
/// connection path, against certificates the test makes with `openssl` (TestPKI), and the
/// WebClient on the other end checking the chain and the host name (RFC 6125).
@Suite struct HTTPSServerTests {
    /// A CA, a server certificate for 127.0.0.1 (only: `localhost` is the wrong name) and an
    /// HTTPS server with a JSON handler and a WebSocket callback that accepts everything.
    struct Fixture {
        let pki: TestPKI
        let server: HTTPServer
        let port: Int
        let events: ServerEvents
        let certificate: TestPKI.Issued

        init(headerTimeout: Double = 10) async throws {
            pki = try await TestPKI()
            certificate = try await pki.issue("api", commonName: "irisgw api", altNames: ["IP:127.0.0.1"])
            let tls = TLSServerSettings(certificateFile: certificate.certificate, keyFile: certificate.key)
            (server, port, events) = try startServer(
                configure: {
                    $0.tls = tls
                    $0.headerTimeout = headerTimeout
                }, handler: { request in .json(200, Array(#"{"path":"\#(request.path)"}"#.utf8)) })
        }

        var url: String { "https://127.0.0.1:\(port)" }

        func stop() {
            server.stop()
            pki.remove()
        }
    }

    @Test func httpsRequestAndWSSEventsRoundTrip() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let client = try HTTPClient(baseURL: f.url, caFile: f.pki.caFile)
        let response = try await client.request(method: "GET", path: "/v1/sessions", timeout: 5)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"path":"/v1/sessions"}"#)
        // A second request on a fresh connection, with a body.
        let posted = try await client.request(method: "POST", path: "/v1/x", body: Array(#"{"a":1}"#.utf8), timeout: 5)
        #expect(posted.status == 200)

        let ws = try WebSocketClient(url: "wss://127.0.0.1:\(f.port)/v1/events", timeout: 5, caFile: f.pki.caFile)
        defer { ws.close() }
        let opened = try #require(await f.events.waitForOpen(timeout: 5))
        #expect(opened.send(text: #"{"event":"hello"}"#))
        #expect(try ws.receive(timeout: 5) == #"{"event":"hello"}"#)
        // Larger than one TLS record, both ways through the layer.
        let big = String(repeating: "x", count: 40_000)
        #expect(opened.send(text: big))
        #expect(try ws.receive(timeout: 5) == big)
        try ws.ping(Array("p".utf8))
        #expect(await eventually(timeout: 5) { f.server.statistics.tlsHandshakes >= 3 })
        #expect(f.server.statistics.tls)
        #expect(f.server.statistics.tlsFailures.values.reduce(0, +) == 0)
    }

    @Test func aClientTrustingAnotherCAIsRefusedWithAClearError() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let other = try await TestPKI(name: "another CA")
        defer { other.remove() }
        let client = try HTTPClient(baseURL: f.url, caFile: other.caFile)
        do {
            _ = try await client.request(method: "GET", path: "/", timeout: 5)
            Issue.record("the request went through a certificate from an unknown CA")
        } catch {
            #expect(error == .tls(host: "127.0.0.1", port: f.port, failure: .unknownCA), "\(error)")
            #expect(error.kind == .security)
            #expect(error.description.contains("unknown CA"), "\(error)")
        }
        #expect(throws: IrisTransportError.self) {
            _ = try WebSocketClient(url: "wss://127.0.0.1:\(f.port)/v1/events", timeout: 5, caFile: other.caFile)
        }
        // The server saw the client's alert: counted, and nothing reached the handler.
        #expect(
            await eventually(timeout: 5) { f.server.statistics.tlsFailures["certificate_refused", default: 0] >= 2 })
        #expect(f.events.handledRequests.isEmpty)
    }

    @Test func aClientNamingAnotherHostIsRefused() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        // localhost reaches the same listener, but the certificate names 127.0.0.1 only.
        let client = try HTTPClient(baseURL: "https://localhost:\(f.port)", caFile: f.pki.caFile)
        do {
            _ = try await client.request(method: "GET", path: "/", timeout: 5)
            Issue.record("the request went to a certificate for another host")
        } catch {
            guard case .tls(_, _, .wrongName(let expected, let presented)) = error else {
                Issue.record("expected a wrong-name TLS failure, got \(error)")
                return
            }
            #expect(expected == "localhost" && presented == ["127.0.0.1"])
        }
        #expect(f.events.handledRequests.isEmpty)
    }

    @Test func plainHTTPToTheHTTPSListenerGetsNothingUseful() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let plain = try HTTPClient(baseURL: "http://127.0.0.1:\(f.port)")
        do {
            let r = try await plain.request(method: "GET", path: "/v1/sessions", timeout: 5)
            Issue.record("plain HTTP got an answer: \(r.status)")
        } catch {
            // the client did not ask for TLS: the server's end is a protocol error or a close
            #expect(error.kind != .security)
        }
        #expect(await eventually(timeout: 5) { f.server.statistics.tlsFailures["not_tls"] == 1 })
        #expect(f.events.handledRequests.isEmpty)
        let metrics = ControlAPIServer.metricsText(f.server.statistics)
        #expect(metrics.contains(#"irisgw_api_tls_failures_total{reason="not_tls"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"irisgw_api_tls_failures_total{reason="unknown_ca"} 0"#))
    }

    @Test func aHandshakeThatNeverFinishesTimesOutAndIsCounted() async throws {
        let f = try await Fixture(headerTimeout: 0.3)
        defer { f.stop() }
        let fd = try connectTCP(port: f.port)
        defer { close(fd) }
        #expect(await eventually(timeout: 5) { f.server.statistics.tlsFailures["handshake_timeout"] == 1 })
        #expect(await eventually(timeout: 5) { f.server.statistics.openConnections == 0 })
    }

    @Test func reloadTakesNewCertificatesForNewConnections() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let next = try await TestPKI(name: "next CA")
        defer { next.remove() }
        // A broken file changes nothing.
        try "not a certificate".write(toFile: f.certificate.certificate + ".broken", atomically: true, encoding: .utf8)
        let renewed = try await next.issue("api2", commonName: "irisgw api", altNames: ["IP:127.0.0.1"])
        let original = try Data(contentsOf: URL(fileURLWithPath: f.certificate.certificate))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: f.certificate.certificate))
        #expect(throws: TLSFailure.self) { try f.server.reloadTLS() }
        #expect(
            try await HTTPClient(baseURL: f.url, caFile: f.pki.caFile).request(method: "GET", path: "/", timeout: 5)
                .status == 200)
        _ = original

        // The renewed files in place, then the reload: the new CA is needed from now on.
        try FileManager.default.removeItem(atPath: f.certificate.certificate)
        try FileManager.default.removeItem(atPath: f.certificate.key)
        try FileManager.default.copyItem(atPath: renewed.certificate, toPath: f.certificate.certificate)
        try FileManager.default.copyItem(atPath: renewed.key, toPath: f.certificate.key)
        try f.server.reloadTLS()
        #expect(
            try await HTTPClient(baseURL: f.url, caFile: next.caFile).request(method: "GET", path: "/", timeout: 5)
                .status == 200)
        await #expect(throws: IrisTransportError.self) {
            try await HTTPClient(baseURL: f.url, caFile: f.pki.caFile).request(method: "GET", path: "/", timeout: 5)
        }
    }

    @Test func aServerRequiringClientCertificatesRefusesAClientWithout() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let certificate = try await pki.issue("api", commonName: "irisgw api", altNames: ["IP:127.0.0.1"])
        let (server, port, events) = try startServer(configure: {
            $0.tls = TLSServerSettings(
                certificateFile: certificate.certificate, keyFile: certificate.key, clientCAFile: pki.caFile,
                verifyClient: .require)
        })
        defer { server.stop() }
        await #expect(throws: IrisTransportError.self) {
            try await HTTPClient(baseURL: "https://127.0.0.1:\(port)", caFile: pki.caFile).request(
                method: "GET", path: "/", timeout: 5)
        }
        #expect(await eventually(timeout: 5) { server.statistics.tlsFailures["no_client_certificate"] == 1 })
        #expect(events.handledRequests.isEmpty)
    }

    @Test func aServerWithUnusableFilesDoesNotStart() async throws {
        let pki = try await TestPKI()
        defer { pki.remove() }
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                listen: "127.0.0.1:0",
                tls: TLSServerSettings(
                    certificateFile: pki.path("none.pem"),
                    keyFile: pki.path("none.key"))),
            handler: { _ in .json(200, []) }, webSocket: { _ in .accept(group: "g") },
            onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        do {
            _ = try server.start()
            Issue.record("started without a certificate")
        } catch {
            #expect("\(error)".contains("none.pem"), "\(error)")
        }
    }

    @Test func aMissingCAFileIsAUsageError() throws {
        do {
            _ = try HTTPClient(baseURL: "https://127.0.0.1:1", caFile: "/nonexistent/ca.pem")
            Issue.record("accepted a CA file that does not exist")
        } catch {
            #expect(error.kind == .usage && error.description.contains("/nonexistent/ca.pem"), "\(error)")
        }
    }

    private func connectTCP(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw TestPKI.Failure(description: "connect failed")
        }
        return fd
    }
}
