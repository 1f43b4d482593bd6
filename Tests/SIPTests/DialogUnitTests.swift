import Testing

@testable import SIP

private func parse(_ lines: [String], body: String = "") throws -> SIPMessage {
    let text = lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    return try SIPMessage.parse(Array(text.utf8))
}

/// Alice's INVITE as Bob receives it, through two record-routing proxies (p2 next to Bob).
private func invite(
    recordRoute: [String] = ["Record-Route: <sip:p2.biloxi.example.com;lr>, <sip:p1.atlanta.example.com;lr>"],
    contact: String? = "Contact: <sip:alice@pc33.atlanta.example.com>"
) throws -> SIPMessage {
    var lines = [
        "INVITE sip:bob@biloxi.example.com SIP/2.0",
        "Via: SIP/2.0/UDP p2.biloxi.example.com;branch=z9hG4bK2",
        "Via: SIP/2.0/UDP p1.atlanta.example.com;branch=z9hG4bK1, SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds",
        "Max-Forwards: 68",
        "From: Alice <sip:alice@atlanta.example.com>;tag=1928301774",
        "To: Bob <sip:bob@biloxi.example.com>",
        "Call-ID: a84b4c76e66710@pc33.atlanta.example.com",
        "CSeq: 314159 INVITE"
    ]
    if let contact { lines.append(contact) }
    lines += recordRoute
    return try parse(lines)
}

/// Bob's 200 OK as Alice receives it.
private func ok(
    recordRoute: [String] = ["Record-Route: <sip:p2.biloxi.example.com;lr>, <sip:p1.atlanta.example.com;lr>"],
    contact: String? = "Contact: <sip:bob@192.0.2.4>"
) throws -> SIPMessage {
    var lines = [
        "SIP/2.0 200 OK",
        "Via: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds",
        "From: Alice <sip:alice@atlanta.example.com>;tag=1928301774",
        "To: Bob <sip:bob@biloxi.example.com>;tag=a6c85cf",
        "Call-ID: a84b4c76e66710@pc33.atlanta.example.com",
        "CSeq: 314159 INVITE"
    ]
    if let contact { lines.append(contact) }
    lines += recordRoute
    return try parse(lines)
}

private let aliceContact = SIPURI(user: "alice", host: "pc33.atlanta.example.com")
private let bobContact = SIPURI(user: "bob", host: "192.0.2.4")

private func uacDialog() throws -> Dialog {
    try #require(Dialog.uac(request: try invite(), response: try ok(), localContact: aliceContact))
}

private func uasDialog() throws -> Dialog {
    try #require(Dialog.uas(request: try invite(), localTag: "a6c85cf", localContact: bobContact))
}

/// An in-dialog request or response with the given tags.
private func inDialog(
    request: Bool, method: String = "BYE", cseq: UInt32 = 1, callID: String = "a84b4c76e66710@pc33.atlanta.example.com",
    fromTag: String?, toTag: String?, contact: String? = nil
) -> SIPMessage {
    var m =
        request
        ? SIPMessage.request(method, SIPURI(host: "example.com"))
        : SIPMessage(startLine: .response(status: 200, reason: "OK"))
    m.addHeader(.via, "SIP/2.0/UDP x.example.com;branch=z9hG4bKm")
    m.addHeader(.from, "<sip:f@example.com>" + (fromTag.map { ";tag=" + $0 } ?? ""))
    m.addHeader(.to, "<sip:t@example.com>" + (toTag.map { ";tag=" + $0 } ?? ""))
    m.addHeader(.callID, callID)
    m.addHeader(.cseq, "\(cseq) \(method)")
    if let contact { m.addHeader(.contact, contact) }
    return m
}

struct DialogCreationUnitTests {
    @Test func uacFromInviteAnd200() throws {
        let d = try uacDialog()
        #expect(d.callID == "a84b4c76e66710@pc33.atlanta.example.com")
        #expect(d.localTag == "1928301774")
        #expect(d.remoteTag == "a6c85cf")
        #expect(d.localAddress == (try NameAddress.parse("Alice <sip:alice@atlanta.example.com>")))
        #expect(d.remoteAddress == (try NameAddress.parse("Bob <sip:bob@biloxi.example.com>")))
        #expect(d.localSequence == 314159)
        #expect(d.remoteSequence == nil)
        #expect(d.remoteTarget == bobContact)
        // §12.1.2: the response's Record-Route, reversed.
        #expect(d.routeSet.map(\.uri.host) == ["p1.atlanta.example.com", "p2.biloxi.example.com"])
        #expect(d.nextHop.host == "p1.atlanta.example.com")
        #expect(d.localContact == aliceContact)
    }

