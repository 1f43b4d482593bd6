import SDP
import Testing

@testable import SIP

/// SDP beside other body parts (RFC 5621 `multipart/mixed`, as SIPREC sends it, RFC 7866
/// §9.1): found in whatever body carries it, sent multipart only when asked, the Contact's
/// feature tags on every Contact of the session. Plain calls keep their plain SDP bodies.
@Suite struct MultipartSDPTests {
    typealias M = InviteSessionMachine

    static let sdpText = Wire.sdpBody.replacingOccurrences(of: "\n", with: "\r\n")
    static let metadataPart = MultipartBody.Part(
        headers: [("Content-Type", "application/rs-metadata+xml"), ("Content-Disposition", "recording-session")],
        body: Array("<recording xmlns='urn:ietf:params:xml:ns:recording:1'/>".utf8))

    static func multipart(_ boundary: String, sdpFirst: Bool = true, sdpType: String = "application/sdp") -> String {
        let sdp = "--\(boundary)\r\nContent-Type: \(sdpType)\r\n\r\n\(sdpText)\r\n"
        let xml = "--\(boundary)\r\nContent-Type: application/rs-metadata+xml\r\n\r\n<recording/>\r\n"
        return (sdpFirst ? sdp + xml : xml + sdp) + "--\(boundary)--\r\n"
    }

    /// A body and its Content-Type in; whether SDP is found (its origin's user: "carrier").
    static let bodies: [(name: String, contentType: String, body: String, found: Bool)] = [
        ("plain SDP", "application/sdp", sdpText, true),
        ("plain SDP, type with a parameter and capitals", "Application/SDP; charset=utf-8", sdpText, true),
        ("multipart, SDP first", "multipart/mixed;boundary=b1", multipart("b1"), true),
        ("multipart, SDP second", "multipart/mixed;boundary=b1", multipart("b1", sdpFirst: false), true),
        ("multipart, quoted boundary and spaces", "multipart/mixed; boundary=\"a b:c\"", multipart("a b:c"), true),
        (
            "multipart, SDP part type in capitals", "multipart/mixed;boundary=x",
            multipart("x", sdpType: "APPLICATION/SDP"), true
        ),
        ("multipart without an SDP part", "multipart/mixed;boundary=x", multipart("x", sdpType: "text/plain"), false),
        ("multipart, other boundary named", "multipart/mixed;boundary=zz", multipart("b1"), false),
        ("multipart, no boundary", "multipart/mixed", multipart("b1"), false),
        ("multipart, not closed", "multipart/mixed;boundary=b1", String(multipart("b1").dropLast(8)), false),
        ("metadata alone", "application/rs-metadata+xml", "<recording/>", false),
        ("SDP in a text/plain body", "text/plain", sdpText, false)
    ]

    @Test(arguments: bodies.indices)
    func theSDPIsFoundWhereverItIs(_ index: Int) {
        let row = Self.bodies[index]
        var m = Wire.response(200, "OK")
        m.body = Array(row.body.utf8)
        m.setHeader(.contentType, row.contentType)
        #expect(m.hasSDP == row.found, "\(row.name)")
        #expect((m.sdp?.origin.username == "carrier") == row.found, "\(row.name)")
    }

    /// The INVITE's body parts: its Content-Type's media type, and each part's Content-Type.
    static func parts(_ m: SIPMessage) -> (type: String, parts: [MultipartBody.Part]) {
        let type = m.contentType ?? ""
        return (MultipartBody.mediaType(of: type), MultipartBody.parse(m.body, contentType: type)?.parts ?? [])
    }

    static func sent(_ actions: [M.Action]) -> SIPMessage? {
        for case let .send(m, _, _) in actions { return m }
        return nil
    }

    @Test func anInviteWithPartsIsMultipartWithTheSDPFirst() throws {
        var configuration = Bench.configuration()
        configuration.contactParameters = [SIPParameter("+sip.src")]
        var machine = M(
            outgoing: Wire.ourInvite, sdp: Wire.ourSDP, parts: [Self.metadataPart], credentials: nil,
            configuration: configuration, randomness: Bench.fixed)
        let invite = try #require(Self.sent(machine.handle(.start, now: 0)))
        let (type, parts) = Self.parts(invite)
        #expect(type == "multipart/mixed")
        #expect(parts.count == 2)
        #expect(parts.first?.contentType == "application/sdp")
        #expect(parts.first.flatMap { try? SessionDescription.parse($0.body) } == Wire.ourSDP)
        #expect(parts.last == Self.metadataPart)
        #expect(invite.sdp == Wire.ourSDP)

        // The answer comes plain; the dialog's re-INVITE carries new parts and the feature tag.
        let connected = machine.handle(.response(Wire.response(200, "OK", sdp: true), to: .invite), now: 1)
        #expect(connected.map(Bench.line) == ["ACK 1 to=c1 kept", "report connected"])
        #expect(machine.remoteSDP == Wire.sdp)
        var update = Self.metadataPart
        update.body = Array("<recording xmlns='urn:ietf:params:xml:ns:recording:1'><datamode/></recording>".utf8)
        let reinvite = try #require(
            Self.sent(machine.handle(.sendOffer(.reInvite, sdp: Wire.ourSDP, headers: [], parts: [update]), now: 2)))
        #expect(Self.parts(reinvite).parts.last == update)
        #expect(reinvite.values(.contact) == ["<sip:irisgw@192.0.2.10:5060>;+sip.src"])
    }

    @Test func aPlainCallKeepsItsPlainSDP() throws {
        var machine = Bench.uac()
        let invite = try #require(Self.sent(machine.handle(.start, now: 0)))
        #expect(invite.contentType == "application/sdp")
        #expect(invite.body == Array(Wire.ourSDP.serialize().utf8))
        _ = machine.handle(.response(Wire.response(200, "OK", sdp: true), to: .invite), now: 1)
        let reinvite = try #require(
            Self.sent(machine.handle(.sendOffer(.reInvite, sdp: Wire.ourSDP, headers: []), now: 2)))
        #expect(reinvite.contentType == "application/sdp")
        #expect(reinvite.values(.contact) == ["<sip:irisgw@192.0.2.10:5060>"])
    }

    @Test func anAnswerInAMultipartBodyIsTheAnswer() {
        var machine = Bench.uac()
        _ = machine.handle(.start, now: 0)
        var ok = Wire.response(200, "OK")
        ok.body = Array(Self.multipart("srs", sdpFirst: false).utf8)
        ok.setHeader(.contentType, "multipart/mixed;boundary=srs")
        #expect(
            machine.handle(.response(ok, to: .invite), now: 1).map(Bench.line) == [
                "ACK 1 to=c1 kept", "report connected"
            ])
        #expect(machine.remoteSDP == Wire.sdp)
    }

    @Test func aBodyWrittenWithPartsParsesBack() throws {
        var m = Wire.ourInvite
        m.prependHeader(.via, "SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK-multipart")
        m.setSDP(Wire.ourSDP, with: [Self.metadataPart])
        let again = try SIPMessage.parse(m.serialize())
        #expect(again.sdp == Wire.ourSDP)
        #expect(Self.parts(again).parts.last?.header("content-disposition") == "recording-session")
        m.setSDP(nil)
        #expect(m.body.isEmpty && m.contentType == nil)
    }
}
