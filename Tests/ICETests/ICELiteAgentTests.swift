import IOCore
import SDP
import Testing

@testable import ICE

/// A browser (the full, controlling agent) sending checks to our lite agent.
struct Browser {
    /// Our (the gateway's) credentials, as our answer would carry them.
    static let gateway = ICECredentials(ufrag: "gwUf", pwd: "gatewayPasswordOf24char")
    /// The browser's, from its offer.
    static let browser = ICECredentials(ufrag: "brws", pwd: "browserPasswordOf24char")
    static let source = SocketAddress(host: "192.0.2.50", port: 54321)
    static let other = SocketAddress(host: "198.51.100.2", port: 40000)

    /// A Chrome-style Binding request: USERNAME "local:remote" from our side's view
    /// (ours first), GOOG-NETWORK-INFO, ICE-CONTROLLING, USE-CANDIDATE, PRIORITY,
    /// MESSAGE-INTEGRITY with our pwd, FINGERPRINT.
    static func check(
        username: String? = gateway.ufrag + ":" + browser.ufrag,
        key: String? = gateway.pwd,
        useCandidate: Bool = false,
        controlled: Bool = false,
        extra: [STUNAttribute] = [],
        fingerprint: Bool = true,
        type: STUNMessageType = .bindingRequest,
        transactionID: STUNTransactionID = .random()
    ) -> [UInt8] {
        var attributes: [STUNAttribute] = []
        if let username { attributes.append(.username(username)) }
        attributes.append(.other(type: STUNAttributeType(rawValue: 0xC057), value: [0x00, 0x01, 0x00, 0x0a]))
        attributes.append(
            controlled ? .iceControlled(tieBreaker: 42) : .iceControlling(tieBreaker: 0x1234_5678_9abc_def0))
        if useCandidate { attributes.append(.useCandidate) }
        attributes.append(.priority(1_853_817_087))
        attributes += extra
        let message = STUNMessage(type: type, transactionID: transactionID, attributes: attributes)
        return try! message.serialized(integrityKey: key.map { Array($0.utf8) }, fingerprint: fingerprint)
    }

    static func agent(now: Double = 0, configuration: ICELiteAgent.Configuration = .init()) -> ICELiteAgent {
        ICELiteAgent(local: gateway, remote: browser, now: now, configuration: configuration)
    }
}

@Suite("ICE-lite agent (RFC 8445 §2.5, §7.3; RFC 7675)")
struct ICELiteAgentTests {
    @Test("a Chrome-style check is answered and nominates the pair")
    func chromeCheck() throws {
        var agent = Browser.agent()
        let tid = STUNTransactionID.random()
        let reaction = agent.receive(
            Browser.check(useCandidate: true, transactionID: tid), from: Browser.source, now: 1)
        #expect(reaction.outcome == .answered)
        #expect(reaction.destination == Browser.source)
        #expect(reaction.nominated == Browser.source)
        #expect(agent.state == .connected(Browser.source))
        #expect(agent.selected == Browser.source)

        let bytes = try #require(reaction.response)
        let response = try STUNMessage.parse(bytes)
        #expect(response.type == .bindingSuccessResponse)
        #expect(response.transactionID == tid)
        #expect(response.xorMappedAddress == Browser.source)
        #expect(response.username == nil)
        #expect(STUNMessage.verifyMessageIntegrity(bytes, key: Array(Browser.gateway.pwd.utf8)) == .valid)
        #expect(STUNMessage.verifyFingerprint(bytes) == .valid)
        #expect(PacketKind(datagram: bytes) == .stun)

        // The same nomination again changes nothing.
        let again = agent.receive(Browser.check(useCandidate: true), from: Browser.source, now: 2)
        #expect(again.outcome == .answered)
        #expect(again.nominated == nil)
    }

    @Test("IPv6 source is mapped back in XOR-MAPPED-ADDRESS")
    func ipv6Source() throws {
        var agent = Browser.agent()
        let source = SocketAddress(host: "2001:db8::7", port: 61000)
        let reaction = agent.receive(Browser.check(), from: source, now: 0)
        #expect(reaction.outcome == .answered)
        #expect(try STUNMessage.parse(try #require(reaction.response)).xorMappedAddress == source)
        #expect(reaction.nominated == nil)
        #expect(agent.state == .checking)
    }