    @Test(
        "UAC route set is the reverse of every Record-Route value, across lines",
        arguments: [
            ([String](), [String]()),
            (["Record-Route: <sip:only.example.com;lr>"], ["only.example.com"]),
            (
                [
                    "Record-Route: <sip:a.example.com;lr>",
                    "Record-Route: <sip:b.example.com;lr>, <sip:c.example.com;lr>"
                ],
                ["c.example.com", "b.example.com", "a.example.com"]
            )
        ])
    func uacRouteSet(_ recordRoute: [String], _ hosts: [String]) throws {
        let d = try #require(
            Dialog.uac(request: try invite(), response: try ok(recordRoute: recordRoute), localContact: aliceContact))
        #expect(d.routeSet.map(\.uri.host) == hosts)
        #expect(d.nextHop == (hosts.isEmpty ? bobContact : d.routeSet[0].uri))
    }

    @Test func uacTargetFallsBackToTheRequestURIWithoutContact() throws {
        let d = try #require(
            Dialog.uac(request: try invite(), response: try ok(contact: nil), localContact: aliceContact))
        #expect(d.remoteTarget == (try SIPURI.parse("sip:bob@biloxi.example.com")))
    }

    @Test func uacNeedsOurFromTag() throws {
        var request = try invite()
        request.setHeader(.from, "Alice <sip:alice@atlanta.example.com>")
        #expect(Dialog.uac(request: request, response: try ok(), localContact: aliceContact) == nil)
    }

    @Test func uasFromInvite() throws {
        let d = try uasDialog()
        #expect(d.callID == "a84b4c76e66710@pc33.atlanta.example.com")
        #expect(d.localTag == "a6c85cf")
        #expect(d.remoteTag == "1928301774")
        #expect(d.localAddress == (try NameAddress.parse("Bob <sip:bob@biloxi.example.com>")))
        #expect(d.remoteAddress == (try NameAddress.parse("Alice <sip:alice@atlanta.example.com>")))
        #expect(d.remoteSequence == 314159)
        #expect((1...10_000).contains(d.localSequence))
        #expect(d.remoteTarget == aliceContact)
        // §12.1.1: Record-Route in order.
        #expect(d.routeSet.map(\.uri.host) == ["p2.biloxi.example.com", "p1.atlanta.example.com"])
        #expect(d.localContact == bobContact)
    }

    @Test func uasWithoutContactTargetsFrom() throws {
        let d = try #require(
            Dialog.uas(request: try invite(recordRoute: [], contact: nil), localTag: "t", localContact: bobContact))
        #expect(d.remoteTarget == (try SIPURI.parse("sip:alice@atlanta.example.com")))
        #expect(d.routeSet.isEmpty)
    }
}

struct DialogRequestUnitTests {
    @Test func uacRequestsAreLooselyRouted() throws {
        var d = try uacDialog()
        let bye = d.makeRequest("BYE")
        #expect(bye.requestURI == bobContact)
        #expect(bye.method == "BYE")
        #expect(bye.cseq == CSeq(314160, "BYE"))
        #expect(d.localSequence == 314160)
        #expect(bye.from?.tag == "1928301774")
        #expect(bye.from?.uri == (try SIPURI.parse("sip:alice@atlanta.example.com")))
        #expect(bye.to?.tag == "a6c85cf")
        #expect(bye.callID == d.callID)
        #expect(bye.maxForwards == 70)
        #expect(bye.values(.route) == ["<sip:p1.atlanta.example.com;lr>", "<sip:p2.biloxi.example.com;lr>"])
        #expect(bye[.via] == nil)
    }

    @Test(
        "CSeq: new requests increment, ACK and CANCEL reuse the given number",
        arguments: [
            // method, explicit cseq, CSeq written, localSequence after
            ("INFO", nil, 314160, 314160),
            ("UPDATE", nil, 314160, 314160),
            ("INVITE", nil, 314160, 314160),
            ("ACK", 314159, 314159, 314159),
            ("CANCEL", 314159, 314159, 314159)
        ] as [(String, UInt32?, UInt32, UInt32)])
    func sequence(_ method: String, _ explicit: UInt32?, _ written: UInt32, _ after: UInt32) throws {
        var d = try uacDialog()
        let m = d.makeRequest(method, cseq: explicit)
        #expect(m.cseq == CSeq(written, method))
        #expect(d.localSequence == after)
    }

