import TestSupport
import Testing

@testable import SIP

/// RFC 4475 and RFC 5118 torture messages through the parser, with the verdict each
/// corpus MANIFEST expects.
@Suite(ConformanceCorpus.required)
struct TortureMessageTests {
    @Test func corpusIsPresent() {
        #expect(ConformanceCorpus.rfc4475.count >= 49)
        #expect(ConformanceCorpus.rfc5118.count == 12)
    }

    @Test(arguments: ConformanceCorpus.rfc4475 + ConformanceCorpus.rfc5118)
    func verdictMatchesManifest(_ c: ConformanceCorpus.Case) {
        let bytes = c.bytes
        #expect(!bytes.isEmpty, "missing \(c.path)")
        let result = Result { () throws(SIPParseError) in try SIPMessage.parse(bytes, framing: .datagram) }
        switch result {
        case .success(let m):
            #expect(c.shouldParse, "\(c.file) (\(c.section)) should be rejected but parsed as \(m.method)")
            // Serialising, parsing and serialising again gives the same octets.
            let wire = m.serialize()
            let again = try? SIPMessage.parse(wire, framing: .stream)
            #expect(again?.serialize() == wire, "\(c.file) does not round-trip")
            #expect(again?.body == m.body)
        case .failure(let e):
            #expect(!c.shouldParse, "\(c.file) (\(c.section)) should parse but failed: \(e)")
            #expect([400, 505, 513].contains(e.status))
        }
    }

    @Test func shortTortuousInvite() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "wsinv.sip"))
        #expect(m.method == "INVITE")
        #expect(m.requestURI?.host == "chair-dnrc.example.com")
        #expect(m.requestURI?.parameters == [SIPParameter("unknownparam")])
        #expect(m.to?.tag == "1918181833n")
        #expect(m.from?.displayName == "J Rosenberg \\\"")
        #expect(m.from?.tag == "98asjd8")
        #expect(m.maxForwards == 68)
        #expect(m.cseq == CSeq(9, "INVITE"))
        let vias = m.vias
        #expect(vias.count == 3)
        #expect(vias[0].transport == "UDP" && vias[0].host == "192.0.2.2" && vias[0].branch == "390skdjuw")
        #expect(vias[1].transport == "TCP" && vias[1].host == "spindle.example.com" && vias[1].branch == "z9hG4bK9ikj8")
        #expect(vias[2].branch == "z9hG4bK30239")
        #expect(m["NewFangledHeader"] == "newfangled value continued newfangled value")
        #expect(m[.subject] == "")
        let contact = try #require(m.contacts.first)
        #expect(contact.displayName == "Quoted string \"\"")
        #expect(contact.parameters[parameter: "q"] == .some("0.33"))
        #expect(contact.parameters[parameter: "secondparam"] == .some(nil))
        #expect(m.routes.first?.uri.isLooseRouter == true)
        #expect(m.body.count == 150)
    }

    @Test func escapesAreKept() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "esc01.sip"))
        #expect(m.requestURI?.user == "sips%3Auser%40example.com")
        let null = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "escnull.sip"))
        #expect(null.to?.uri.user == "null-%00-null")
        #expect(null.contacts.count == 2)
        let notEscape = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "esc02.sip"))
        #expect(notEscape.method == "RE%47IST%45R")
        #expect(notEscape["C%6Fntact"] != nil)
    }

    @Test func unusualMethodAndCharacters() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "intmeth.sip"))
        #expect(m.method == "!interesting-Method0123456789_*+`.%indeed'~")
        #expect(m.requestURI?.user == "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*")
        #expect(m.to?.displayName?.contains("\u{0}") == true)
    }

    @Test func trailingOctetsInDatagramAreIgnored() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "dblreq.sip"))
        #expect(m.method == "REGISTER")
        #expect(m.body.isEmpty)
    }

    @Test func semicolonInUserPart() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "semiuri.sip"))
        #expect(m.requestURI?.user == "user;par=u%40example.net")
        #expect(m.requestURI?.host == "example.com")
    }

    @Test func emptyAndUnusualReasonPhrases() throws {
        let empty = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "noreason.sip"))
        #expect(empty.statusCode == 100 && empty.reasonPhrase == "")
        let utf8 = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "unreason.sip"))
        #expect(utf8.statusCode == 200)
        #expect(utf8.reasonPhrase?.unicodeScalars.contains(where: { $0.value > 127 }) == true)
    }

    @Test func rfc2543InviteWithoutContentLength() throws {
        let m = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", "inv2543.sip"))
        #expect(m.topVia?.branch == nil)
        #expect(m.topVia?.hasRFC3261Branch == false)
        #expect(m.from?.tag == nil)
        #expect(!m.body.isEmpty)
    }

    @Test(arguments: [
        ("badvers.sip", 505), ("mismatch01.sip", 400), ("scalar02.sip", 400), ("insuf.sip", 400),
        ("clerr.sip", 400), ("ncl.sip", 400), ("multi01.sip", 400), ("escruri.sip", 400),
        ("ltgtruri.sip", 400), ("badinv01.sip", 400), ("quotbal.sip", 400)
    ])
    func invalidRequestsCarryTheirStatus(_ file: String, _ status: Int) {
        #expect(throws: SIPParseError.self) { try SIPMessage.parse(ConformanceCorpus.message("rfc4475", file)) }
        do {
            _ = try SIPMessage.parse(ConformanceCorpus.message("rfc4475", file))
        } catch {
            #expect(error.status == status, "\(file): \(error)")
        }
    }

    @Test func ipv6References() throws {
        let good = try SIPMessage.parse(ConformanceCorpus.message("rfc5118", "wire/ipv6-good.sip"))
        #expect(good.requestURI?.host == "2001:db8::10")
        #expect(good.requestURI?.isIPv6 == true)
        let ambiguous = try SIPMessage.parse(ConformanceCorpus.message("rfc5118", "wire/port-ambiguous.sip"))
        #expect(ambiguous.requestURI?.host == "2001:db8::10:5070")
        #expect(ambiguous.requestURI?.port == nil)
        let unambiguous = try SIPMessage.parse(ConformanceCorpus.message("rfc5118", "wire/port-unambiguous.sip"))
        #expect(unambiguous.requestURI?.host == "2001:db8::10")
        #expect(unambiguous.requestURI?.port == 5070)
        let noDelim = try SIPMessage.parse(ConformanceCorpus.message("rfc5118", "wire/via-received-param-no-delim.sip"))
        #expect(noDelim.topVia?.received == "2001:db8::9:255")
        #expect(noDelim.topVia?.branch != nil)
        let mixed = try SIPMessage.parse(ConformanceCorpus.message("rfc5118", "wire/mult-ip-in-header.sip"))
        #expect(mixed.vias.count >= 3)
    }
}
