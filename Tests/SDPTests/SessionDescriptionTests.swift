import Foundation
import TestSupport
import Testing

@testable import SDP

// MARK: - Fixtures

/// A file of the conformance corpus (TestSupport's `ConformanceCorpus`) as text.
private func conformanceText(_ relativePath: String) throws -> String {
    try String(contentsOfFile: ConformanceCorpus.path(relativePath), encoding: .utf8)
}

/// The body of a raw SIP message: everything after the first empty line.
private func sipMessageBody(_ relativePath: String) throws -> String {
    let message = try conformanceText(relativePath)
    let separator = try #require(message.range(of: "\r\n\r\n"), "no blank line in \(relativePath)")
    return String(message[separator.upperBound...])
}

/// The SDP bodies of a SIPp scenario, in order: from each "v=0" line to the end of the
/// CDATA block, unindented, with SIPp's [keywords] replaced by concrete values.
private func sippBodies(_ relativePath: String) throws -> [String] {
    let substitutions = [
        "[media_port]": "6000", "[media_ip_type]": "4", "[media_ip]": "192.0.2.50",
        "[local_ip_type]": "4", "[local_ip]": "192.0.2.50"
    ]
    var bodies: [String] = []
    var current: [String]?
    for rawLine in try conformanceText(relativePath).split(separator: "\n", omittingEmptySubsequences: false) {
        let line = rawLine.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: "\r")))
        if line == "v=0" { current = [] }
        guard var lines = current else { continue }
        if line.isEmpty || line.hasPrefix("]]>") {
            bodies.append(lines.map { $0 + "\r\n" }.joined())
            current = nil
            continue
        }
        var text = line
        for (keyword, value) in substitutions { text = text.replacingOccurrences(of: keyword, with: value) }
        lines.append(text)
        current = lines
    }
    return bodies
}

/// Joins lines with CRLF, ending the last one too.
private func sdp(_ lines: String...) -> String {
    lines.map { $0 + "\r\n" }.joined()
}

/// A carrier's 183 Session Progress answer: G.711 both laws, RFC 4733 DTMF, 20 ms packets.
private let carrier183 = sdp(
    "v=0",
    "o=- 1720000000 1720000001 IN IP4 203.0.113.10",
    "s=SBC",
    "c=IN IP4 203.0.113.10",
    "t=0 0",
    "m=audio 31000 RTP/AVP 0 8 101",
    "b=AS:80",
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-15",
    "a=ptime:20",
    "a=maxptime:40",
    "a=rtcp:31001",
    "a=sendrecv"
)

// MARK: - Real bodies (RFC 5118, RFC 4475)

@Suite("SDP from RFC 5118 and RFC 4475 messages", ConformanceCorpus.required)
struct SDPConformanceBodyTests {
    static let files = [
        "rfc5118/wire/ipv6-in-sdp.sip",
        "rfc5118/wire/mult-ip-in-sdp.sip",
        "rfc5118/wire/ipv4-mapped-ipv6.sip",
        "rfc4475/sdp01.sip"
    ]

    @Test("canonical bodies serialize back byte for byte", arguments: files)
    func roundTripIsExact(file: String) throws {
        let body = try sipMessageBody(file)
        let description = try SessionDescription.parse(body)
        #expect(description.serialize() == body)
        #expect(try SessionDescription.parse(description.serialize()) == description)
    }

