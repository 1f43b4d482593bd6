import Testing

@testable import SIP

/// Parses a message written with `\n` line ends (turned into CRLF here).
private func message(_ lines: String...) throws -> SIPMessage {
    let text = lines.joined(separator: "\r\n") + "\r\n\r\n"
    return try SIPMessage.parse(Array(text.utf8))
}

struct SIPHeaderNameUnitTests {
    @Test(
        "compact forms expand",
        arguments: [
            ("v", "Via"), ("f", "From"), ("t", "To"), ("i", "Call-ID"), ("m", "Contact"), ("l", "Content-Length"),
            ("c", "Content-Type"), ("k", "Supported"), ("s", "Subject"), ("x", "Session-Expires"),
            ("e", "Content-Encoding"),
            ("o", "Event"), ("r", "Refer-To"), ("V", "Via"), ("I", "Call-ID"), ("L", "Content-Length")
        ])
    func compact(_ short: String, _ long: String) {
        let name = SIPHeaderName(short)
        #expect(name.canonical == long)
        #expect(name.key == long.lowercased())
        #expect(name == SIPHeaderName(long))
        #expect(name.description == long)
        #expect(Set([SIPHeaderName(long)]).contains(name))
    }

    @Test(
        "known names in any case compare equal and are written canonically",
        arguments: [
            ("CALL-ID", SIPHeaderName.callID), ("call-id", .callID), ("Call-Id", .callID), ("cseq", .cseq),
            ("CSEQ", .cseq),
            ("www-authenticate", .wwwAuthenticate), ("rack", .rack), ("RSEQ", .rseq), ("min-se", .minSE),
            ("max-FORWARDS", .maxForwards), ("Via", .via), ("record-route", .recordRoute),
            ("Session-expires", .sessionExpires)
        ])
    func knownNames(_ raw: String, _ known: SIPHeaderName) {
        let name = SIPHeaderName(raw)
        #expect(name == known)
        #expect(name.canonical == known.canonical)
        #expect(name.hashValue == known.hashValue)
    }

    @Test(
        "unknown names compare case-insensitively and keep their spelling",
        arguments: [
            ("X-Custom", "x-custom"), ("P-Asserted-Identity", "P-ASSERTED-IDENTITY"), ("Warning", "warning"),
            ("a", "A"), ("Accept-Encoding", "accept-encoding")
        ])
    func unknownNames(_ a: String, _ b: String) {
        let x = SIPHeaderName(a), y = SIPHeaderName(b)
        #expect(x == y)
        #expect(x.hashValue == y.hashValue)
        #expect(x.canonical == a)
        #expect(y.canonical == b)
        #expect(x != SIPHeaderName(a + "-Other"))
    }

    @Test func differentNamesDiffer() {
        #expect(SIPHeaderName("To") != SIPHeaderName("From"))
        #expect(SIPHeaderName("t") != SIPHeaderName("f"))
        #expect(SIPHeaderName("X-To") != SIPHeaderName.to)
        #expect(SIPHeaderName.to != SIPHeaderName("X-To"))
        #expect(Set(["v", "Via", "VIA", "f", "From"].map { SIPHeaderName($0) }).count == 2)
    }
}

struct SIPMessageAccessorUnitTests {
    private func sample() throws -> SIPMessage {
        try message(
            "INVITE sip:bob@example.com SIP/2.0",
            "Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1, SIP/2.0/UDP b.example.com;branch=z9hG4bK2",
            "Max-Forwards: 70",
            "v: SIP/2.0/TCP c.example.com;branch=z9hG4bK3",
            "f: \"Doe, John\" <sip:john@example.com>;tag=1",
            "t: <sip:bob@example.com>",
            "i: abc@host",
            "CSeq: 1 INVITE",
            "m: <sip:john@192.0.2.1>;expires=60, \"Desk, 2\" <sip:john@192.0.2.2>",
            "Supported: timer, replaces",
            "k: 100rel",
            "Require: timer",
            "Proxy-Require: foo",
            "Reason: SIP;cause=480, Q.850;cause=19;text=\"No answer, sorry\"",
            "Retry-After: 120 (I'm in a meeting);duration=3600",
            "Record-Route: <sip:p1.example.com;lr>, <sip:p2.example.com;lr>",
            "Record-Route: <sip:p3.example.com;lr>",
            "Expires: 300",
            "RSeq: 9",
            "RAck: 8 1 INVITE",
            "Content-Length: 0")
    }

