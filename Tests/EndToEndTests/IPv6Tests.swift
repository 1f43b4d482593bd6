import Foundation
import Testing

@testable import SIP

/// Calls over IPv6 loopback, UDP and TCP: SIPp calls our answering endpoint on [::1].
@Suite(.enabled(if: SIPp.isInstalled && SocketAddress(host: "::1", port: 0).withSockAddr { _, _ in true } == true))
struct IPv6Tests {
    @Test(arguments: [SIPTransportProtocol.udp, .tcp])
    func sippCallsUsOverIPv6(transport: SIPTransportProtocol) async throws {
        let ua = try SIPUserAgent(
            configuration: SIPUserAgentConfiguration(listen: [(transport, SocketAddress(host: "::1", port: 0))]))
        let local = try #require(ua.start().first)
        defer { ua.shutdown() }
        #expect(local.address.host == "::1")
        let endpoint = await ua.loop.run { AnsweringEndpoint(ua: ua, behaviour: .init()) }
        let sipp = try SIPp(
            .builtIn("uac"), remote: local, transport: transport, calls: 3, timeout: 20,
            arguments: ["-i", "::1", "-r", "10"])
        defer { sipp.stop() }
        #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
        let stats = await ua.loop.run { endpoint.stats }
        #expect(stats.connected == 3 && stats.ended == 3, "\(stats)")
        // Our SDP and Contact carry the IPv6 address, bracketed where the grammar wants it.
        #expect(sipp.messages.contains("c=IN IP6 ::1"), sipp.report)
        #expect(sipp.messages.contains("Contact: <sip:irisgw@[::1]:\(local.address.port)"), sipp.report)
    }
}
