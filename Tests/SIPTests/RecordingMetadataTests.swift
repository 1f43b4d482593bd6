import Foundation
import FoundationXML
import SIP
import Testing

/// SIPREC metadata (RFC 7865) and the multipart body that carries it (RFC 7866): the XML is
/// well formed whatever the names hold, and says which participant sends which stream.
@Suite struct RecordingMetadataTests {
    static let metadata = RecordingMetadata(
        sessionID: "hVpd7YQgRW2nD22h7q60JQ==", sipSessionID: "c9c1c24abd2e5d05@127.0.0.1",
        startTime: "2026-12-05T18:00:00Z",
        participants: [
            .init(
                id: "srfBElmCRp2QB23b7Mpk0w==", aor: "sip:+15551230001@carrier.example", name: "Carrier \"A\" & <co>",
                sends: ["i1Pz3to5hGk8fuXl+PbwCw=="], receives: ["UAAMm5GRQKSCMVvLyl4rFw=="],
                associated: "2026-12-05T18:00:00Z"),
            .init(
                id: "zSfPoSvdSDCmU3A3TRDxAw==", aor: "sip:+15557654321@gw.test", sends: ["UAAMm5GRQKSCMVvLyl4rFw=="],
                receives: ["i1Pz3to5hGk8fuXl+PbwCw=="], associated: "2026-12-05T18:00:00Z",
                disassociated: "2026-12-05T18:05:00Z")
        ],
        streams: [.init(id: "i1Pz3to5hGk8fuXl+PbwCw==", label: "1"), .init(id: "UAAMm5GRQKSCMVvLyl4rFw==", label: "2")])

    /// Element names and text, in document order.
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [String] = []
        var attributes: [[String: String]] = []
        var text: [String: [String]] = [:]
        private var current = ""
        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            elements.append(name)
            self.attributes.append(attributes)
            current = ""
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let t = current.trimmingCharacters(in: .whitespacesAndNewlines)
            if !t.isEmpty { text[name, default: []].append(t) }
            current = ""
        }
    }

    static func parse(_ xml: String) -> Collector? {
        let parser = XMLParser(data: Data(xml.utf8))
        let c = Collector()
        parser.delegate = c
        return parser.parse() ? c : nil
    }

    @Test func theMetadataIsWellFormedAndComplete() throws {
        let c = try #require(Self.parse(Self.metadata.serialize()))
        #expect(c.elements.first == "recording")
        #expect(c.text["datamode"] == ["complete"])
        #expect(c.elements.filter { $0 == "participant" }.count == 2)
        #expect(c.elements.filter { $0 == "stream" }.count == 2)
        #expect(c.text["name"] == ["Carrier \"A\" & <co>"])
        #expect(c.text["label"] == ["1", "2"])
        #expect(c.text["send"] == ["i1Pz3to5hGk8fuXl+PbwCw==", "UAAMm5GRQKSCMVvLyl4rFw=="])
        #expect(c.text["disassociate-time"] == ["2026-12-05T18:05:00Z"])
        #expect(c.text["sipSessionID"] == ["c9c1c24abd2e5d05@127.0.0.1"])
        let nameIDs = zip(c.elements, c.attributes).filter { $0.0 == "nameID" }.map { $0.1["aor"] }
        #expect(nameIDs == ["sip:+15551230001@carrier.example", "sip:+15557654321@gw.test"])
    }

    @Test(arguments: ["\u{1}bell", "a]]>b", "<script>", "'quoted'"])
    func anyNameStaysWellFormed(_ name: String) throws {
        var m = Self.metadata
        m.participants[0].name = name
        m.stopTime = "2026-12-05T18:05:00Z"
        let c = try #require(Self.parse(m.serialize()), "not well formed: \(m.serialize())")
        #expect(c.text["name"] == [name.filter { $0 != "\u{1}" }])
        #expect(c.text["stop-time"] == ["2026-12-05T18:05:00Z"])
    }

    @Test func theMultipartBodyRoundTrips() throws {
        let sdp = Array("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n".utf8)
        let xml = Array(Self.metadata.serialize().utf8)
        let body = MultipartBody(
            boundary: "irisgw-rs-1",
            parts: [
                .init(headers: [("Content-Type", "application/sdp")], body: sdp),
                .init(
                    headers: [
                        ("Content-Type", RecordingMetadata.contentType), ("Content-Disposition", "recording-session")
                    ], body: xml)
            ])
        #expect(body.contentType == "multipart/mixed;boundary=irisgw-rs-1")
        let back = try #require(MultipartBody.parse(body.serialize(), boundary: "irisgw-rs-1"))
        #expect(back == body)
        #expect(MultipartBody.parse(Array("--x\r\n\r\nno end".utf8), boundary: "x") == nil)
    }
}