    @Test func typedAccessors() throws {
        let m = try sample()
        #expect(m.isRequest)
        #expect(m.method == "INVITE")
        #expect(m.requestURI == (try SIPURI.parse("sip:bob@example.com")))
        #expect(m.statusCode == nil)
        #expect(m.reasonPhrase == nil)
        #expect(m.vias.map(\.host) == ["a.example.com", "b.example.com", "c.example.com"])
        #expect(m.topVia?.branch == "z9hG4bK1")
        #expect(m.from?.displayName == "Doe, John")
        #expect(m.from?.tag == "1")
        #expect(m.to?.tag == nil)
        #expect(m.callID == "abc@host")
        #expect(m.cseq == CSeq(1, "INVITE"))
        #expect(m.maxForwards == 70)
        #expect(m.contacts.map(\.uri.host) == ["192.0.2.1", "192.0.2.2"])
        #expect(m.contacts.last?.displayName == "Desk, 2")
        #expect(m.recordRoutes.map(\.uri.host) == ["p1.example.com", "p2.example.com", "p3.example.com"])
        #expect(m.supported == ["timer", "replaces", "100rel"])
        #expect(m.require == ["timer"])
        #expect(m.proxyRequire == ["foo"])
        #expect(
            m.reasons == [
                Reason(protocolName: "SIP", cause: 480),
                Reason(protocolName: "Q.850", cause: 19, text: "No answer, sorry")
            ])
        #expect(m.q850Cause == 19)
        #expect(m.retryAfter == 120)
        #expect(m.expires == 300)
        #expect(m.rseq == 9)
        #expect(m.rack == RAck(rseq: 8, cseq: 1, method: "INVITE"))
        #expect(m[.callID] == "abc@host")
        #expect(m["call-id"] == "abc@host")
        #expect(m[.contentType] == nil)
    }

    @Test("values() splits comma lists across lines, outside quotes and brackets")
    func values() throws {
        let m = try sample()
        #expect(m.values(.via).count == 3)
        #expect(m.values(.contact) == ["<sip:john@192.0.2.1>;expires=60", "\"Desk, 2\" <sip:john@192.0.2.2>"])
        #expect(m.values(.reason) == ["SIP;cause=480", "Q.850;cause=19;text=\"No answer, sorry\""])
        #expect(m.values("X-Absent") == [])
    }

    @Test(
        "supports() reads Supported and Require, case-insensitively",
        arguments: [
            ("timer", true), ("TIMER", true), ("replaces", true), ("100rel", true), ("100REL", true),
            ("foo", false), ("path", false), ("", false)
        ])
    func supports(_ tag: String, _ expected: Bool) throws {
        #expect(try sample().supports(tag) == expected)
    }

    @Test(
        "q850Cause is the first Q.850 Reason",
        arguments: [
            (["Reason: Q.850;cause=16"], 16 as Int?),
            (["Reason: SIP;cause=486"], nil),
            (["Reason: SIP;cause=486", "Reason: q.850;cause=17"], 17),
            (["Reason: Q.850;cause=34, Q.850;cause=41"], 34),
            (["Reason: Q.850;text=\"no cause\""], nil),
            (["Reason: Q.850;cause=junk, Q.850;cause=27"], 27),  // an unreadable value reads as absent
            ([], nil)
        ])
    func q850(_ extra: [String], _ cause: Int?) throws {
        var m = SIPMessage.request("BYE", SIPURI(host: "example.com"))
        for line in extra {
            let parts = line.split(separator: ":", maxSplits: 1)
            m.addHeader(SIPHeaderName(String(parts[0])), String(parts[1]).trimmingSIPWhitespace())
        }
        #expect(m.q850Cause == cause)
    }

    @Test(
        "Retry-After delta-seconds without comment or parameters",
        arguments: [
            ("120", 120 as Int?), ("18000;duration=3600", 18000), ("120 (I'm in a meeting)", 120),
            ("0", 0), ("(comment only)", nil), ("abc", nil)
        ])
    func retryAfter(_ value: String, _ expected: Int?) {
        var m = SIPMessage(startLine: .response(status: 503, reason: "Service Unavailable"))
        m[.retryAfter] = value
        #expect(m.retryAfter == expected)
    }

    @Test func setHeaderReplacesEveryOccurrenceAtTheFirstPosition() throws {
        var m = try sample()
        let before = m.headers.map(\.name)
        m.setHeader(.via, "SIP/2.0/UDP only.example.com;branch=z9hG4bKonly")
        #expect(m.headers.filter { $0.name == .via }.count == 1)
        #expect(m.headers[0] == SIPHeader(.via, "SIP/2.0/UDP only.example.com;branch=z9hG4bKonly"))
        // Every other header keeps its relative order.
        #expect(
            m.headers.map(\.name) == before.enumerated().filter { $0.offset == 0 || $0.element != .via }.map(\.element))
        m.setHeader("X-New", "1")
        #expect(m.headers.last == SIPHeader("X-New", "1"))
    }

    @Test func prependAddRemoveAndSubscriptSet() throws {
        var m = try sample()
        let count = m.headers.count
        m.prependHeader(.via, "SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp")
        #expect(m.headers.count == count + 1)
        #expect(m.topVia?.host == "proxy.example.com")
        #expect(m.vias.count == 4)
        m.addHeader(.route, "<sip:r.example.com;lr>")
        #expect(m.headers.last?.name == .route)
        m[.recordRoute] = nil
        #expect(m.recordRoutes.isEmpty)
        #expect(m[.recordRoute] == nil)
        m[.supported] = "path"  // replaces the Supported line and the compact k: line
        #expect(m.supported == ["path"])
        m.removeHeaders(.via)
        #expect(m.vias.isEmpty)
        #expect(m.topVia == nil)
    }

    @Test(
        "serialize writes the real Content-Length and canonical names",
        arguments: [
            ([SIPHeader(.contentLength, "999")], "hello"),
            ([SIPHeader("l", "5"), SIPHeader(.contentLength, "0")], "hello"),
            ([SIPHeader(.contentLength, "12")], ""),
            ([], "v=0\r\n\r\nstill body\r\n")
        ])
    func serializeContentLength(_ stored: [SIPHeader], _ body: String) throws {
        var m = SIPMessage.request("MESSAGE", SIPURI(user: "bob", host: "example.com"))
        m.addHeader("v", "SIP/2.0/TCP a.example.com;branch=z9hG4bK1")
        m.addHeader("f", "<sip:alice@example.com>;tag=1")
        m.addHeader("t", "<sip:bob@example.com>")
        m.addHeader("i", "id@a")
        m.addHeader(.cseq, "2 MESSAGE")
        m.headers.append(contentsOf: stored)
        m.body = Array(body.utf8)
        let text = String(decoding: m.serialize(), as: UTF8.self)
        let expected =
            "MESSAGE sip:bob@example.com SIP/2.0\r\n"
            + "Via: SIP/2.0/TCP a.example.com;branch=z9hG4bK1\r\n"
            + "From: <sip:alice@example.com>;tag=1\r\n"
            + "To: <sip:bob@example.com>\r\n"
            + "Call-ID: id@a\r\n"
            + "CSeq: 2 MESSAGE\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        #expect(text == expected)
        #expect(m.size == expected.utf8.count)
        #expect(m.description == expected)
        // A stream peer frames it exactly and reads the same body.
        var framer = SIPStreamFramer()
        let framed = try framer.append(m.serialize())
        #expect(framed == [m.serialize()])
        #expect(try SIPMessage.parse(framed[0], framing: .stream).body == Array(body.utf8))
    }

    @Test(
        "status line",
        arguments: [
            (486, "Busy Here", "SIP/2.0 486 Busy Here\r\n"),
            (200, "", "SIP/2.0 200 \r\n"),
            (183, "Session Progress", "SIP/2.0 183 Session Progress\r\n")
        ])
    func statusLine(_ status: Int, _ reason: String, _ line: String) {
        let m = SIPMessage(
            startLine: .response(status: status, reason: reason), headers: [SIPHeader(.cseq, "1 INVITE")])
        #expect(String(decoding: m.serialize(), as: UTF8.self).hasPrefix(line))
        #expect(m.statusCode == status)
        #expect(m.reasonPhrase == reason)
        #expect(m.method == "INVITE")
        #expect(!m.isRequest)
        #expect(m.requestURI == nil)
    }

    @Test(
        "numbers are 1*DIGIT: a sign or a missing space makes the message a 400",
        arguments: [
            ("RSeq: +5", "RSeq"), ("RAck: +1 1 INVITE", "RAck"), ("CSeq: 1INVITE", "CSeq"),
            ("Content-Length: +0", "Content-Length"),
            ("Max-Forwards: +70", "Max-Forwards"), ("Expires: -1", "Expires")
        ])
    func signedNumbers(_ line: String, _ header: String) {
        var lines = [
            "INVITE sip:bob@example.com SIP/2.0",
            "Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1",
            "From: <sip:alice@example.com>;tag=1",
            "To: <sip:bob@example.com>",
            "Call-ID: n@a"
        ]
        if !line.hasPrefix("CSeq") { lines.append("CSeq: 1 INVITE") }
        lines.append(line)
        let text = lines.joined(separator: "\r\n") + "\r\n\r\n"
        let error = #expect(throws: SIPParseError.self) { try SIPMessage.parse(Array(text.utf8)) }
        #expect(error?.status == 400)
        #expect(error?.header == header)
    }

    @Test func contactStarIsNotAnAddressButPassesValidation() throws {
        let m = try message(
            "REGISTER sip:example.com SIP/2.0",
            "Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1",
            "From: <sip:alice@example.com>;tag=1",
            "To: <sip:alice@example.com>",
            "Call-ID: r@a",
            "CSeq: 3 REGISTER",
            "Contact: *",
            "Expires: 0")
        #expect(m.contacts.isEmpty)
        #expect(m[.contact] == "*")
    }
}
