import Testing

@testable import SIP

/// The transfer values (RFC 3891 Replaces, RFC 3420 sipfrag, RFC 6665 Event and
/// Subscription-State) on the forms the RFCs show.
struct ReplacesUnitTests {
    @Test(
        "parse and serialise",
        arguments: [
            // RFC 3891 §3
            (
                "425928@bobster.example.org;to-tag=7743;from-tag=6472",
                Replaces(callID: "425928@bobster.example.org", toTag: "7743", fromTag: "6472"),
                "425928@bobster.example.org;to-tag=7743;from-tag=6472"
            ),
            // RFC 3891 §6.1: the tags in either order, written back to-tag first
            (
                "98732@sip.example.com ;from-tag=r33th4x0r ;to-tag=ff87ff",
                Replaces(callID: "98732@sip.example.com", toTag: "ff87ff", fromTag: "r33th4x0r"),
                "98732@sip.example.com;to-tag=ff87ff;from-tag=r33th4x0r"
            ),
            (
                "12adf2f34456gs5;to-tag=12345;from-tag=54321;early-only",
                Replaces(callID: "12adf2f34456gs5", toTag: "12345", fromTag: "54321", earlyOnly: true),
                "12adf2f34456gs5;to-tag=12345;from-tag=54321;early-only"
            ),
            (
                " abc ; TO-TAG=a ; From-Tag=b ; x=y",
                Replaces(callID: "abc", toTag: "a", fromTag: "b"), "abc;to-tag=a;from-tag=b"
            )
        ])
    func parse(_ text: String, _ expected: Replaces, _ written: String) throws {
        let replaces = try Replaces.parse(text)
        #expect(replaces == expected)
        #expect(replaces.serialize() == written)
        #expect(try Replaces.parse(written) == expected)
    }

    @Test(
        "rejected with 400",
        arguments: [
            "", ";to-tag=a;from-tag=b", "abc", "abc;to-tag=a", "abc;from-tag=b", "abc;to-tag=;from-tag=b",
            "abc;to-tag=a;from-tag=", "a b;to-tag=a;from-tag=b", "a,b;to-tag=a;from-tag=b"
        ])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try Replaces.parse(text) }
        #expect(error?.status == 400)
    }

    /// RFC 3891 §7 and RFC 5589 §7.1: the Replaces escaped as a header of the Refer-To URI.
    @Test(
        "escaped in a Refer-To",
        arguments: [
            (
                "<sips:bob@phone21.boxesbybob.example.com?Replaces=12345%40192.168.118.3%3Bto-tag%3D12345%3Bfrom-tag%3D5FFE-3994>",
                Replaces(callID: "12345@192.168.118.3", toTag: "12345", fromTag: "5FFE-3994")
            ),
            (
                "<sips:Carol@client.chicago.example.com?Replaces=090459243588173445%3Bto-tag%3D7553452%3Bfrom-tag%3D31431>",
                Replaces(callID: "090459243588173445", toTag: "7553452", fromTag: "31431")
            )
        ])
    func inReferTo(_ referTo: String, _ expected: Replaces) throws {
        let uri = try NameAddress.parse(referTo).uri
        #expect(try Replaces.fromURIHeaders(uri.headers) == expected)
        // Written back escaped exactly as the RFC shows it.
        #expect(referTo.contains("?" + expected.uriHeader + ">"))
    }

    @Test func roundTripThroughAReferToURI() throws {
        // A Call-ID word with brackets and colons, tags with `%`, `!`, `*` and `~` (token characters).
        let replaces = Replaces(
            callID: "a84b4c76e66710@[2001:db8::9]", toTag: "a.b!c*d~", fromTag: "9f%x", earlyOnly: true)
        var uri = SIPURI(user: "+15550100001", host: "gw.example.com")
        uri.headers = replaces.uriHeader + "&Priority=urgent"
        let referTo = NameAddress(uri: uri).serialize()
        let parsed = try NameAddress.parse(referTo).uri
        #expect(try Replaces.fromURIHeaders(parsed.headers) == replaces)
        #expect(!replaces.uriHeader.dropFirst("Replaces=".count).contains { ";=@&".contains($0) })
    }

    @Test func uriHeadersWithoutReplaces() throws {
        #expect(try Replaces.fromURIHeaders(nil) == nil)
        #expect(try Replaces.fromURIHeaders("Priority=urgent&subject=x") == nil)
        let error = #expect(throws: SIPParseError.self) { try Replaces.fromURIHeaders("Replaces=abc%3Bto-tag%3") }
        #expect(error?.status == 400)
        #expect(throws: SIPParseError.self) { try Replaces.fromURIHeaders("replaces=abc%3Bto-tag%3Da") }
    }

    @Test func namingADialogReversesItsTags() {
        let dialog = Dialog(
            callID: "c1@192.0.2.10", localTag: "ours", remoteTag: "theirs",
            localAddress: NameAddress(uri: SIPURI(host: "192.0.2.10")),
            remoteAddress: NameAddress(uri: SIPURI(host: "198.51.100.7")), localSequence: 1, remoteSequence: 1,
            remoteTarget: SIPURI(host: "198.51.100.7"), routeSet: [], localContact: SIPURI(host: "192.0.2.10"))
        #expect(Replaces(naming: dialog) == Replaces(callID: "c1@192.0.2.10", toTag: "theirs", fromTag: "ours"))
    }
}

