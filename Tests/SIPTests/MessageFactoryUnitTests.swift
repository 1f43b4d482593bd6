import SDP
import Testing

@testable import SIP

private func parse(_ lines: [String], body: String = "") throws -> SIPMessage {
    let text = lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    return try SIPMessage.parse(Array(text.utf8))
}

private func invite(to: String = "To: Bob <sip:bob@biloxi.example.com>") throws -> SIPMessage {
    try parse(
        [
            "INVITE sip:bob@biloxi.example.com SIP/2.0",
            "Via: SIP/2.0/UDP p2.biloxi.example.com;branch=z9hG4bK2;received=192.0.2.2",
            "Max-Forwards: 68",
            "Via: SIP/2.0/UDP p1.atlanta.example.com;branch=z9hG4bK1, SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK0;rport=5060",
            "f: Alice <sip:alice@atlanta.example.com>;tag=1928301774",
            to,
            "Call-ID: a84b4c76e66710@pc33.atlanta.example.com",
            "CSeq: 314159 INVITE",
            "Contact: <sip:alice@pc33.atlanta.example.com>",
            "Record-Route: <sip:p2.biloxi.example.com;lr>",
            "Supported: 100rel",
            "Content-Type: application/sdp"
        ], body: sdpText)
}

private let sdpText =
    "v=0\r\no=alice 2890844526 2890844526 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\nm=audio 49170 RTP/AVP 0 8\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n"

struct ResponseFactoryUnitTests {
    @Test(
        "response(to:) copies Via (all, in order), From, To, Call-ID, CSeq, for 101-299 Record-Route (§12.1.1), and nothing else",
        arguments: [
            // status, toTag, expected To
            (100, "b1" as String?, "Bob <sip:bob@biloxi.example.com>"),
            (180, "b1", "Bob <sip:bob@biloxi.example.com>;tag=b1"),
            (200, "b1", "Bob <sip:bob@biloxi.example.com>;tag=b1"),
            (486, "b1", "Bob <sip:bob@biloxi.example.com>;tag=b1"),
            (200, nil, "Bob <sip:bob@biloxi.example.com>")
        ])
    func copiedHeaders(_ status: Int, _ toTag: String?, _ to: String) throws {
        let request = try invite()
        let r = SIPMessage.response(to: request, status: status, toTag: toTag)
        #expect(r.statusCode == status)
        #expect(r.reasonPhrase == SIPStatus.reasonPhrase(status))
        let recordRoute: [SIPHeaderName] = (101...299).contains(status) ? [.recordRoute] : []
        #expect(r.headers.map(\.name) == [.via, .via, .from, .to, .callID, .cseq] + recordRoute)
        #expect(r.headers.filter { $0.name == .via } == request.headers.filter { $0.name == .via })
        if !recordRoute.isEmpty { #expect(r[.recordRoute] == "<sip:p2.biloxi.example.com;lr>") }
        #expect(r.vias.map(\.host) == ["p2.biloxi.example.com", "p1.atlanta.example.com", "pc33.atlanta.example.com"])
        #expect(r[.from] == "Alice <sip:alice@atlanta.example.com>;tag=1928301774")
        #expect(r[.to] == to)
        #expect(r.callID == request.callID)
        #expect(r.cseq == CSeq(314159, "INVITE"))
        #expect(r.method == "INVITE")
        #expect(r.body.isEmpty)
    }

    @Test("an existing To tag is kept", arguments: [100, 180, 200, 481])
    func existingTag(_ status: Int) throws {
        let request = try invite(to: "To: Bob <sip:bob@biloxi.example.com>;tag=existing")
        let r = SIPMessage.response(to: request, status: status, toTag: "new")
        #expect(r.to?.tag == "existing")
        #expect(r[.to] == "Bob <sip:bob@biloxi.example.com>;tag=existing")
    }

    @Test(
        "reason phrase",
        arguments: [
            (487, nil as String?, "Request Terminated"),
            (500, "CSeq Out Of Order", "CSeq Out Of Order"),
            (299, nil, "Unknown"),
            (416, nil, "Unsupported URI Scheme")
        ])
    func reason(_ status: Int, _ given: String?, _ phrase: String) throws {
        let r = SIPMessage.response(to: try invite(), status: status, reason: given)
        #expect(r.reasonPhrase == phrase)
        #expect(String(decoding: r.serialize(), as: UTF8.self).hasPrefix("SIP/2.0 \(status) \(phrase)\r\n"))
    }

    @Test func responseRoundTripsThroughTheParser() throws {
        let r = SIPMessage.response(to: try invite(), status: 180, toTag: "b1")
        let back = try SIPMessage.parse(r.serialize())
        #expect(back.to?.tag == "b1")
        #expect(back.vias == r.vias)
        #expect(back.cseq == r.cseq)
    }
}

struct SDPBodyUnitTests {
    @Test func setSDPThenReadItBack() throws {
        let sdp = try SessionDescription.parse(sdpText)
        var m = SIPMessage.response(to: try invite(), status: 200, toTag: "b1")
        #expect(!m.hasSDP)
        #expect(m.sdp == nil)
        m.setSDP(sdp)
        #expect(m.hasSDP)
        #expect(m[.contentType] == "application/sdp")
        #expect(m.body == Array(sdp.serialize().utf8))
        #expect(m.sdp == sdp)
        m.setSDP(sdp)
        #expect(m.headers.filter { $0.name == .contentType }.count == 1)
        m.setSDP(nil)
        #expect(m.body.isEmpty)
        #expect(m[.contentType] == nil)
        #expect(!m.hasSDP)
        #expect(m.sdp == nil)
    }