    static let rejections: [(String, [UInt8], STUNErrorCode, Bool)] = [
        (
            "wrong MESSAGE-INTEGRITY key", Browser.check(key: "notThePasswordAtAllReally", useCandidate: true),
            .unauthorized, false
        ),
        (
            "signed with the browser's pwd", Browser.check(key: Browser.browser.pwd, useCandidate: true), .unauthorized,
            false
        ),
        ("no MESSAGE-INTEGRITY", Browser.check(key: nil, useCandidate: true), .badRequest, false),
        ("no USERNAME", Browser.check(username: nil, useCandidate: true), .badRequest, false),
        (
            "someone else's ufrag", Browser.check(username: "xxxx:" + Browser.browser.ufrag, useCandidate: true),
            .unauthorized, false
        ),
        (
            "halves swapped",
            Browser.check(username: Browser.browser.ufrag + ":" + Browser.gateway.ufrag, useCandidate: true),
            .unauthorized, false
        ),
        (
            "another browser's ufrag", Browser.check(username: Browser.gateway.ufrag + ":zzzz", useCandidate: true),
            .unauthorized, false
        ),
        (
            "unknown comprehension-required attribute",
            Browser.check(
                useCandidate: true, extra: [.other(type: STUNAttributeType(rawValue: 0x0031), value: [1, 2])]),
            .unknownAttribute, true
        ),
        ("peer claims to be controlled", Browser.check(useCandidate: true, controlled: true), .roleConflict, true),
        (
            "unknown method",
            Browser.check(type: STUNMessageType(method: STUNMethod(rawValue: 0x003), messageClass: .request)),
            .badRequest, false
        )
    ]