    @Test func successiveRequestsCountUp() throws {
        var d = try uacDialog()
        let numbers = ["INFO", "ACK", "UPDATE", "BYE"].map { method in
            d.makeRequest(method, cseq: method == "ACK" ? 314159 : nil).cseq?.sequence
        }
        #expect(numbers == [314160, 314159, 314161, 314162])
    }

    @Test func uasRequestsSwapTheTags() throws {
        var d = try uasDialog()
        let start = d.localSequence
        let bye = d.makeRequest("BYE")
        #expect(bye.requestURI == aliceContact)
        #expect(bye.from == (try NameAddress.parse("Bob <sip:bob@biloxi.example.com>;tag=a6c85cf")))
        #expect(bye.to == (try NameAddress.parse("Alice <sip:alice@atlanta.example.com>;tag=1928301774")))
        #expect(bye.cseq == CSeq(start + 1, "BYE"))
        #expect(bye.values(.route) == ["<sip:p2.biloxi.example.com;lr>", "<sip:p1.atlanta.example.com;lr>"])
    }

    @Test(
        "strict routing (§12.2.1.1): a first route without ;lr becomes the Request-URI",
        arguments: [
            // route set, Request-URI, Route values
            (["<sip:strict.example.com>"], "sip:strict.example.com", ["<sip:bob@192.0.2.4>"]),
            (
                ["<sip:strict.example.com;transport=udp>", "<sip:p2.example.com;lr>"],
                "sip:strict.example.com;transport=udp",
                ["<sip:p2.example.com;lr>", "<sip:bob@192.0.2.4>"]
            ),
            (
                ["<sip:loose.example.com;lr>", "<sip:strict.example.com>"], "sip:bob@192.0.2.4",
                ["<sip:loose.example.com;lr>", "<sip:strict.example.com>"]
            ),
            ([], "sip:bob@192.0.2.4", [])
        ])
    func routing(_ routeSet: [String], _ requestURI: String, _ routes: [String]) throws {
        var d = try uacDialog()
        d.routeSet = try routeSet.map { try NameAddress.parse($0) }
        let m = d.makeRequest("BYE")
        #expect(m.requestURI == (try SIPURI.parse(requestURI)))
        #expect(m.values(.route) == routes)
        #expect(d.routeSet.count == routeSet.count, "the dialog's route set is not changed")
        #expect(d.remoteTarget == bobContact)
    }

    /// Found by fuzz-sip-session: a Contact of <sip:peer@host?5070> made a BYE our own
    /// parser refuses.
    @Test(
        "a remote target's URI headers stay out of the Request-URI",
        arguments: [
            "<sip:bob@192.0.2.4?subject=x>", "<sip:bob@192.0.2.4?5070>"
        ])
    func targetHeadersDropped(_ contact: String) throws {
        var d = try uacDialog()
        d.remoteTarget = try NameAddress.parse(contact).uri
        var m = d.makeRequest("BYE")
        #expect(m.requestURI?.headers == nil)
        #expect(m.requestURI?.host == "192.0.2.4")
        m.prependHeader(
            .via,
            Via(transport: "UDP", host: "pc33.atlanta.example.com", port: nil, branch: SIPIdentifiers.branch())
                .serialize())
        #expect(throws: Never.self) { try SIPMessage.parse(m.serialize()) }
    }

    @Test func madeRequestSerialisesAndParses() throws {
        var d = try uacDialog()
        var m = d.makeRequest("BYE")
        m.prependHeader(
            .via,
            Via(transport: "UDP", host: "pc33.atlanta.example.com", port: nil, branch: SIPIdentifiers.branch())
                .serialize())
        let back = try SIPMessage.parse(m.serialize())
        #expect(back.serialize() == m.serialize())
        #expect(back.headers.filter { $0.name != .contentLength } == m.headers)
        #expect(d.matches(inDialog(request: false, fromTag: "1928301774", toTag: "a6c85cf")))
    }
}