    @Test("RFC 5118 §4.1: IPv6 origin and connection")
    func ipv6InSDP() throws {
        let description = try SessionDescription.parse(try sipMessageBody("rfc5118/wire/ipv6-in-sdp.sip"))
        #expect(
            description.origin
                == SDPOrigin(
                    username: "assistant", sessionID: "971731711378798081",
                    sessionVersion: 0, addrType: "IP6", address: "2001:db8::20"))
        #expect(description.sessionName == "Live video feed for today's meeting")
        #expect(description.connection == .ip6("2001:db8::20"))
        #expect(description.connection?.isNullAddress == false)
        #expect(description.timing == SDPTiming(start: 3_338_481_189, stop: 3_370_017_201))
        #expect(description.media.map(\.media) == ["audio", "video"])
        #expect(description.media.map(\.port) == [6000, 6024])
        #expect(description.media[0].rtpMaps == [RTPMap(payloadType: 2, encodingName: "G726-32", clockRate: 8000)])
        #expect(description.media[1].rtpMaps == [RTPMap(payloadType: 107, encodingName: "H263-1998", clockRate: 90000)])
        #expect(description.direction(ofMedia: 0) == .sendrecv)
        #expect(!description.isHold)
    }

    @Test("RFC 5118 §4.2: per-media connections of both families")
    func multipleAddresses() throws {
        let description = try SessionDescription.parse(try sipMessageBody("rfc5118/wire/mult-ip-in-sdp.sip"))
        #expect(description.sessionName == "")
        #expect(description.connection == nil)
        #expect(description.connection(ofMedia: 0) == .ip4("192.0.2.1"))
        #expect(description.connection(ofMedia: 1) == .ip6("2001:db8::1"))
        #expect(description.connection(ofMedia: 5) == nil)
        #expect(description.media[0].rtpMaps == [.pcmu])  // static type, no rtpmap line
    }

    @Test("RFC 5118 §4.3: IPv4-mapped IPv6 address is not a null address")
    func ipv4Mapped() throws {
        let description = try SessionDescription.parse(try sipMessageBody("rfc5118/wire/ipv4-mapped-ipv6.sip"))
        #expect(description.connection == .ip6("::ffff:192.0.2.2"))
        #expect(description.origin.address == "::ffff:192.0.2.2")
        #expect(!description.isHold(ofMedia: 0))
    }

    @Test("RFC 4475 sdp01: malformed rtpmap is skipped, static types fill in")
    func torture() throws {
        let description = try SessionDescription.parse(try sipMessageBody("rfc4475/sdp01.sip"))
        #expect(description.sessionName == "-")
        #expect(description.media[0].formats == ["0", "12"])
        #expect(description.media[0].rtpMaps.map(\.encodingName) == ["PCMU", "QCELP"])
        // "a=rtpmap:31 LPC" has no clock rate, so the RFC 3551 assignment (H261) stands.
        #expect(description.media[1].attributes == [SDPAttribute(name: "rtpmap", value: "31 LPC")])
        #expect(description.media[1].rtpMaps == [RTPMap(payloadType: 31, encodingName: "H261", clockRate: 90000)])
    }
}

// MARK: - SIPp scenarios

@Suite("SDP from SIPp scenarios", ConformanceCorpus.required)
struct SDPSIPpTests {
    @Test("pjproject re-INVITE: sendrecv, then sendonly hold, then inactive")
    func reinviteWithLessMedia() throws {
        let bodies = try sippBodies("sipp/pjproject/uas-reinv-with-less-media.xml")
        try #require(bodies.count == 3)
        let descriptions = try bodies.map { body throws(SDPError) in try SessionDescription.parse(body) }
        #expect(descriptions.map { $0.direction(ofMedia: 0) } == [.sendrecv, .sendonly, .inactive])
        #expect(descriptions.map { $0.isHold(ofMedia: 0) } == [false, true, true])
        #expect(descriptions.map { $0.direction(ofMedia: 0).answer } == [.sendrecv, .recvonly, .inactive])
        for description in descriptions {
            #expect(description.origin.sessionVersion == 3_441_953_879)
            #expect(description.sessionName == "pjmedia")
            #expect(description.media[0].rtpMaps == [.pcmu, .telephoneEvent(payloadType: 96)])
            #expect(description.media[0].telephoneEventPayloadType == 96)
            #expect(try SessionDescription.parse(description.serialize()) == description)
        }
    }

    @Test(
        "Asterisk hold tests: session- and media-level sendonly/inactive",
        arguments: [
            ("sipp/asterisk-testsuite/hold__phone_B_duplicate_hold.xml", MediaDirection.sendonly),
            ("sipp/asterisk-testsuite/hold_inactive__phone_B_duplicate_hold.xml", MediaDirection.inactive)
        ])
    func asteriskHold(file: String, held: MediaDirection) throws {
        let descriptions = try sippBodies(file).map { body throws(SDPError) in try SessionDescription.parse(body) }
        try #require(descriptions.count == 3)
        #expect(descriptions.map(\.sessionDirection) == [.sendrecv, held, held])
        #expect(descriptions.map { $0.media[0].explicitDirection } == [.sendrecv, held, held])
        #expect(descriptions.map(\.isHold) == [false, true, true])
        #expect(descriptions[1].connection == .ip4("192.0.2.50"))
        #expect(descriptions[1].media[0].telephoneEventPayloadType == 101)
    }

