import Testing

@testable import SIP

/// The three states of RFC 3581 rport.
enum RportExpectation: Sendable, Equatable {
    case absent
    case requested
    case value(Int)

    init(_ rport: Int??) {
        switch rport {
        case .none: self = .absent
        case .some(.none): self = .requested
        case .some(.some(let n)): self = .value(n)
        }
    }
}

struct ViaCase: Sendable, CustomStringConvertible {
    var text: String
    var name = "SIP"
    var version = "2.0"
    var transport: String
    var host: String
    var port: Int?
    var branch: String?
    var received: String? = nil
    var rport: RportExpectation = .absent
    var rfc3261: Bool
    /// nil: serialises back to `text`.
    var written: String? = nil
    var description: String { text }
}

private let viaCases: [ViaCase] = [
    .init(
        text: "SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK776asdhds", transport: "UDP", host: "192.0.2.1", port: 5060,
        branch: "z9hG4bK776asdhds", rfc3261: true),
    .init(
        text: "SIP / 2.0 / tcp client.example.com;branch=z9hG4bK1;received=192.0.2.9;rport=5062",
        transport: "TCP", host: "client.example.com", port: nil, branch: "z9hG4bK1", received: "192.0.2.9",
        rport: .value(5062), rfc3261: true,
        written: "SIP/2.0/TCP client.example.com;branch=z9hG4bK1;received=192.0.2.9;rport=5062"),
    .init(
        text: "SIP/2.0/UDP [2001:db8::9]:5070;branch=z9hG4bKabc;rport", transport: "UDP", host: "2001:db8::9",
        port: 5070,
        branch: "z9hG4bKabc", rport: .requested, rfc3261: true),
    .init(
        text: "SIP/2.0/UDP [2001:db8::9];received=[2001:db8::1]", transport: "UDP", host: "2001:db8::9", port: nil,
        branch: nil, received: "[2001:db8::1]", rfc3261: false),
    .init(
        text: "SIP/2.0/UDP host.example.com;branch=1234", transport: "UDP", host: "host.example.com", port: nil,
        branch: "1234", rfc3261: false),
    .init(
        text: "SIP/2.0/UDP host.example.com;branch=z9hG4bK", transport: "UDP", host: "host.example.com", port: nil,
        branch: "z9hG4bK", rfc3261: false),
    .init(
        text: "SIP/2.0/UDP host.example.com;branch=Z9HG4BKabc", transport: "UDP", host: "host.example.com", port: nil,
        branch: "Z9HG4BKabc", rfc3261: false),
    .init(
        text: "  SIP/2.0/TLS host.example.com : 5061 ; BRANCH = z9hG4bKx ; rport ", transport: "TLS",
        host: "host.example.com",
        port: 5061, branch: "z9hG4bKx", rport: .requested, rfc3261: true,
        written: "SIP/2.0/TLS host.example.com:5061;BRANCH=z9hG4bKx;rport"),
    .init(
        text: "SIP/2.0/SCTP h_1.example.com;maddr=224.2.0.1;ttl=16", transport: "SCTP", host: "h_1.example.com",
        port: nil,
        branch: nil, rfc3261: false),
    .init(
        text: "SIP/3.0/WSS ws.example.com:443;branch=z9hG4bKw", version: "3.0", transport: "WSS",
        host: "ws.example.com",
        port: 443, branch: "z9hG4bKw", rfc3261: true),
    .init(
        text: "SIP/2.0/UDP 192.0.2.1;branch=z9hG4bKq;received=\"quoted\"", transport: "UDP", host: "192.0.2.1",
        port: nil,
        branch: "z9hG4bKq", received: "\"quoted\"", rfc3261: true)
]

struct ViaUnitTests {
    @Test("parse and serialize", arguments: viaCases)
    func table(_ c: ViaCase) throws {
        let via = try Via.parse(c.text)
        #expect(via.protocolName == c.name)
        #expect(via.protocolVersion == c.version)
        #expect(via.transport == c.transport)
        #expect(via.host == c.host)
        #expect(via.port == c.port)
        #expect(via.branch == c.branch)
        #expect(via.received == c.received)
        #expect(RportExpectation(via.rport) == c.rport)
        #expect(via.hasRFC3261Branch == c.rfc3261)
        #expect(via.serialize() == (c.written ?? c.text))
        #expect(try Via.parse(via.serialize()) == via)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "",
            "SIP",
            "SIP/2.0 host.example.com",  // no transport
            "SIP/2.0/ host.example.com",
            "SIP/2.0/UDP",  // no sent-by
            "SIP/2.0/UDP :5060",
            "SIP/2.0/UDP []",
            "SIP/2.0/UDP host.example.com:",  // empty port
            "SIP/2.0/UDP host.example.com:70000",
            "SIP/2.0/UDP host.example.com:123456",
            "SIP/2.0/UDP [2001:db8::1",  // unterminated [
            "SIP/2.0/UDP [local_ip]:5070;branch=z9hG4bK1",  // not an IPv6 address (found by fuzz-sip-session)
            "SIP/2.0/UDP [a;received=x]:5070",  // would serialise as a host and a parameter
            "SIP/2.0/UDP [2001:db8::\u{FFFD}]",
            "SIP/2.0/UDP host.example.com junk",
            "SIP/2.0/UDP host.example.com;",  // empty parameter
            "SIP/2.0/UDP host.example.com;branch=",  // empty value
            "SIP/2.0/UDP host.example.com;branch=\"open",
            "SIP/2.0/UDP host.example.com, SIP/2.0/UDP other"  // one entry per parse
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try Via.parse(text) }
        #expect(error?.status == 400)
    }

    @Test func builtViaSerializes() {
        #expect(
            Via(transport: "UDP", host: "::1", port: 5060, branch: "z9hG4bKa").serialize()
                == "SIP/2.0/UDP [::1]:5060;branch=z9hG4bKa;rport")
        #expect(
            Via(transport: "TCP", host: "192.0.2.1", port: nil, branch: "z9hG4bKb", rport: false).serialize()
                == "SIP/2.0/TCP 192.0.2.1;branch=z9hG4bKb")
    }

    @Test func stampingReceivedAndRport() throws {
        // What a server does on receipt (RFC 3261 §18.2.1, RFC 3581 §4): fill rport in place.
        var via = try Via.parse("SIP/2.0/UDP 10.0.0.1:5060;rport;branch=z9hG4bKx")
        via.setRport(6000)
        via.received = "192.0.2.7"
        #expect(via.serialize() == "SIP/2.0/UDP 10.0.0.1:5060;rport=6000;branch=z9hG4bKx;received=192.0.2.7")
        #expect(RportExpectation(via.rport) == .value(6000))
        via.received = nil
        via.branch = "z9hG4bKy"
        #expect(via.serialize() == "SIP/2.0/UDP 10.0.0.1:5060;rport=6000;branch=z9hG4bKy")
    }
}