struct DialogMatchingUnitTests {
    @Test(
        "matches (§12.2.2): Call-ID, our tag and theirs",
        arguments: [
            // request?, Call-ID, From tag, To tag, matches
            (true, "a84b4c76e66710@pc33.atlanta.example.com", "1928301774", "a6c85cf", true),
            (true, "other@pc33.atlanta.example.com", "1928301774", "a6c85cf", false),
            (true, "a84b4c76e66710@pc33.atlanta.example.com", "9999", "a6c85cf", false),
            (true, "a84b4c76e66710@pc33.atlanta.example.com", "1928301774", "9999", false),
            (true, "a84b4c76e66710@pc33.atlanta.example.com", "1928301774", nil, false),
            (true, "a84b4c76e66710@pc33.atlanta.example.com", nil, "a6c85cf", false),
            // Incoming requests carry our tag in To; responses to ours carry it in From.
            (true, "a84b4c76e66710@pc33.atlanta.example.com", "a6c85cf", "1928301774", false),
            (false, "a84b4c76e66710@pc33.atlanta.example.com", "a6c85cf", "1928301774", true),
            (false, "a84b4c76e66710@pc33.atlanta.example.com", "a6c85cf", "other", false),
            (false, "a84b4c76e66710@pc33.atlanta.example.com", "1928301774", "a6c85cf", false),
            (false, "A84B4C76E66710@pc33.atlanta.example.com", "a6c85cf", "1928301774", false)
        ] as [(Bool, String, String?, String?, Bool)])
    func matches(_ request: Bool, _ callID: String, _ fromTag: String?, _ toTag: String?, _ expected: Bool) throws {
        // The UAS dialog: local tag a6c85cf, remote tag 1928301774.
        let d = try uasDialog()
        #expect(d.matches(inDialog(request: request, callID: callID, fromTag: fromTag, toTag: toTag)) == expected)
    }

    @Test("a dialog without a remote tag yet accepts any remote tag", arguments: ["x", "y"] as [String?] + [nil])
    func earlyDialog(_ remote: String?) throws {
        var d = try uasDialog()
        d.remoteTag = nil
        #expect(d.matches(inDialog(request: true, fromTag: remote, toTag: "a6c85cf")))
        #expect(!d.matches(inDialog(request: true, fromTag: remote, toTag: "other")))
    }

    @Test(
        "acceptRemoteSequence: lower (or equal) CSeq refused, ACK/CANCEL not checked",
        arguments: [
            // steps of (method, cseq, accepted, remoteSequence after); the UAS dialog starts at 314159
            [("BYE", 5, false, 314159 as UInt32?)],
            [("INFO", 314159, false, 314159)],
            [("INFO", 314160, true, 314160), ("BYE", 314160, false, 314160), ("BYE", 314170, true, 314170)],
            [("ACK", 1, true, 314159), ("CANCEL", 2, true, 314159)],
            [("UPDATE", 4_294_967_295, true, 4_294_967_295), ("BYE", 1, false, 4_294_967_295)]
        ] as [[(String, UInt32, Bool, UInt32?)]])
    func remoteSequence(_ steps: [(String, UInt32, Bool, UInt32?)]) throws {
        var d = try uasDialog()
        for (method, cseq, accepted, after) in steps {
            let m = inDialog(request: true, method: method, cseq: cseq, fromTag: "1928301774", toTag: "a6c85cf")
            let result = d.acceptRemoteSequence(m)
            #expect(result == accepted, "\(method) \(cseq)")
            #expect(d.remoteSequence == after, "\(method) \(cseq)")
        }
    }

    @Test func firstRemoteRequestSetsTheSequenceOfAUACDialog() throws {
        var d = try uacDialog()
        #expect(d.remoteSequence == nil)
        let first = d.acceptRemoteSequence(inDialog(request: true, cseq: 1, fromTag: "a6c85cf", toTag: "1928301774"))
        #expect(first)
        #expect(d.remoteSequence == 1)
        var noCSeq = inDialog(request: true, cseq: 2, fromTag: "a6c85cf", toTag: "1928301774")
        noCSeq.removeHeaders(.cseq)
        let second = d.acceptRemoteSequence(noCSeq)
        #expect(!second)
        #expect(d.remoteSequence == 1)
    }

    @Test(
        "refreshTarget takes the first Contact, and nothing without one",
        arguments: [
            ("<sip:bob@198.51.100.7:5070;transport=tcp>", "sip:bob@198.51.100.7:5070;transport=tcp"),
            ("<sip:bob@198.51.100.8>, <sip:bob@198.51.100.9>", "sip:bob@198.51.100.8"),
            (nil, "sip:bob@192.0.2.4"),
            ("*", "sip:bob@192.0.2.4")
        ] as [(String?, String)])
    func refreshTarget(_ contact: String?, _ target: String) throws {
        var d = try uacDialog()
        d.refreshTarget(
            from: inDialog(
                request: true, method: "UPDATE", cseq: 9, fromTag: "a6c85cf", toTag: "1928301774", contact: contact))
        #expect(d.remoteTarget == (try SIPURI.parse(target)))
        #expect(d.makeRequest("BYE").requestURI == d.remoteTarget)
    }
}