    @Test("pjproject PRACK offer: inactive, fmtp after the direction attribute")
    func prackOffer() throws {
        let descriptions = try sippBodies("sipp/pjproject/uac-prack-sdp-offer.xml")
            .map { body throws(SDPError) in try SessionDescription.parse(body) }
        try #require(descriptions.count == 2)
        #expect(descriptions[0].media[0].direction == .inactive)
        #expect(descriptions[1].media[0].direction == .sendrecv)
        #expect(descriptions[1].origin.sessionVersion == descriptions[0].origin.incrementingVersion().sessionVersion)
        let audio = descriptions[0].media[0]
        #expect(audio.port == 6000)
        #expect(audio.fmtp(for: 101) == "0-11,16")
        #expect(audio.fmtp(for: 8) == nil)
        #expect(audio.rtpMaps.map(\.encodingName) == ["PCMA", "telephone-event"])
    }

    @Test("pjproject 183 with EVS: wideband telephone-event and fmtp with spaces")
    func wrongCodec() throws {
        let bodies = try sippBodies("sipp/pjproject/uac-183-wrong-codec.xml")
        let audio = try SessionDescription.parse(try #require(bodies.first)).media[0]
        #expect(
            audio.rtpMaps == [
                RTPMap(payloadType: 109, encodingName: "EVS", clockRate: 16000),
                .telephoneEvent(payloadType: 105, clockRate: 16000)
            ])
        #expect(audio.fmtp(for: 109) == "br=5.9-24.4; bw=nb-wb; max-red=220")
        #expect(audio.telephoneEventPayloadType == 105)
    }

    @Test("every SDP body in the SIPp scenarios parses and round-trips")
    func allScenarios() throws {
        let root = URL(fileURLWithPath: ConformanceCorpus.path("sipp"))
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path))
        var count = 0
        for case let path as String in enumerator where path.hasSuffix(".xml") {
            for body in try sippBodies("sipp/" + path) {
                let description = try SessionDescription.parse(body)
                #expect(try SessionDescription.parse(description.serialize()) == description, "\(path)")
                count += 1
            }
        }
        #expect(count >= 20)
    }
}

// MARK: - Helpers and hold

@Suite("SDP media helpers")
struct SDPMediaTests {
    @Test("carrier 183: codecs, DTMF, ptime, rtcp, bandwidth")
    func carrierProgress() throws {
        let description = try SessionDescription.parse(carrier183)
        let audio = try #require(description.media.first)
        #expect(audio.rtpMaps == [.pcmu, .pcma, .telephoneEvent()])
        #expect(audio.telephoneEventPayloadType == 101)
        #expect(audio.fmtp(for: 101) == "0-15")
        #expect(audio.ptime == 20)
        #expect(audio.maxptime == 40)
        #expect(audio.rtcpPort == 31001)
        #expect(!audio.rtcpMux)
        #expect(audio.bandwidths == [SDPBandwidth(type: "AS", bandwidth: 80)])
        #expect(audio.direction == .sendrecv)
        #expect(!description.isHold)
        #expect(description.serialize() == carrier183)
    }

    @Test(
        "static payload types are implied without rtpmap",
        arguments: [
            (0, "PCMU"), (8, "PCMA"), (9, "G722"), (18, "G729"), (13, "CN")
        ])
    func staticPayloadTypes(payloadType: Int, name: String) throws {
        let description = try SessionDescription.parse(
            sdp(
                "v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0",
                "m=audio 4000 RTP/AVP \(payloadType) 96"))
        // 96 is dynamic and has no rtpmap, so it has no map at all.
        #expect(description.media[0].rtpMaps == [RTPMap(payloadType: payloadType, encodingName: name, clockRate: 8000)])
    }

