import Testing

@testable import SIP

struct CSeqUnitTests {
    @Test(
        "parse",
        arguments: [
            ("4711 INVITE", CSeq(4711, "INVITE"), "4711 INVITE"),
            ("  1\tACK  ", CSeq(1, "ACK"), "1 ACK"),
            ("0 BYE", CSeq(0, "BYE"), "0 BYE"),
            ("00042 OPTIONS", CSeq(42, "OPTIONS"), "42 OPTIONS"),
            ("4294967295 UPDATE", CSeq(4_294_967_295, "UPDATE"), "4294967295 UPDATE"),
            ("7 NEWMETHOD-x.1", CSeq(7, "NEWMETHOD-x.1"), "7 NEWMETHOD-x.1")
        ])
    func parse(_ text: String, _ expected: CSeq, _ written: String) throws {
        let cseq = try CSeq.parse(text)
        #expect(cseq == expected)
        #expect(cseq.serialize() == written)
        #expect(cseq.description == written)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "", "INVITE", "1", "1 ", "-1 INVITE", "+1 INVITE", "0x1 INVITE", "4294967296 INVITE",
            "99999999999999999999 INVITE", "1 INVITE extra", "1 INV/ITE", "1INVITE", "1.5 INVITE"
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try CSeq.parse(text) }
        #expect(error?.status == 400)
    }
}

struct RAckUnitTests {
    @Test(
        "parse",
        arguments: [
            ("776656 1 INVITE", RAck(rseq: 776656, cseq: 1, method: "INVITE"), "776656 1 INVITE"),
            (" 1\t2   INVITE ", RAck(rseq: 1, cseq: 2, method: "INVITE"), "1 2 INVITE"),
            (
                "4294967295 4294967295 UPDATE", RAck(rseq: 4_294_967_295, cseq: 4_294_967_295, method: "UPDATE"),
                "4294967295 4294967295 UPDATE"
            )
        ])
    func parse(_ text: String, _ expected: RAck, _ written: String) throws {
        let rack = try RAck.parse(text)
        #expect(rack == expected)
        #expect(rack.serialize() == written)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "", "1", "1 2", "1 2 INVITE x", "a 1 INVITE", "1 b INVITE", "1 -2 INVITE", "+1 2 INVITE", "1 +2 INVITE",
            "4294967296 1 INVITE", "1 2 IN;VITE", "1,2,INVITE"
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try RAck.parse(text) }
        #expect(error?.status == 400)
    }
}

struct ReasonUnitTests {
    @Test(
        "parse",
        arguments: [
            (
                "Q.850;cause=16;text=\"Normal call clearing\"",
                Reason(protocolName: "Q.850", cause: 16, text: "Normal call clearing")
            ),
            (
                "SIP;cause=487;text=\"Request Terminated\"",
                Reason(protocolName: "SIP", cause: 487, text: "Request Terminated")
            ),
            ("Q.850 ; cause = 17", Reason(protocolName: "Q.850", cause: 17)),
            (
                "Q.850;CAUSE=18;TEXT=\"No user responding\"",
                Reason(protocolName: "Q.850", cause: 18, text: "No user responding")
            ),
            ("SIP;text=\"say \\\"hi\\\"\"", Reason(protocolName: "SIP", cause: nil, text: "say \"hi\"")),
            ("Q.850;cause=31;text=Busy", Reason(protocolName: "Q.850", cause: 31, text: "Busy")),
            ("Q.850;cause=0", Reason(protocolName: "Q.850", cause: 0)),
            ("Q.850;cause=65535", Reason(protocolName: "Q.850", cause: 65535)),
            ("Q.850;text=\"a;cause=1\";cause=21", Reason(protocolName: "Q.850", cause: 21, text: "a;cause=1")),
            ("X-Carrier;cause=99;foo=bar", Reason(protocolName: "X-Carrier", cause: 99)),
            ("preemption", Reason(protocolName: "preemption", cause: nil))
        ])
    func parse(_ text: String, _ expected: Reason) throws {
        let reason = try Reason.parse(text)
        #expect(reason == expected)
        #expect(try Reason.parse(reason.serialize()) == reason)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "", ";cause=16", "Q.850;cause", "Q.850;cause=", "Q.850;cause=abc", "Q.850;cause=-1", "Q.850;cause=+16",
            "Q.850;cause=65536", "Q.850;cause=16 junk", "Q.850;text=\"unterminated", "Q.850 SIP"
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try Reason.parse(text) }
        #expect(error?.status == 400)
    }

    @Test(
        "serialize",
        arguments: [
            (Reason(protocolName: "Q.850", cause: 16, text: "Normal"), "Q.850;cause=16;text=\"Normal\""),
            (
                Reason(protocolName: "SIP", cause: 200, text: "Call completed elsewhere"),
                "SIP;cause=200;text=\"Call completed elsewhere\""
            ),
            (Reason(protocolName: "SIP", cause: nil, text: "a \"b\" \\c"), "SIP;text=\"a \\\"b\\\" \\\\c\""),
            (Reason(protocolName: "Q.850", cause: 41), "Q.850;cause=41")
        ])
    func serialize(_ reason: Reason, _ written: String) {
        #expect(reason.serialize() == written)
    }
}
