import Testing

@testable import DNS

/// The answer reader and the cache, on bytes and times the tests make.
struct DNSMessageTests {
    /// A response to `question` with `answers` (name, type, ttl, rdata); names as labels.
    static func message(
        question: String, qtype: UInt16, answers: [(name: [UInt8], type: UInt16, ttl: UInt32, data: [UInt8])]
    ) -> [UInt8] {
        var m: [UInt8] = [0x12, 0x34, 0x81, 0x80, 0, 1, 0, UInt8(answers.count), 0, 0, 0, 0]
        m += name(question) + [UInt8(qtype >> 8), UInt8(qtype & 0xFF), 0, 1]
        for a in answers {
            m += a.name + [UInt8(a.type >> 8), UInt8(a.type & 0xFF), 0, 1]
            m += [UInt8(a.ttl >> 24), UInt8((a.ttl >> 16) & 0xFF), UInt8((a.ttl >> 8) & 0xFF), UInt8(a.ttl & 0xFF)]
            m += [UInt8(a.data.count >> 8), UInt8(a.data.count & 0xFF)] + a.data
        }
        return m
    }

    static func name(_ text: String) -> [UInt8] {
        text.split(separator: ".").flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } + [0]
    }

    /// A pointer to the question's name (offset 12).
    static let toQuestion: [UInt8] = [0xC0, 12]

    @Test func srvWithCompressedNamesAndTheSmallestTTL() throws {
        let srv1: [UInt8] = [0, 10, 0, 1, 0x13, 0xC4] + Self.name("a.example")
        // "b" + pointer into the question ("example")
        let srv2: [UInt8] = [0, 20, 0, 3, 0x13, 0xC5] + [1, 0x62, 0xC0, 22]
        let m = Self.message(
            question: "_sip._udp.example", qtype: 33,
            answers: [(Self.toQuestion, 33, 300, srv1), (Self.toQuestion, 33, 120, srv2)])
        let r = try DNSMessage.records(of: .srv, in: m)
        #expect(r.ttl == 120)
        #expect(
            r.srv == [
                SRVRecord(priority: 10, weight: 1, port: 5060, target: "a.example"),
                SRVRecord(priority: 20, weight: 3, port: 5061, target: "b.example")
            ])
    }

    @Test func naptrFields() throws {
        let data: [UInt8] = [0, 10, 0, 50, 1, 0x53, 7] + Array("SIP+D2U".utf8) + [0] + Self.name("_sip._udp.example")
        let r = try DNSMessage.records(
            of: .naptr, in: Self.message(question: "example", qtype: 35, answers: [(Self.toQuestion, 35, 60, data)]))
        #expect(
            r.naptr == [
                NAPTRRecord(order: 10, preference: 50, flags: "S", service: "SIP+D2U", replacement: "_sip._udp.example")
            ])
    }

    @Test func addressesThroughACNAME() throws {
        let m = Self.message(
            question: "www.example", qtype: 1,
            answers: [
                (Self.toQuestion, 5, 30, Self.name("host.example")),
                (Self.name("host.example"), 1, 600, [192, 0, 2, 1]),
                (Self.name("host.example"), 28, 600, [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
            ])
        let r = try DNSMessage.records(of: .a, in: m)
        #expect(r.addresses == ["192.0.2.1"] && r.ttl == 30)
        #expect(try DNSMessage.records(of: .aaaa, in: m).addresses == ["2001:db8::1"])
    }

    @Test(arguments: [
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1] as [UInt8], "2001:db8::1:0:0:1"),
        ([UInt8](repeating: 0, count: 15) + [1], "::1"),
        ([0xfe, 0x80] + [UInt8](repeating: 0, count: 14), "fe80::"),
        ([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8] as [UInt8], "1:2:3:4:5:6:7:8")
    ])
    func ipv6Text(_ bytes: [UInt8], _ text: String) {
        #expect(DNSMessage.ipv6Text(bytes) == text)
    }

    @Test func brokenMessagesAreRefused() {
        let good = Self.message(question: "example", qtype: 1, answers: [(Self.toQuestion, 1, 60, [192, 0, 2, 1])])
        for cut in [5, 20, good.count - 2] {
            #expect(throws: DNSFailure.malformedAnswer) { try DNSMessage.records(of: .a, in: Array(good.prefix(cut))) }
        }
        // A name that points at itself.
        var loop = Self.message(
            question: "example", qtype: 33, answers: [(Self.toQuestion, 33, 60, [0, 1, 0, 1, 0, 1, 0xC0, 0])])
        let at = loop.count - 2
        loop[at] = 0xC0
        loop[at + 1] = UInt8(at)
        #expect(throws: DNSFailure.malformedAnswer) { try DNSMessage.records(of: .srv, in: loop) }
        #expect(throws: DNSFailure.noData) { try DNSMessage.records(of: .aaaa, in: good) }
    }

    // MARK: Cache

    @Test func cacheKeepsAnswersForTheirTTLAndFailuresForTheNegativeTTL() {
        var c = DNSCache(negativeTTL: 30)
        let q = DNSQuestion("a.example", .a), nx = DNSQuestion("nosuch.example", .a),
            zero = DNSQuestion("z.example", .a)
        c.store(.success(DNSRecords([.a("192.0.2.1")], ttl: 10)), for: q, now: 100)
        c.store(.failure(.noSuchName), for: nx, now: 100)
        c.store(.success(DNSRecords([.a("192.0.2.2")], ttl: 0)), for: zero, now: 100)
        #expect(c.answer(for: q, now: 109.9) != nil)
        #expect(c.answer(for: q, now: 110) == nil)
        #expect(c.answer(for: nx, now: 129) == .failure(.noSuchName))
        #expect(c.answer(for: nx, now: 130) == nil)
        #expect(c.answer(for: zero, now: 100) == nil)
        #expect(c.answer(for: DNSQuestion("A.Example.", .a), now: 105) != nil)
        c.store(.failure(.resolverUnavailable("closed")), for: DNSQuestion("x.example", .a), now: 100)
        #expect(c.answer(for: DNSQuestion("x.example", .a), now: 100) == nil)
    }

    @Test func cacheStaysWithinItsCapacity() {
        var c = DNSCache(negativeTTL: 30, capacity: 100)
        for i in 0..<1000 { c.store(.failure(.noData), for: DNSQuestion("n\(i).example", .a), now: Double(i)) }
        #expect(c.count <= 100)
        #expect(c.answer(for: DNSQuestion("n999.example", .a), now: 999) == .failure(.noData))
    }
}