    @Test("an explicit rtpmap wins over the static assignment; non-RTP formats have no maps")
    func explicitRtpmap() throws {
        let description = try SessionDescription.parse(
            sdp(
                "v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "t=0 0",
                "m=audio 4000 RTP/AVP 0", "a=rtpmap:0 PCMU/8000/1",
                "m=image 4002 udptl t38"))
        #expect(
            description.media[0].rtpMaps == [RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000, channels: 1)]
        )
        #expect(description.media[0].rtpMaps[0].isSameCodec(as: .pcmu))
        #expect(description.media[1].rtpMaps.isEmpty)
        #expect(description.media[1].formats == ["t38"])
    }

    @Test("ptime with a fraction, rtcp with an address, port count")
    func attributeDetails() throws {
        let audio = try SessionDescription.parse(
            sdp(
                "v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "t=0 0",
                "m=audio 4000/2 RTP/AVP 0", "a=ptime:20.0", "a=rtcp:4001 IN IP4 192.0.2.9", "a=rtcp-mux")
        ).media[0]
        #expect(audio.ptime == 20)
        #expect(audio.maxptime == nil)
        #expect(audio.rtcpPort == 4001)
        #expect(audio.rtcpMux)
        #expect(audio.portCount == 2)
        #expect(audio.mediaLine() == "audio 4000/2 RTP/AVP 0")
    }

    @Test(
        "hold: sendonly, inactive, c=0.0.0.0, c=::; media level overrides session level",
        arguments: [
            (["a=sendonly"], [], "192.0.2.1", true),
            (["a=inactive"], [], "192.0.2.1", true),
            ([], [], "0.0.0.0", true),
            ([], ["a=recvonly"], "192.0.2.1", false),
            (["a=sendonly"], ["a=sendrecv"], "192.0.2.1", false),  // media-level wins
            (["a=sendrecv"], ["a=inactive"], "192.0.2.1", true)
        ] as [([String], [String], String, Bool)])
    func holdDetection(session: [String], mediaLevel: [String], address: String, held: Bool) throws {
        let lines =
            ["v=0", "o=- 1 2 IN IP4 192.0.2.1", "s=-", "c=IN IP4 \(address)", "t=0 0"] + session
            + ["m=audio 4000 RTP/AVP 0"] + mediaLevel
        let description = try SessionDescription.parse(lines.map { $0 + "\r\n" }.joined())
        #expect(description.isHold(ofMedia: 0) == held)
        #expect(description.isHold == held)
    }

    @Test("IPv6 null address is a hold; rejected streams do not count")
    func ipv6NullAndRejected() throws {
        let description = try SessionDescription.parse(
            sdp(
                "v=0", "o=- 1 2 IN IP6 2001:db8::1", "s=-", "t=0 0",
                "m=audio 4000 RTP/AVP 0", "c=IN IP6 ::",
                "m=video 0 RTP/AVP 31", "c=IN IP6 2001:db8::1"))
        #expect(description.connection(ofMedia: 0)?.isNullAddress == true)
        #expect(description.media[1].isRejected)
        #expect(description.isHold)
    }

    @Test("setting direction replaces the existing attribute in place")
    func directionSetter() throws {
        var description = try SessionDescription.parse(carrier183)
        description.media[0].attributes.insert(.direction(.recvonly), at: 0)  // a duplicate, first
        description.media[0].direction = .inactive
        let names = description.media[0].attributes.map(\.name)
        #expect(names == ["inactive", "rtpmap", "rtpmap", "rtpmap", "fmtp", "ptime", "maxptime", "rtcp"])
        #expect(description.direction(ofMedia: 0) == .inactive)

        var bare = MediaDescription(media: "audio", port: 4000, formats: ["0"])
        #expect(bare.explicitDirection == nil)
        bare.direction = .sendonly
        #expect(bare.attributes == [SDPAttribute(name: "sendonly")])

        description.sessionDirection = .sendonly
        #expect(description.attributes == [SDPAttribute(name: "sendonly")])
        description.sessionDirection = nil
        #expect(description.attributes.isEmpty)
    }

    @Test(
        "the answer direction mirrors the offer",
        arguments: [
            (MediaDirection.sendrecv, MediaDirection.sendrecv),
            (.sendonly, .recvonly), (.recvonly, .sendonly), (.inactive, .inactive)
        ])
    func answer(offer: MediaDirection, expected: MediaDirection) {
        #expect(offer.answer == expected)
        #expect(offer.answer(limitedTo: .sendrecv) == expected)
    }

    @Test(
        "an answerer on hold narrows the mirror",
        arguments: [
            (MediaDirection.sendrecv, MediaDirection.sendonly, MediaDirection.sendonly),
            (.sendonly, .sendonly, .inactive),
            (.recvonly, .sendonly, .sendonly),
            (.sendrecv, .inactive, .inactive),
            (.sendonly, .recvonly, .recvonly)
        ])
    func limitedAnswer(offer: MediaDirection, local: MediaDirection, expected: MediaDirection) {
        #expect(offer.answer(limitedTo: local) == expected)
    }

    @Test("MediaDirection send/receive flags and hold")
    func directionFlags() {
        #expect(MediaDirection.allCases.filter(\.isHold) == [.sendonly, .inactive])
        #expect(MediaDirection.allCases.filter(\.isSending) == [.sendrecv, .sendonly])
        #expect(MediaDirection.allCases.filter(\.isReceiving) == [.sendrecv, .recvonly])
        for direction in MediaDirection.allCases {
            #expect(MediaDirection(sending: direction.isSending, receiving: direction.isReceiving) == direction)
        }
    }
}

