import Testing

@testable import SIP

private func p(_ name: String, _ value: String? = nil) -> SIPParameter { SIPParameter(name, value) }

/// What one From/To/Contact/Route value must parse to, and how it is written back.
struct NameAddressCase: Sendable, CustomStringConvertible {
    var text: String
    var display: String?
    var uri: String
    var params: [SIPParameter] = []
    var bracketed = true
    /// nil: serialises back to `text`.
    var written: String? = nil
    var description: String { text }
}

private let nameAddressCases: [NameAddressCase] = [
    .init(text: "<sip:alice@example.com>", display: nil, uri: "sip:alice@example.com"),
    .init(
        text: "Alice <sip:alice@example.com>;tag=1928301774", display: "Alice", uri: "sip:alice@example.com",
        params: [p("tag", "1928301774")]),
    .init(
        text: "\"Alice\" <sip:alice@example.com>", display: "Alice", uri: "sip:alice@example.com",
        written: "Alice <sip:alice@example.com>"),
    .init(text: "\"Alice Smith\" <sip:alice@example.com>", display: "Alice Smith", uri: "sip:alice@example.com"),
    .init(
        text: "\"Doe, John\" <sip:john@example.com>;tag=x", display: "Doe, John", uri: "sip:john@example.com",
        params: [p("tag", "x")]),
    // quoted-pair: \" and \\ unescape, and are escaped again on the way out.
    .init(
        text: "\"Bob \\\"the\\\" Builder\" <sip:bob@example.com>", display: "Bob \"the\" Builder",
        uri: "sip:bob@example.com"),
    .init(text: "\"back\\\\slash\" <sip:b@example.com>", display: "back\\slash", uri: "sip:b@example.com"),
    .init(
        text: "\"\\a\" <sip:b@example.com>", display: "a", uri: "sip:b@example.com", written: "a <sip:b@example.com>"),
    .init(text: "\"\" <sip:anonymous@anonymous.invalid>", display: "", uri: "sip:anonymous@anonymous.invalid"),
    .init(text: "\"Zoë Ångström\" <sip:z@example.com>", display: "Zoë Ångström", uri: "sip:z@example.com"),
    // display-name = *(token LWS): words joined by one space, written quoted.
    .init(
        text: "Alice Smith <sip:alice@example.com>", display: "Alice Smith", uri: "sip:alice@example.com",
        written: "\"Alice Smith\" <sip:alice@example.com>"),
    .init(
        text: "Alice\t  Smith<sip:alice@example.com>", display: "Alice Smith", uri: "sip:alice@example.com",
        written: "\"Alice Smith\" <sip:alice@example.com>"),
    .init(
        text: "  <sip:alice@example.com>  ", display: nil, uri: "sip:alice@example.com",
        written: "<sip:alice@example.com>"),
    // addr-spec without brackets: `;tag=` belongs to the header, not the URI.
    .init(
        text: "sip:alice@example.com;tag=88", display: nil, uri: "sip:alice@example.com", params: [p("tag", "88")],
        bracketed: false),
    .init(
        text: "sip:alice@example.com ;tag=88", display: nil, uri: "sip:alice@example.com", params: [p("tag", "88")],
        bracketed: false, written: "sip:alice@example.com;tag=88"),
    .init(text: "sip:alice@example.com", display: nil, uri: "sip:alice@example.com", bracketed: false),
    .init(text: "tel:+15551234;tag=z", display: nil, uri: "tel:+15551234", params: [p("tag", "z")], bracketed: false),
    // Inside brackets, parameters are the URI's; after `>` they are the header's.
    .init(
        text: "<sip:alice@example.com;transport=tcp>;tag=88", display: nil, uri: "sip:alice@example.com;transport=tcp",
        params: [p("tag", "88")]),
    .init(text: "<sip:p1.example.com;lr>", display: nil, uri: "sip:p1.example.com;lr"),
    .init(
        text:
            "<sip:alice@192.0.2.4>;q=0.7;expires=3600;+sip.instance=\"<urn:uuid:00000000-0000-1000-8000-000A95A0E128>\"",
        display: nil, uri: "sip:alice@192.0.2.4",
        params: [
            p("q", "0.7"), p("expires", "3600"),
            p("+sip.instance", "\"<urn:uuid:00000000-0000-1000-8000-000A95A0E128>\"")
        ]),
    .init(
        text: "<sip:bob@example.com?Subject=hi>;tag=1", display: nil, uri: "sip:bob@example.com?Subject=hi",
        params: [p("tag", "1")]),
    .init(
        text: "<sip:[2001:db8::1]:5060>;tag=v6", display: nil, uri: "sip:[2001:db8::1]:5060", params: [p("tag", "v6")]),
    .init(
        text: "Gateway <sip:gw@example.com> ; tag = a ; ob", display: "Gateway", uri: "sip:gw@example.com",
        params: [p("tag", "a"), p("ob")], written: "Gateway <sip:gw@example.com>;tag=a;ob")
]