struct SIPFragUnitTests {
    @Test(
        "status line",
        arguments: [
            ("SIP/2.0 100 Trying\r\n", 100, "Trying"),
            ("SIP/2.0 180 Ringing\r\n", 180, "Ringing"),
            ("SIP/2.0 200 OK\r\n", 200, "OK"),
            ("SIP/2.0 200 OK", 200, "OK"),
            ("SIP/2.0 503 Service Unavailable\r\n", 503, "Service Unavailable"),
            ("sip/2.0 486 Busy Here\n", 486, "Busy Here"),
            ("SIP/2.0 603\r\n", 603, ""),
            // RFC 3420 §2: headers may follow the status line
            (
                "SIP/2.0 603 Declined\r\nTo: <sip:alice@atlanta.example.com>;tag=42\r\n"
                    + "From: <sip:bob@biloxi.example.com>;tag=314159\r\nContent-Length: 0\r\n\r\n",
                603, "Declined"
            )
        ])
    func parse(_ body: String, _ status: Int, _ reason: String) throws {
        let frag = try SIPFrag.parse(Array(body.utf8))
        #expect(frag == SIPFrag(status: status, reason: reason))
    }

    @Test(
        "no SIP status line",
        arguments: [
            "", "\r\n", "SIP/2.0", "HTTP/1.1 200 OK\r\n", "SIP/2.0 2000 OK\r\n", "SIP/2.0 20 OK\r\n",
            "SIP/2.0 099 Low\r\n", "SIP/2.0 700 High\r\n", "SIP/2.0 abc OK\r\n",
            "INVITE sip:bob@example.com SIP/2.0\r\n",
            "\r\nSIP/2.0 200 OK\r\n", "SIP/3.0 200 OK\r\n"
        ])
    func junk(_ body: String) {
        let error = #expect(throws: SIPParseError.self) { try SIPFrag.parse(Array(body.utf8)) }
        #expect(error?.status == 400)
    }

    @Test func serialisesTheStatusLine() throws {
        #expect(SIPFrag(status: 180, reason: "Ringing").serialize() == Array("SIP/2.0 180 Ringing\r\n".utf8))
        let frag = SIPFrag(status: 486, reason: "Busy Here")
        #expect(try SIPFrag.parse(frag.serialize()) == frag)
        #expect(SIPFrag.contentType == "message/sipfrag;version=2.0")
    }
}

struct SubscriptionStateUnitTests {
    @Test(
        "parse and serialise",
        arguments: [
            ("active;expires=60", SubscriptionState(.active, expires: 60), "active;expires=60"),
            ("active", SubscriptionState(.active), "active"),
            ("pending;expires=600", SubscriptionState(.pending, expires: 600), "pending;expires=600"),
            (
                "terminated;reason=noresource", SubscriptionState(.terminated, reason: "noresource"),
                "terminated;reason=noresource"
            ),
            (
                " Terminated ; reason=timeout ; retry-after=30", SubscriptionState(.terminated, reason: "timeout"),
                "terminated;reason=timeout"
            ),
            ("waiting;expires=5", SubscriptionState(.other("waiting"), expires: 5), "waiting;expires=5")
        ])
    func parse(_ text: String, _ expected: SubscriptionState, _ written: String) throws {
        let state = try SubscriptionState.parse(text)
        #expect(state == expected)
        #expect(state.serialize() == written)
    }