// MARK: - Building and round trips

@Suite("SDP building and round trips")
struct SDPRoundTripTests {
    @Test("audio builder writes m=, rtpmap, fmtp 0-16, ptime and direction")
    func audioBuilder() throws {
        let audio = MediaDescription.audio(
            port: 4000, codecs: [.pcmu, .pcma], telephoneEvent: .telephoneEvent(),
            ptime: 20, direction: .sendonly)
        let offer = SessionDescription(
            origin: SDPOrigin(sessionID: "42", sessionVersion: 1, address: "192.0.2.7"),
            connection: .ip4("192.0.2.7"), media: [audio])
        let expected = sdp(
            "v=0", "o=- 42 1 IN IP4 192.0.2.7", "s=-", "c=IN IP4 192.0.2.7", "t=0 0",
            "m=audio 4000 RTP/AVP 0 8 101",
            "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000", "a=rtpmap:101 telephone-event/8000",
            "a=fmtp:101 0-16", "a=ptime:20", "a=sendonly")
        #expect(offer.serialize() == expected)
        let parsed = try SessionDescription.parse(offer.serialize())
        #expect(parsed == offer)
        #expect(parsed.media[0].rtpMaps == [.pcmu, .pcma, .telephoneEvent()])
        #expect(parsed.media[0].fmtp(for: 101) == "0-16")
        #expect(parsed.media[0].ptime == 20)
        #expect(parsed.direction(ofMedia: 0) == .sendonly)
        #expect(parsed.isHold)
    }

    @Test("builder defaults: no DTMF, no ptime, sendrecv")
    func audioBuilderDefaults() {
        let audio = MediaDescription.audio(port: 5004, codecs: [.g722])
        #expect(audio.formats == ["9"])
        #expect(audio.attributes == [.rtpmap(.g722), .direction(.sendrecv)])
        #expect(audio.telephoneEventPayloadType == nil)
        #expect(audio.ptime == nil)
    }

    @Test("LF-only input equals CRLF input")
    func bareLineFeeds() throws {
        let lf = carrier183.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(try SessionDescription.parse(lf) == SessionDescription.parse(carrier183))
        // No line end at all after the last line is accepted as well.
        #expect(try SessionDescription.parse(String(lf.dropLast())) == SessionDescription.parse(carrier183))
    }

    @Test("byte input of any collection type")
    func bytes() throws {
        let expected = try SessionDescription.parse(carrier183)
        #expect(try SessionDescription.parse(Array(carrier183.utf8)) == expected)
        #expect(try SessionDescription.parse(Data(carrier183.utf8)) == expected)
        #expect(try SessionDescription.parse(Array(("xx" + carrier183).utf8).dropFirst(2)) == expected)
    }

