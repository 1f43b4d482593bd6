import Testing

@testable import SIP

/// An expected URI, spelled out field by field.
private func uri(
    _ scheme: String = "sip", user: String? = nil, password: String? = nil, host: String = "",
    port: Int? = nil, params: [SIPParameter] = [], headers: String? = nil, opaque: String? = nil
) -> SIPURI {
    var u = SIPURI(scheme: scheme, user: user, host: host, port: port, parameters: params)
    u.password = password
    u.headers = headers
    u.opaque = opaque
    return u
}

private func p(_ name: String, _ value: String? = nil) -> SIPParameter { SIPParameter(name, value) }

/// Text that serialises back to itself, and what it parses to.
private let canonicalURIs: [(String, SIPURI)] = [
    ("sip:alice@example.com", uri(user: "alice", host: "example.com")),
    ("sips:alice@example.com:5061", uri("sips", user: "alice", host: "example.com", port: 5061)),
    ("sip:alice:secret@192.0.2.1:5070", uri(user: "alice", password: "secret", host: "192.0.2.1", port: 5070)),
    ("sip:alice:@example.com", uri(user: "alice", password: "", host: "example.com")),
    ("sip:example.com", uri(host: "example.com")),
    ("sip:192.0.2.1:0", uri(host: "192.0.2.1", port: 0)),
    ("sip:gw_1.example.com:65535", uri(host: "gw_1.example.com", port: 65535)),
    ("sip:[2001:db8::1]", uri(host: "2001:db8::1")),
    (
        "sip:bob@[2001:db8::1]:5062;transport=tcp",
        uri(user: "bob", host: "2001:db8::1", port: 5062, params: [p("transport", "tcp")])
    ),
    ("sip:[::ffff:192.0.2.1]:5060", uri(host: "::ffff:192.0.2.1", port: 5060)),
    ("sip:proxy.example.com;lr", uri(host: "proxy.example.com", params: [p("lr")])),
    (
        "sip:gw.example.com;transport=TCP;maddr=192.0.2.9;ttl=15;lr",
        uri(host: "gw.example.com", params: [p("transport", "TCP"), p("maddr", "192.0.2.9"), p("ttl", "15"), p("lr")])
    ),
    (
        "sip:+12125551212@gw.example.com;user=phone",
        uri(user: "+12125551212", host: "gw.example.com", params: [p("user", "phone")])
    ),
    (
        "sip:alice@example.com?subject=project%20x&priority=urgent",
        uri(user: "alice", host: "example.com", headers: "subject=project%20x&priority=urgent")
    ),
    (
        "sip:bob@example.com;method=REFER?Replaces=abc%40h%3Bto-tag%3D1",
        uri(user: "bob", host: "example.com", params: [p("method", "REFER")], headers: "Replaces=abc%40h%3Bto-tag%3D1")
    ),
    // Escapes stay as received (RFC 4475 §3.1.1.3).
    ("sip:%61lice@example.com", uri(user: "%61lice", host: "example.com")),
    ("sip:user;par=u%40example.net@example.com", uri(user: "user;par=u%40example.net", host: "example.com")),
    ("sip:alice:p%40ss@example.com", uri(user: "alice", password: "p%40ss", host: "example.com")),
    ("tel:+1-212-555-0101", uri("tel", opaque: "+1-212-555-0101")),
    ("tel:7042;phone-context=example.com", uri("tel", opaque: "7042;phone-context=example.com")),
    ("urn:service:sos", uri("urn", opaque: "service:sos")),
    ("mailto:alice@example.com", uri("mailto", opaque: "alice@example.com")),
    ("im:a.b+c-d@example.com", uri("im", opaque: "a.b+c-d@example.com"))
]

struct SIPURIUnitTests {
    @Test("parse", arguments: canonicalURIs)
    func parse(_ text: String, _ expected: SIPURI) throws {
        #expect(try SIPURI.parse(text) == expected)
    }

    @Test("serialize(parse(x)) == x", arguments: canonicalURIs.map(\.0))
    func roundTrip(_ text: String) throws {
        let parsed = try SIPURI.parse(text)
        #expect(parsed.serialize() == text)
        #expect(parsed.description == text)
        #expect(try SIPURI.parse(parsed.serialize()) == parsed)
    }

