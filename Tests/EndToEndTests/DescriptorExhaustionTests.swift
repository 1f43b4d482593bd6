import Foundation
import Glibc
import TestSupport
import Testing

extension GatewaySuites.HostileTrafficTests {
    /// The gateway truly out of descriptors (not merely at its connection caps): under
    /// `prlimit --nofile=300` each TCP listener may hold half the limit, so control API
    /// connections plus SIP ones take every descriptor. The SIP listener then accepts through
    /// its reserve descriptor and closes at once what it cannot keep (counted as
    /// `sip_tcp_out_of_descriptors`); once descriptors are back it accepts, and calls go
    /// through. The test process's own limit is untouched.
    @Test func outOfDescriptorsTheSIPListenerShedsAndRecovers() async throws {
        let (sipp, gw) = try await carrierAndGateway(
            CarrierScenarios.answer(),
            config: """
                { sip: { tcp: { maxConnections: 1000, maxConnectionsPerSource: 1000, messageTimeoutSec: 120, idleTimeoutSec: 600 } },
                  apiLimits: { maxConnections: 1000, maxConnectionsPerSource: 1000, headerTimeoutSec: 120 } }
                """,
            launcher: ["/usr/bin/prlimit", "--nofile=300:300", "--"])
        defer { gw.stop(); sipp.stop() }

        // Idle API connections, short of the API's cap (150): with the gateway's own
        // descriptors they leave fewer than 150 for SIP.
        let apiPort = try #require(gw.apiURL.split(separator: ":").last.flatMap { Int($0) })
        var api = (0..<140).compactMap { _ in TCPPeer(port: apiPort) }
        defer { api.forEach { $0.close() } }
        #expect(api.count == 140)
        // SIP peers past what is left: the last ones find no descriptor.
        let sip = (0..<150).compactMap { _ in TCPPeer(port: gw.sipPort) }
        defer { sip.forEach { $0.close() } }
        #expect(sip.count == 150)
        // What the listener could not keep it closed: some peer sees its connection end.
        let shed = await eventually(timeout: 10) {
            for peer in sip.reversed() where await peer.waitClosed(timeout: 0) { return true }
            return false
        }
        #expect(shed, "no SIP connection was shed")

        // Descriptors back: the API answers again and counted the shedding.
        api.forEach { $0.close() }
        api = []
        var shedCount = 0
        #expect(
            await eventually(timeout: 10) {
                shedCount = await Self.refused(gw, "sip_tcp_out_of_descriptors")
                return shedCount > 0
            }, "\(shedCount)")
        try await Self.stillCalls(gw, sipp)
    }
}