    @Test("i= u= e= p= r= z= k= and unknown letters are kept and round-trip in RFC order")
    func optionalLines() throws {
        let body = sdp(
            "v=0", "o=alice 2890844526 2890842807 IN IP4 198.51.100.1", "s=Seminar",
            "k=prompt",  // out of place: moves before a= on output
            "i=A seminar", "u=http://www.example.com/seminar", "e=alice@example.com", "p=+1 617 555 6011",
            "c=IN IP4 198.51.100.1", "b=CT:128", "t=2873397496 2873404696", "r=604800 3600 0 90000",
            "t=2873500000 2873600000", "z=2882844526 -1h 2898848070 0", "x=experimental",
            "a=recvonly",
            "m=audio 49170 RTP/AVP 0", "i=voice", "k=clear:secret", "a=rtpmap:0 PCMU/8000")
        let description = try SessionDescription.parse(body)
        #expect(description.otherFields.map(\.type) == ["i", "u", "e", "p", "r", "t", "z", "k", "x"])
        #expect(
            description.media[0].otherFields == [
                SDPField(type: "i", value: "voice"),
                SDPField(type: "k", value: "clear:secret")
            ])
        #expect(description.timing == SDPTiming(start: 2_873_397_496, stop: 2_873_404_696))
        #expect(description.bandwidths == [SDPBandwidth(type: "CT", bandwidth: 128)])
        #expect(description.direction(ofMedia: 0) == .recvonly)
        let text = description.serialize()
        #expect(try SessionDescription.parse(text) == description)
        #expect(text.contains("s=Seminar\r\ni=A seminar\r\nu=http://"))
        #expect(text.contains("t=2873397496 2873404696\r\nr=604800 3600 0 90000\r\nt=2873500000"))
        #expect(text.contains("m=audio 49170 RTP/AVP 0\r\ni=voice\r\nk=clear:secret\r\na=rtpmap"))
    }

    @Test("missing s= and t= take their defaults; blank lines and trailing blanks are tolerated")
    func lenientDefaults() throws {
        let description = try SessionDescription.parse(
            "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n\r\nm=audio 4000 RTP/AVP 0 \r\na=sendonly  \r\n\r\n")
        #expect(description.sessionName == "-")
        #expect(description.timing == SDPTiming())
        #expect(description.media[0].formats == ["0"])
        #expect(description.media[0].direction == .sendonly)
    }

    @Test("a property attribute differs from an empty value")
    func emptyAttributeValue() throws {
        let description = try SessionDescription.parse(
            sdp("v=0", "o=- 1 1 IN IP4 h", "s=-", "t=0 0", "a=tool:", "a=flag"))
        #expect(description.attributes == [SDPAttribute(name: "tool", value: ""), SDPAttribute(name: "flag")])
        #expect(try SessionDescription.parse(description.serialize()) == description)
    }

    @Test("origin version increments and wraps")
    func originVersion() {
        let origin = SDPOrigin(sessionID: "1", sessionVersion: 7, address: "192.0.2.1")
        #expect(origin.incrementingVersion().sessionVersion == 8)
        #expect(SDPOrigin(sessionID: "1", sessionVersion: .max, address: "h").incrementingVersion().sessionVersion == 0)
    }
}

// MARK: - Malformed input and limits

@Suite("SDP errors")
struct SDPErrorTests {
    static let header = ["v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "t=0 0"]

    @Test(
        "malformed bodies fail with the offending line",
        arguments: [
            ("missing v=", ["o=- 1 1 IN IP4 192.0.2.1", "s=-"], 1, "first line must be v="),
            ("wrong version", ["v=1", "o=- 1 1 IN IP4 h"], 1, "version"),
            ("line without '='", header + ["hello"], 5, "no '='"),
            ("multi-letter type", header + ["ab=c"], 5, "single letter"),
            ("space before '='", header + ["a =sendrecv"], 5, "single letter"),
            ("digit as type", header + ["1=x"], 5, "letter"),
            ("bad m= line", header + ["m=audio 4000"], 5, "m= needs"),
            ("non-numeric port", header + ["m=audio abc RTP/AVP 0"], 5, "not a number"),
            ("signed port", header + ["m=audio +4000 RTP/AVP 0"], 5, "not a number"),
            ("negative port", header + ["m=audio -1 RTP/AVP 0"], 5, "not a number"),
            ("port too large", header + ["m=audio 65536 RTP/AVP 0"], 5, "outside 0-65535"),
            ("huge port", header + ["m=audio 99999999999999999999999 RTP/AVP 0"], 5, "not a number"),
            ("bad port count", header + ["m=audio 4000/0 RTP/AVP 0"], 5, "port count"),
            ("short o=", ["v=0", "o=- 1 IN IP4 h"], 2, "o= needs 6"),
            ("non-numeric session version", ["v=0", "o=- 1 x IN IP4 h"], 2, "session version"),
            ("short c=", header + ["c=IN IP4"], 5, "c= needs 3"),
            ("bad t=", ["v=0", "o=- 1 1 IN IP4 h", "s=-", "t=now"], 4, "t= must"),
            ("bad b=", header + ["b=AS"], 5, "b= must"),
            ("non-numeric b=", header + ["b=AS:lots"], 5, "not a number"),
            ("empty a=", header + ["a="], 5, "no attribute name"),
            ("a= starting with ':'", header + ["a=:x"], 5, "no attribute name"),
            ("duplicate o=", header + ["o=- 1 1 IN IP4 h"], 5, "duplicate o="),
            ("duplicate v=", header + ["v=0"], 5, "duplicate v="),
            ("session line after m=", header + ["m=audio 4000 RTP/AVP 0", "t=0 0"], 6, "session-level"),
            (
                "two c= in a media", header + ["m=audio 4000 RTP/AVP 0", "c=IN IP4 h", "c=IN IP4 h"], 7,
                "more than one c="
            ),
            ("missing o=", ["v=0", "s=-", "t=0 0"], 0, "missing o=")
        ] as [(String, [String], Int, String)])
    func malformed(name: String, lines: [String], line: Int, fragment: String) {
        let body = lines.map { $0 + "\r\n" }.joined()
        #expect {
            _ = try SessionDescription.parse(body)
        } throws: { error in
            guard let error = error as? SDPError else { return false }
            return error.line == line && error.reason.contains(fragment) && error.kind == .malformed
                && error.statusCode == 400
        }
    }