    @Test(
        "hasSDP needs a body and an application/sdp Content-Type",
        arguments: [
            ("application/sdp", sdpText, true, true),
            ("Application/SDP", sdpText, true, true),
            ("application/sdp; charset=utf-8", sdpText, true, true),
            ("text/plain", sdpText, false, false),
            ("multipart/mixed;boundary=x", sdpText, false, false),
            (nil, sdpText, false, false),
            ("application/sdp", "", false, false),
            ("application/sdp", "this is not sdp", true, false)
        ] as [(String?, String, Bool, Bool)])
    func hasSDP(_ type: String?, _ body: String, _ has: Bool, _ parses: Bool) {
        var m = SIPMessage.request("INVITE", SIPURI(host: "example.com"))
        m[.contentType] = type
        m.body = Array(body.utf8)
        #expect(m.hasSDP == has)
        #expect((m.sdp != nil) == parses)
    }

    @Test func parsedInviteCarriesItsSDP() throws {
        let m = try invite()
        #expect(m.hasSDP)
        #expect(m.sdp?.media.count == 1)
    }
}

struct SIPIdentifiersUnitTests {
    @Test func branchesHaveTheMagicCookieAndDoNotRepeat() {
        let branches = (0..<1000).map { _ in SIPIdentifiers.branch() }
        #expect(Set(branches).count == 1000)
        #expect(branches.allSatisfy { $0.hasPrefix("z9hG4bK") && $0.count > 7 })
        #expect(branches.allSatisfy { SIPScanner.isToken($0) })
        #expect(branches.allSatisfy { Via(transport: "UDP", host: "h", port: nil, branch: $0).hasRFC3261Branch })
    }

    @Test func tagsAndCallIDs() {
        let tags = (0..<1000).map { _ in SIPIdentifiers.tag() }
        #expect(Set(tags).count == 1000)
        #expect(tags.allSatisfy { $0.count == 12 && SIPScanner.isToken($0) })
        #expect(SIPIdentifiers.token(4).count == 8)
        let callID = SIPIdentifiers.callID(host: "192.0.2.1")
        #expect(callID.hasSuffix("@192.0.2.1"))
        #expect(callID.count == 24 + 1 + 9)
        #expect(SIPIdentifiers.callID(host: "h") != SIPIdentifiers.callID(host: "h"))
    }
}
