import ControlAPI
import DNS
import Foundation
import IOCore
import Synchronization
import TestSupport
import Testing
import WebClient

/// The web client on the stream layer: names through the DNS module (dnsmasq), never
/// blocking the client loop, and a refused address failing over to the next.
@Suite struct WebClientStreamTests {
    /// An HTTP server on `listen` that answers every request with its path as JSON.
    static func server(_ listen: String = "127.0.0.1:0") throws -> (HTTPServer, Int) {
        let server = HTTPServer(
            configuration: .init(listen: listen, threads: 2),
            handler: { r in
                .json(200, Array(#"{"path":"\#(r.path)"}"#.utf8))
            }, webSocket: { _ in .refuse(.json(404, [])) }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        return (server, try server.start())
    }

    static func dns(_ port: Int, timeoutMs: Int = 1500, tries: Int = 2) -> DNSResolverConfiguration {
        DNSResolverConfiguration(
            servers: [SocketAddress(host: "127.0.0.1", port: port)], timeoutMs: timeoutMs, tries: tries)
    }

    @Test(.enabled(if: TestDNSServer.isInstalled))
    func aNameIsResolvedThroughTheDNSModuleWithoutHoldingOthers() async throws {
        let (api, port) = try Self.server()
        defer { api.stop() }
        let dns = try await TestDNSServer(records: ["host-record=api.dns.test,127.0.0.1"])
        defer { dns.stop() }
        // A DNS server that never answers: its lookup waits on the client loop meanwhile.
        let silent = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let slow = try HTTPClient(
            baseURL: "http://slow.dns.test:\(port)", dns: Self.dns(silent.local.port, timeoutMs: 3000, tries: 1))
        let slowResult = Mutex<Result<Int, IrisTransportError>?>(nil)
        try slow.request(method: "GET", path: "/slow", timeout: 20) { result in
            slowResult.withLock { $0 = result.map(\.status) }
        }

        let client = try HTTPClient(baseURL: "http://api.dns.test:\(port)", dns: Self.dns(dns.port))
        let response = try await client.request(method: "GET", path: "/v1/hello", timeout: 10)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"path":"/v1/hello"}"#)
        #expect(dns.queries("A", "api.dns.test") >= 1, "\(dns.log)")
        // The silent server's lookup was still waiting while the other name was answered.
        #expect(slowResult.withLock { $0 } == nil)

        // It ends on its own, with the resolver's reason.
        #expect(await eventually(timeout: 15) { slowResult.withLock { $0 } != nil })
        guard case .failure(let error)? = slowResult.withLock({ $0 }) else {
            Issue.record("the silent name should have failed")
            return
        }
        #expect(error.kind == .connection && error.description.contains("cannot resolve"), "\(error)")
    }

    @Test(.enabled(if: TestDNSServer.isInstalled))
    func aRefusedAddressFailsOverToTheNext() async throws {
        // The server on ::1 only; the name's A record (tried first) is 127.0.0.1 on the same
        // port, where nothing listens.
        let (api, port) = try Self.server("[::1]:0")
        defer { api.stop() }
        try #require(!isPortOpen(host: "127.0.0.1", port: port), "127.0.0.1:\(port) is taken; rerun")
        let dns = try await TestDNSServer(records: ["host-record=two.dns.test,127.0.0.1,::1"])
        defer { dns.stop() }
        let client = try HTTPClient(baseURL: "http://two.dns.test:\(port)", dns: Self.dns(dns.port))
        let response = try await client.request(method: "GET", path: "/over", timeout: 10)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"path":"/over"}"#)

        // With only the refused address, the refusal is what is reported.
        try await dns.replace(records: ["host-record=one.dns.test,127.0.0.1"])
        let refused = try HTTPClient(baseURL: "http://one.dns.test:\(port)", dns: Self.dns(dns.port))
        await #expect(throws: IrisTransportError.connectionRefused(host: "127.0.0.1", port: port)) {
            try await refused.request(method: "GET", path: "/", timeout: 10)
        }
    }

    /// True when something accepts TCP connections at `host:port`.
    func isPortOpen(host: String, port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        let rc = SocketAddress(host: host, port: port).withSockAddr { connect(fd, $0, $1) }
        return rc == 0
    }
}