    @Test("empty body and NUL inside a line", arguments: ["", "\r\n\r\n", "v=0\r\no=- 1 1 IN IP4 h\u{0}x\r\n"])
    func emptyOrBinary(body: String) {
        #expect(throws: SDPError.self) { try SessionDescription.parse(body) }
    }

    @Test("a body over 64 KiB is rejected before parsing; exactly 64 KiB is accepted")
    func oversize() throws {
        let base = sdp("v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "t=0 0")
        let filler = 65_536 - base.utf8.count - 4  // "a=" + value + CRLF
        let exact = base + "a=" + String(repeating: "x", count: filler) + "\r\n"
        #expect(exact.utf8.count == 65_536)
        #expect(try SessionDescription.parse(exact).attributes.count == 1)
        let error = #expect(throws: SDPError.self) { try SessionDescription.parse(exact + "a") }
        #expect(error?.kind == .tooLarge)
        #expect(error?.line == 0)
        #expect(error?.statusCode == 413)
        #expect(throws: SDPError.self) { try SessionDescription.parse([UInt8](repeating: 0x61, count: 70_000)) }
    }

    @Test("64 media descriptions are accepted, 65 are not")
    func mediaLimit() throws {
        func body(_ count: Int) -> String {
            sdp("v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0")
                + (0..<count).map { "m=audio \(4000 + 2 * $0) RTP/AVP 0\r\n" }.joined()
        }
        #expect(try SessionDescription.parse(body(64)).media.count == 64)
        let error = #expect(throws: SDPError.self) { try SessionDescription.parse(body(65)) }
        #expect(error?.kind == .tooManyMedia)
        #expect(error?.line == 70)
        #expect(error?.statusCode == 488)
    }

    @Test("error descriptions name the line")
    func descriptions() {
        #expect(SDPError(line: 3, reason: "bad").description == "SDP line 3: bad")
        #expect(SDPError(line: 0, reason: "missing o= line").description == "SDP: missing o= line")
    }

    @Test("every truncation and byte corruption of a valid body parses or throws SDPError")
    func noCrashOnDamagedInput() {
        let bytes = Array(carrier183.utf8)
        let lineCount = carrier183.split(separator: "\r\n").count
        var parsed = 0
        var failed = 0
        func attempt(_ input: some Collection<UInt8>) {
            do {
                _ = try SessionDescription.parse(input)
                parsed += 1
            } catch {
                #expect((0...lineCount + 1).contains(error.line), "\(error)")
                failed += 1
            }
        }
        for end in 0...bytes.count { attempt(bytes[..<end]) }
        for index in bytes.indices {
            for replacement: UInt8 in [0x00, 0x0A, 0x3D, 0x20, 0xFF] {
                var damaged = bytes
                damaged[index] = replacement
                attempt(damaged)
            }
        }
        #expect(parsed > 0)
        #expect(failed > 0)
    }
}
