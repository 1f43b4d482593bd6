import Testing

@testable import SIP

/// `X-Irisgw-Source`, the carrier's real source as a trusted edge proxy names it.
struct IrisgwSourceTests {
    @Test(arguments: [
        (
            "192.0.2.7:5060;transport=udp",
            SIPPeer(transport: .udp, address: SocketAddress(host: "192.0.2.7", port: 5060))
        ),
        (
            "192.0.2.7:5080;transport=TCP",
            SIPPeer(transport: .tcp, address: SocketAddress(host: "192.0.2.7", port: 5080))
        ),
        (
            "192.0.2.7:5061;transport=tls",
            SIPPeer(transport: .tls, address: SocketAddress(host: "192.0.2.7", port: 5061))
        ),
        ("192.0.2.7:5060", SIPPeer(transport: .udp, address: SocketAddress(host: "192.0.2.7", port: 5060))),
        (
            "[2001:db8::1]:5060;transport=udp",
            SIPPeer(transport: .udp, address: SocketAddress(host: "2001:db8::1", port: 5060))
        )
    ])
    func parsesWhatKamailioWrites(_ text: String, _ expected: SIPPeer) {
        #expect(SIPPeer(irisgwSource: text) == expected)
    }

    @Test(arguments: [
        "", "192.0.2.7", "192.0.2.7:0", "192.0.2.7:70000", "carrier.example.com:5060", "192.0.2.7:5060;transport=sctp",
        "192.0.2.7:5060;foo=bar", "192.0.2.7:5060;transport", "2001:db8::1:5060"
    ])
    func refusesAnythingElse(_ text: String) {
        #expect(SIPPeer(irisgwSource: text) == nil)
    }
}