    @Test(
        "accepted but written in normal form",
        arguments: [
            ("SIP:Alice@Example.COM", "sip:Alice@Example.COM"),
            ("SipS:a@b", "sips:a@b"),
            ("TEL:+1555", "tel:+1555")
        ])
    func normalised(_ text: String, _ written: String) throws {
        #expect(try SIPURI.parse(text).serialize() == written)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "",  // nothing
            "example.com",  // no scheme
            ":example.com",  // empty scheme
            "1sip:example.com",  // scheme must start with a letter
            "s_p:example.com",  // bad scheme character
            "sip:",  // empty host
            "sip:alice@",  // empty host after userinfo
            "sip:alice@:5060",  // port without host
            "sip:@example.com",  // empty user
            "sip::pw@example.com",  // empty user with a password
            "sip:example.com:70000",  // port out of range
            "sip:example.com:65536",
            "sip:example.com:123456",  // six digits
            "sip:example.com:",  // empty port
            "sip:example.com:50a0",  // junk after port
            "sip:[2001:db8::1",  // unterminated [
            "sip:[2001:db8::1:5060",
            "sip:[]",  // empty IPv6 reference
            "sip:[2001:db8::zz]",  // not hex
            "sip:alice@exa mple.com",  // space
            "sip:alice@example.com ",  // trailing space
            " sip:alice@example.com",  // leading space (no scheme)
            "sip:alice@example.com\t",  // tab
            "sip:<alice@example.com>",  // <
            "sip:alice@example.com>",  // >
            "sip:\"alice\"@example.com",  // quote
            "sip:example.com;",  // empty parameter
            "sip:example.com;;lr",
            "sip:example.com;=x",  // parameter without a name
            "sip:example.com/path",  // junk after host
            "sip:ex$mple.com",
            "tel:"  // empty tel URI
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try SIPURI.parse(text) }
        #expect(error?.status == 400)
    }

    @Test(
        "accessors",
        arguments: [
            // text, isSIP, isIPv6, transport, isLooseRouter, hostPort
            ("sip:a@example.com", true, false, nil, false, "example.com"),
            ("sip:a@example.com:5080;transport=TCP", true, false, "tcp", false, "example.com:5080"),
            ("sips:[2001:db8::1]:5061;lr", true, true, nil, true, "[2001:db8::1]:5061"),
            ("sip:[::1];LR;Transport=udp", true, true, "udp", true, "[::1]"),
            ("sip:p.example.com;lr=on", true, false, nil, true, "p.example.com"),
            ("tel:+15551234", false, false, nil, false, "")
        ] as [(String, Bool, Bool, String?, Bool, String)])
    func accessors(
        _ text: String, _ isSIP: Bool, _ isIPv6: Bool, _ transport: String?, _ loose: Bool, _ hostPort: String
    ) throws {
        let u = try SIPURI.parse(text)
        #expect(u.isSIP == isSIP)
        #expect(u.isIPv6 == isIPv6)
        #expect(u.transport == transport)
        #expect(u.isLooseRouter == loose)
        #expect(u.hostPort == hostPort)
    }

    @Test func builtURIsSerialize() {
        #expect(SIPURI(host: "2001:db8::5", port: 5060).serialize() == "sip:[2001:db8::5]:5060")
        #expect(
            SIPURI(scheme: "sips", user: "gw", host: "example.com", parameters: [p("lr")]).serialize()
                == "sips:gw@example.com;lr")
    }

    @Test func parameterListEditing() {
        var params = [p("transport", "udp"), p("lr"), p("maddr", "192.0.2.1")]
        #expect(params[parameter: "LR"] == .some(nil))
        #expect(params[parameter: "Transport"] == .some("udp"))
        #expect(params[parameter: "ttl"] == .none)
        params.set("TRANSPORT", "tcp")  // keeps position and spelling of the name
        params.set("lr", nil)  // removes
        params.set("ttl", "1")  // appends
        params.set("ob", nil, flag: true)  // appends a flag
        params.set("absent", nil)  // no-op
        #expect(params == [p("transport", "tcp"), p("maddr", "192.0.2.1"), p("ttl", "1"), p("ob")])
    }
}
