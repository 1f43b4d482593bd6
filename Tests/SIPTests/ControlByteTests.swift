import Testing

@testable import SIP

/// RFC 3261 §25.1 leaves no room for control bytes (but HTAB) in a header or start line:
/// a message holding one is malformed (400), wherever it is.
@Suite struct ControlByteTests {
    static func invite(
        callID: String = "c@a", subject: String = "hello", uri: String = "sip:bob@example.com"
    ) -> [UInt8] {
        Array(
            ("INVITE \(uri) SIP/2.0\r\n"
                + "Via: SIP/2.0/UDP a.example.com;branch=z9hG4bK1\r\n"
                + "From: <sip:alice@example.com>;tag=1\r\n"
                + "To: <sip:bob@example.com>\r\n"
                + "Call-ID: \(callID)\r\n"
                + "CSeq: 1 INVITE\r\n"
                + "Subject: \(subject)\r\n"
                + "Max-Forwards: 70\r\n"
                + "Content-Length: 0\r\n\r\n").utf8)
    }

    @Test(
        "a control byte makes the message a 400",
        arguments: [
            ("NUL in Call-ID", invite(callID: "c\u{0}@a")),
            ("NUL at the end of Call-ID", invite(callID: "c@a\u{0}")),
            ("bare CR inside a value", invite(subject: "a\rb")),
            ("BEL in Subject", invite(subject: "ring\u{7}")),
            ("DEL in Subject", invite(subject: "x\u{7F}")),
            ("ESC in Subject", invite(subject: "\u{1B}[31mred")),
            ("NUL in the request line", invite(uri: "sip:bob\u{0}@example.com")),
            (
                "NUL in a continuation line",
                Array(
                    "INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP a.example.com;branch=z9hG4bK1\r\nFrom: <sip:alice@example.com>;tag=1\r\nTo: <sip:bob@example.com>\r\nCall-ID: c@a\r\nCSeq: 1 INVITE\r\nSubject: a\r\n b\u{0}\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
                        .utf8)
            ),
            (
                "NUL in a reason phrase",
                Array(
                    "SIP/2.0 200 O\u{0}K\r\nVia: SIP/2.0/UDP a.example.com;branch=z9hG4bK1\r\nFrom: <sip:alice@example.com>;tag=1\r\nTo: <sip:bob@example.com>;tag=2\r\nCall-ID: c@a\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n"
                        .utf8)
            )
        ])
    func refused(_ name: String, _ bytes: [UInt8]) {
        let error = #expect(throws: SIPParseError.self, "\(name)") { try SIPMessage.parse(bytes) }
        #expect(error?.status == 400, "\(name): \(String(describing: error))")
    }

    @Test(
        "what the grammar allows still parses",
        arguments: [
            ("HTAB inside a value", invite(subject: "a\tb")),
            ("UTF-8 in a value", invite(subject: "caf\u{e9} \u{1F600}")),
            ("escaped NUL in the Request-URI", invite(uri: "sip:bob%00@example.com"))
        ])
    func accepted(_ name: String, _ bytes: [UInt8]) throws {
        let m = try SIPMessage.parse(bytes)
        #expect(m.isRequest, "\(name)")
    }

    @Test func aRefusedMessageStillCarriesWhatA400Needs() {
        let error = #expect(throws: SIPParseError.self) { try SIPMessage.parse(Self.invite(subject: "x\u{0}")) }
        #expect(error?.partial?.callID == "c@a")
        // Even a NUL in Call-ID leaves enough to answer: the bytes around it.
        let nul = #expect(throws: SIPParseError.self) { try SIPMessage.parse(Self.invite(callID: "c\u{0}@a")) }
        #expect(nul?.partial?.callID == "c@a")
        #expect(nul?.partial?.topVia?.branch == "z9hG4bK1")
    }
}

extension ControlByteTests {
    @Test(
        "quoted-pair may escape a control byte in a quoted string, nowhere else",
        arguments: [
            ("\"a\\\u{0}b\" <sip:x@y>", nil),
            ("\"BEL:\\\u{7} DEL:\\\u{7F}\" <sip:x@y>", nil),
            ("\"a\u{0}b\" <sip:x@y>", UInt8(0)),
            ("a\\\u{0}b <sip:x@y>", UInt8(0)),
            ("\"a\\\rb\" <sip:x@y>", UInt8(0x0D)),
            ("\"a\\\\\" \u{1}", UInt8(1))
        ] as [(String, UInt8?)])
    func quotedPairs(_ value: String, _ expected: UInt8?) {
        #expect(SIPScanner.forbiddenControl(in: Array(value.utf8)[...]) == expected)
    }
}

extension ControlByteTests {
    /// Found by fuzz-sip-session with RFC 4475 intmeth.sip: the 501 copied To with our tag
    /// added, and the display name's escaped BEL, NUL and DEL went out raw.
    @Test func escapedControlBytesInADisplayNameStayEscaped() throws {
        let text = "\"BEL:\\\u{7} NUL:\\\u{0} DEL:\\\u{7F}\" <sip:x@example.com>"
        var value = try NameAddress.parse(text)
        #expect(value.displayName == "BEL:\u{7} NUL:\u{0} DEL:\u{7F}")
        value.tag = "t1"
        let written = value.serialize()
        #expect(written == text + ";tag=t1")
        #expect(SIPScanner.forbiddenControl(in: Array(written.utf8)[...]) == nil)
        #expect(try NameAddress.parse(written).displayName == value.displayName)
    }

    @Test func aQuotedStringNeverCarriesCROrLF() {
        #expect(SIPScanner.escapeQuoted("a\r\nb\"c") == "a  b\\\"c")
        #expect(SIPScanner.escapeQuoted("tab\tok") == "tab\tok")
    }
}