struct NameAddressUnitTests {
    @Test("parse and serialize", arguments: nameAddressCases)
    func table(_ c: NameAddressCase) throws {
        let value = try NameAddress.parse(c.text)
        #expect(value.displayName == c.display)
        #expect(value.uri == (try SIPURI.parse(c.uri)))
        #expect(value.parameters == c.params)
        #expect(value.bracketed == c.bracketed)
        #expect(value.serialize() == (c.written ?? c.text))
        #expect(try NameAddress.parse(value.serialize()) == value)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "",  // nothing
            "\"Alice <sip:alice@example.com>",  // unterminated quote
            "\"Alice\\\" <sip:alice@example.com>",  // the closing quote is escaped
            "<sip:alice@example.com",  // missing >
            "Alice <sip:alice@example.com",
            "\"Alice\" sip:alice@example.com",  // quoted name needs <>
            "sip:alice@example.com?subject=x",  // ? in an unbracketed addr-spec
            "sip:alice@example.com,sip:bob@example.com",  // , in an unbracketed addr-spec
            "*",  // Contact: * is not an address
            "<>",  // empty URI
            "<alice@example.com>",  // no scheme
            "Alice sip:alice@example.com",  // token name without <>
            "<sip:alice@example.com> junk",  // trailing text
            "<sip:alice@example.com>;",  // empty parameter
            "<sip:alice@example.com>;tag=",  // empty parameter value
            "<sip:alice@exa mple.com>"  // bad URI inside brackets
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try NameAddress.parse(text) }
        #expect(error?.status == 400)
    }

    @Test func tagAccessor() throws {
        var value = try NameAddress.parse("Alice <sip:alice@example.com;tag=uri-param>;TAG=abc;q=1")
        #expect(value.tag == "abc")
        value.tag = "def"
        #expect(value.serialize() == "Alice <sip:alice@example.com;tag=uri-param>;TAG=def;q=1")
        value.tag = nil
        #expect(value.serialize() == "Alice <sip:alice@example.com;tag=uri-param>;q=1")
        #expect(value.tag == nil)
        value.tag = "new"
        #expect(value.parameters.last == SIPParameter("tag", "new"))
    }

    @Test(
        "a built address brackets its URI when bare form would be ambiguous",
        arguments: [
            (NameAddress(uri: SIPURI(user: "a", host: "example.com")), "<sip:a@example.com>"),
            (
                NameAddress(displayName: "A B", uri: SIPURI(host: "example.com"), parameters: [p("tag", "1")]),
                "\"A B\" <sip:example.com>;tag=1"
            )
        ])
    func built(_ value: NameAddress, _ written: String) {
        #expect(value.serialize() == written)
    }

    @Test("an unbracketed value whose URI gains parameters or headers gets brackets")
    func unbracketedGainsBrackets() throws {
        var value = try NameAddress.parse("sip:alice@example.com;tag=1")
        value.uri.parameters.append(SIPParameter("transport", "tcp"))
        #expect(value.serialize() == "<sip:alice@example.com;transport=tcp>;tag=1")
        var withHeaders = try NameAddress.parse("sip:alice@example.com")
        withHeaders.uri.headers = "subject=x"
        #expect(withHeaders.serialize() == "<sip:alice@example.com?subject=x>")
        var named = try NameAddress.parse("sip:alice@example.com")
        named.displayName = "Alice"
        #expect(named.serialize() == "Alice <sip:alice@example.com>")
    }
}