    @Test("rejected with 400", arguments: ["", ";expires=60", "active terminated", "active;", "act ive"])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try SubscriptionState.parse(text) }
        #expect(error?.status == 400)
    }
}

struct EventHeaderUnitTests {
    @Test(
        "parse and serialise",
        arguments: [
            ("refer", EventHeader(package: "refer"), "refer"),
            ("refer;id=93809823", EventHeader(package: "refer", id: "93809823"), "refer;id=93809823"),
            (" refer ; id=7 ", EventHeader(package: "refer", id: "7"), "refer;id=7"),
            ("presence;foo=bar", EventHeader(package: "presence"), "presence"),
            ("dialog;id=a1;x", EventHeader(package: "dialog", id: "a1"), "dialog;id=a1")
        ])
    func parse(_ text: String, _ expected: EventHeader, _ written: String) throws {
        let event = try EventHeader.parse(text)
        #expect(event == expected)
        #expect(event.serialize() == written)
    }

    @Test("rejected with 400", arguments: ["", ";id=1", "refer junk", "refer;", "re fer"])
    func rejected(_ text: String) {
        let error = #expect(throws: SIPParseError.self) { try EventHeader.parse(text) }
        #expect(error?.status == 400)
    }
}

/// RFC 3515 §4.2's REFER and first NOTIFY, read through the message accessors (compact
/// forms `r`, `b` and `o` included).
struct TransferMessageUnitTests {
    static let refer = """
        REFER sip:b@atlanta.example.com SIP/2.0\r
        Via: SIP/2.0/UDP agenta.atlanta.example.com;branch=z9hG4bK2293940223\r
        To: <sip:b@atlanta.example.com>\r
        From: <sip:a@atlanta.example.com>;tag=193402342\r
        Call-ID: 898234234@agenta.atlanta.example.com\r
        CSeq: 93809823 REFER\r
        Max-Forwards: 70\r
        r: <sip:c@atlanta.example.com?Replaces=12345%40192.168.118.3%3Bto-tag%3D12345%3Bfrom-tag%3D5FFE-3994>\r
        b: <sip:a@atlanta.example.com>\r
        Contact: sip:a@atlanta.example.com\r
        Content-Length: 0\r
        \r

        """

    static let notify = """
        NOTIFY sip:a@atlanta.example.com SIP/2.0\r
        Via: SIP/2.0/UDP agentb.atlanta.example.com;branch=z9hG4bK9922ef992-25\r
        To: <sip:a@atlanta.example.com>;tag=193402342\r
        From: <sip:b@atlanta.example.com>;tag=4992881234\r
        Call-ID: 898234234@agenta.atlanta.example.com\r
        CSeq: 1993402 NOTIFY\r
        Max-Forwards: 70\r
        o: refer;id=93809823\r
        Subscription-State: active;expires=60\r
        Contact: sip:b@atlanta.example.com\r
        Content-Type: message/sipfrag;version=2.0\r
        Content-Length: 20\r
        \r
        SIP/2.0 100 Trying\r

        """

    @Test func referCarriesItsTargetReferrerAndReplaces() throws {
        let m = try SIPMessage.parse(Array(Self.refer.utf8))
        let target = try #require(m.referTo)
        #expect(target.uri.user == "c" && target.uri.host == "atlanta.example.com")
        #expect(
            try Replaces.fromURIHeaders(target.uri.headers)
                == Replaces(callID: "12345@192.168.118.3", toTag: "12345", fromTag: "5FFE-3994"))
        #expect(m.referredBy?.uri.user == "a")
        #expect(m.event == nil && m.subscriptionState == nil)
    }

    @Test func notifyCarriesEventStateAndSipfrag() throws {
        let m = try SIPMessage.parse(Array(Self.notify.utf8))
        #expect(m.event == EventHeader(package: "refer", id: "93809823"))
        #expect(m.subscriptionState == SubscriptionState(.active, expires: 60))
        #expect(try SIPFrag.parse(m.body) == SIPFrag(status: 100, reason: "Trying"))
    }
}