    @Test("bad checks get the RFC's error and nominate nothing", arguments: ICELiteAgentTests.rejections)
    func rejected(name: String, datagram: [UInt8], code: STUNErrorCode, signed: Bool) throws {
        var agent = Browser.agent()
        let reaction = agent.receive(datagram, from: Browser.source, now: 1)
        #expect(reaction.outcome == .rejected(code), "\(name)")
        #expect(reaction.nominated == nil)
        #expect(agent.selected == nil)
        let bytes = try #require(reaction.response)
        let response = try STUNMessage.parse(bytes)
        #expect(response.type.messageClass == .errorResponse)
        #expect(response.errorCode == code)
        #expect(try STUNMessage.parse(datagram).transactionID == response.transactionID)
        #expect(STUNMessage.verifyFingerprint(bytes) == .valid)
        #expect(
            STUNMessage.verifyMessageIntegrity(bytes, key: Array(Browser.gateway.pwd.utf8))
                == (signed ? .valid : .absent))
        if code == .unknownAttribute {
            #expect(response.attribute(.unknownAttributes) == .unknownAttributes([STUNAttributeType(rawValue: 0x0031)]))
        }
        // Nothing counted as a valid check.
        let r1 = agent.checkTimeout(now: 100)
        #expect(r1)
    }

    static func damagedFingerprint() -> [UInt8] {
        var bytes = Browser.check(useCandidate: true)
        bytes[bytes.count - 1] ^= 0x01
        return bytes
    }

    static let drops: [(String, [UInt8], ICELiteAgent.DropReason)] = [
        ("bad FINGERPRINT", damagedFingerprint(), .badFingerprint),
        ("no FINGERPRINT", Browser.check(useCandidate: true, fingerprint: false), .missingFingerprint),
        ("a success response", Browser.check(type: .bindingSuccessResponse), .notARequest),
        (
            "a Binding indication", Browser.check(type: STUNMessageType(method: .binding, messageClass: .indication)),
            .notARequest
        ),
        ("garbage", [0x00, 0x01, 0x02], .malformed(.truncatedHeader(length: 3))),
        ("RTP", [0x80, 0x00] + [UInt8](repeating: 0, count: 30), .malformed(.notSTUN(firstByte: 0x80)))
    ]

    @Test("damaged and unanswerable datagrams are dropped silently", arguments: ICELiteAgentTests.drops)
    func dropped(name: String, datagram: [UInt8], reason: ICELiteAgent.DropReason) {
        var agent = Browser.agent()
        let reaction = agent.receive(datagram, from: Browser.source, now: 1)
        #expect(reaction.outcome == .dropped(reason), "\(name)")
        #expect(reaction.response == nil)
        #expect(reaction.nominated == nil)
        #expect(agent.state == .waiting)
    }

    @Test("a later nomination of another address replaces the selected pair")
    func nominationSwitches() {
        var agent = Browser.agent()
        let r2 = agent.receive(Browser.check(useCandidate: true), from: Browser.source, now: 1).nominated
        #expect(r2 == Browser.source)
        // A plain check from elsewhere is answered but selects nothing.
        let plain = agent.receive(Browser.check(), from: Browser.other, now: 2)
        #expect(plain.outcome == .answered && plain.nominated == nil)
        #expect(agent.selected == Browser.source)
        // USE-CANDIDATE from elsewhere moves media there.
        let r3 = agent.receive(Browser.check(useCandidate: true), from: Browser.other, now: 3).nominated
        #expect(r3 == Browser.other)
        #expect(agent.selected == Browser.other)
    }

    @Test("consent expires 30 s after the last check from the selected address, not before")
    func consentExpiry() {
        var agent = Browser.agent()
        _ = agent.receive(Browser.check(useCandidate: true), from: Browser.source, now: 10)
        // Consent checks every ~5 s (RFC 7675 §5.1 randomises 4-6 s) keep it alive.
        for t in stride(from: 15.0, through: 60, by: 5) {
            let r4 = agent.tick(now: t)
            #expect(r4 == nil)
            _ = agent.receive(Browser.check(), from: Browser.source, now: t)
        }
        // Checks from another address do not refresh consent for the selected one.
        _ = agent.receive(Browser.check(), from: Browser.other, now: 70)
        // A failed check does not either.
        _ = agent.receive(Browser.check(key: "wrongwrongwrongwrongwrong"), from: Browser.source, now: 75)
        let r5 = agent.tick(now: 89.9)
        #expect(r5 == nil)
        #expect(agent.selected == Browser.source)
        let r6 = agent.tick(now: 90)
        #expect(r6 == .consentExpired(Browser.source))
        #expect(agent.selected == nil)
        #expect(agent.state == .consentExpired)
        let r7 = agent.tick(now: 91)
        #expect(r7 == nil, "reported once")
        // A new nomination reconnects.
        let r8 = agent.receive(Browser.check(useCandidate: true), from: Browser.source, now: 95).nominated
        #expect(r8 == Browser.source)
        let r9 = agent.tick(now: 124)
        #expect(r9 == nil)
        let r10 = agent.tick(now: 125)
        #expect(r10 == .consentExpired(Browser.source))
    }

    @Test(
        "check timeout: a peer that never connects",
        arguments: [
            (nil as Double?, 5.0, false), (nil, 9.99, false), (nil, 10.0, true), (3.0, 20.0, false)
        ])
    func checkTimeout(validCheckAt: Double?, now: Double, fires: Bool) {
        var agent = Browser.agent(now: 0, configuration: .init(checkTimeout: 10))
        if let t = validCheckAt { _ = agent.receive(Browser.check(), from: Browser.source, now: t) }
        let r11 = agent.checkTimeout(now: now)
        #expect(r11 == fires)
        if fires {
            #expect(agent.state == .timedOut)
            let r12 = agent.checkTimeout(now: now + 1)
            #expect(!r12, "reported once")
        }
    }

    @Test("SOFTWARE is added when configured")
    func software() throws {
        var agent = Browser.agent(configuration: .init(software: "irisgw"))
        let reaction = agent.receive(Browser.check(), from: Browser.source, now: 0)
        #expect(try STUNMessage.parse(try #require(reaction.response)).attribute(.software) == .software("irisgw"))
    }
}

