import Glibc
import Testing

@testable import SIP

/// What the agent calls itself: the listener's address, a wildcard listener's route source,
/// or the advertised address the gateway gives for a peer (a public address before a NAT).
@Suite struct AdvertisedAddressTests {
    @Test(
        "parses",
        arguments: [
            ("203.0.113.7", "203.0.113.7", nil), ("203.0.113.7:5080", "203.0.113.7", 5080),
            ("[2001:db8::7]:5080", "2001:db8::7", 5080), ("2001:db8::7", "2001:db8::7", nil),
            ("[2001:db8::7]", "2001:db8::7", nil),
            ("sbc.example.net", "sbc.example.net", nil), ("SBC.Example.NET:5061", "sbc.example.net", 5061)
        ] as [(String, String, Int?)])
    func parses(_ text: String, _ host: String, _ port: Int?) {
        #expect(SIPAdvertisedAddress.parse(text) == SIPAdvertisedAddress(host: host, port: port))
    }

    @Test(
        "refuses",
        arguments: [
            "", ":5060", "203.0.113.7:0", "203.0.113.7:65536", "203.0.113.7:x", "[sbc.example.net]",
            "a b", "[2001:db8::7", "sbc.example.net:5060:1", "host;transport=tcp"
        ])
    func refuses(_ text: String) {
        #expect(SIPAdvertisedAddress.parse(text) == nil)
    }

    static func agent(_ listen: [(SIPTransportProtocol, SocketAddress)]) throws -> (SIPUserAgent, [SIPPeer]) {
        let ua = try SIPUserAgent(
            configuration: SIPUserAgentConfiguration(listen: listen.map { (transport: $0.0, address: $0.1) }))
        let bound = try ua.start()
        return (ua, bound)
    }

    @Test func viaContactAndCallIDNameTheAdvertisedAddressTowardItsPeers() async throws {
        let (ua, bound) = try Self.agent([
            (.udp, SocketAddress(host: "127.0.0.1", port: 0)), (.tcp, SocketAddress(host: "127.0.0.1", port: 0))
        ])
        defer { ua.shutdown() }
        let port = bound[0].address.port
        let carrier = SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.2", port: 5060))
        let carrierTCP = SIPPeer(transport: .tcp, address: SocketAddress(host: "127.0.0.2", port: 5060))
        let platform = SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.3", port: 5060))
        await ua.loop.run {
            ua.advertisedAddress = {
                $0.address.host == "127.0.0.2"
                    ? SIPAdvertisedAddress(host: "203.0.113.7", port: $0.transport == .tcp ? 5061 : nil) : nil
            }
            let via = ua.makeVia(toward: carrier)
            #expect(via.host == "203.0.113.7" && via.port == port && via.rport != nil)
            #expect(ua.contactURI(toward: carrier).serialize() == "sip:irisgw@203.0.113.7:\(port)")
            #expect(ua.contactURI(toward: carrierTCP).serialize() == "sip:irisgw@203.0.113.7:5061;transport=tcp")
            #expect(ua.localAddress(toward: platform) == SocketAddress(host: "127.0.0.1", port: port))
        }
    }

    @Test func aWildcardListenerNamesTheAddressItsRouteLeavesFrom() async throws {
        let (ua, bound) = try Self.agent([(.udp, SocketAddress(host: "0.0.0.0", port: 0))])
        defer { ua.shutdown() }
        let peer = SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: 5060))
        await ua.loop.run {
            #expect(ua.localAddress(toward: peer) == SocketAddress(host: "127.0.0.1", port: bound[0].address.port))
        }
    }

    @Test func eachFamilyIsServedByItsOwnListener() async throws {
        let (ua, bound) = try Self.agent([
            (.udp, SocketAddress(host: "127.0.0.1", port: 0)), (.udp, SocketAddress(host: "::1", port: 0))
        ])
        defer { ua.shutdown() }
        await ua.loop.run {
            #expect(
                ua.localAddress(toward: SIPPeer(transport: .udp, address: SocketAddress(host: "::1", port: 5060)))
                    == bound[1].address)
            #expect(
                ua.localAddress(toward: SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: 5060)))
                    == bound[0].address)
        }
    }
}