@Suite("ICE credentials and candidates")
struct ICECredentialsTests {
    @Test("random credentials have the RFC's character set and lengths, and differ")
    func randomCredentials() {
        let a = ICECredentials.random(), b = ICECredentials.random()
        #expect(a.isValidSyntax && b.isValidSyntax)
        #expect(a.ufrag.count == 8 && a.pwd.count == 24)
        #expect(a != b)
        #expect(ICECredentials.random(ufragLength: 4, pwdLength: 22).isValidSyntax)
        #expect(!ICECredentials(ufrag: "abc", pwd: String(repeating: "a", count: 22)).isValidSyntax)
        #expect(!ICECredentials(ufrag: "ab-c", pwd: String(repeating: "a", count: 22)).isValidSyntax)
        #expect(!ICECredentials(ufrag: "abcd", pwd: String(repeating: "a", count: 21)).isValidSyntax)
    }

    @Test(
        "host candidate lines (RFC 8839 §5.1, priority RFC 8445 §5.1.2)",
        arguments: [
            (
                ICECandidate(address: SocketAddress(host: "192.0.2.10", port: 40000)),
                "candidate:1 1 udp 2130706431 192.0.2.10 40000 typ host"
            ),
            (
                ICECandidate(
                    foundation: "2", address: SocketAddress(host: "2001:db8::1", port: 5004), localPreference: 65534),
                "candidate:2 1 udp 2130706175 2001:db8::1 5004 typ host"
            )
        ])
    func candidateLine(candidate: ICECandidate, line: String) throws {
        #expect(candidate.description == line)
        #expect("a=" + candidate.description == "a=" + line)
        // What a browser reads back from our answer, with the SDP module's parser.
        let parsed = try SDPCandidate.parse(String(line.dropFirst("candidate:".count)))
        #expect(parsed == candidate.sdpCandidate)
        #expect(parsed.address == candidate.address.host && Int(parsed.port) == candidate.address.port)
        #expect(parsed.priority == candidate.priority && parsed.type == "host")
    }

    @Test("host priority formula")
    func hostPriority() {
        #expect(ICECandidate.hostPriority() == 2_130_706_431)
        #expect(ICECandidate.hostPriority(localPreference: 0, component: 2) == 126 << 24 | 254)
    }
}

@Suite("RFC 7983 demultiplexing")
struct PacketDemuxTests {
    @Test(
        "first octet ranges",
        arguments: [
            (UInt8(0), PacketKind.stun), (1, .stun), (3, .stun), (4, .unknown), (15, .unknown),
            (16, .zrtp), (19, .zrtp), (20, .dtls), (22, .dtls), (63, .dtls), (64, .turnChannel),
            (79, .turnChannel), (80, .unknown), (127, .unknown), (128, .rtp), (144, .rtp), (191, .rtp),
            (192, .unknown), (255, .unknown)
        ])
    func ranges(byte: UInt8, kind: PacketKind) {
        #expect(PacketKind(firstByte: byte) == kind)
        #expect(PacketKind.isSTUN(firstByte: byte) == (kind == .stun))
        #expect(PacketKind.isDTLS(firstByte: byte) == (kind == .dtls))
        #expect(PacketKind.isRTP(firstByte: byte) == (kind == .rtp))
    }

    @Test("datagrams")
    func datagrams() {
        #expect(PacketKind(datagram: [UInt8]()) == .unknown)
        #expect(PacketKind(datagram: RFC5769.request) == .stun)
        #expect(PacketKind(datagram: [0x16, 0xfe, 0xfd]) == .dtls)  // DTLS 1.2 handshake
    }
}

@Suite("ICE-lite agent edge cases")
struct ICELiteAgentEdgeTests {
    @Test("a source that cannot be mapped is dropped and changes nothing")
    func unusableSource() {
        var agent = Browser.agent()
        let reaction = agent.receive(
            Browser.check(useCandidate: true), from: SocketAddress(host: "not-an-ip", port: 1), now: 1)
        #expect(reaction.outcome == .dropped(.unusableSource))
        #expect(reaction.nominated == nil)
        #expect(agent.state == .waiting)
    }
}
