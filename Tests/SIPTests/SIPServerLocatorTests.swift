import Testing

@testable import SIP

/// RFC 3263 locating and RFC 2782 ordering as plain values: a fake zone answers, randomness
/// is injected, no socket and no clock.
struct SIPServerLocatorTests {
    typealias Zone = [DNSQuestion: DNSAnswer]

    static func srv(_ records: [(UInt16, UInt16, UInt16, String)], ttl: UInt32 = 60) -> DNSAnswer {
        .success(
            DNSRecords(
                records.map { .srv(SRVRecord(priority: $0.0, weight: $0.1, port: $0.2, target: $0.3)) }, ttl: ttl))
    }

    static func naptr(_ records: [(UInt16, UInt16, String, String)]) -> DNSAnswer {
        .success(
            DNSRecords(
                records.map {
                    .naptr(NAPTRRecord(order: $0.0, preference: $0.1, flags: "s", service: $0.2, replacement: $0.3))
                }, ttl: 60))
    }

    static func a(_ addresses: String...) -> DNSAnswer { .success(DNSRecords(addresses.map { .a($0) }, ttl: 60)) }
    static func aaaa(_ addresses: String...) -> DNSAnswer { .success(DNSRecords(addresses.map { .aaaa($0) }, ttl: 60)) }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var destination: SIPDestination
        var preferred: SIPTargetTransport = .udp
        /// The transports the agent offers.
        var supported: Set<SIPTargetTransport> = [.udp, .tcp, .tls]
        var zone: Zone = [:]
        /// Targets as "transport:host:port", or the error's description.
        var expected: [String]
        /// The questions asked, in order ("NAPTR x", "SRV _sip._udp.x", ...).
        var asked: [String]? = nil
        var description: String { name }
    }

    /// Runs the machine against `zone` (a missing question is NXDOMAIN); the targets or the
    /// error, and every question asked.
    static func run(_ row: Row) -> (result: [String], asked: [String]) {
        var m = SIPServerLocator(
            row.destination, preferred: row.preferred, supported: row.supported, random: { $0.lowerBound })
        var step = m.start()
        var asked: [String] = []
        while true {
            switch step {
            case .done(let targets):
                return (targets.map { "\($0.transport.rawValue):\($0.address)" }, asked)
            case .failed(let error):
                return (["error: \(error)"], asked)
            case .lookup(let questions):
                asked += questions.map(\.description)
                var next: SIPServerLocator.Step?
                for q in questions { next = m.receive(q, row.zone[q] ?? .failure(.noSuchName)) ?? next }
                step = next!
            }
        }
    }

    static let rows: [Row] = [
        Row(
            name: "numeric IPv4: no DNS", destination: SIPDestination(host: "192.0.2.1"),
            expected: ["udp:192.0.2.1:5060"], asked: []),
        Row(
            name: "numeric IPv6 with port and transport=tcp",
            destination: SIPDestination(host: "[2001:db8::1]", port: 5070, transport: .tcp),
            expected: ["tcp:[2001:db8::1]:5070"], asked: []),
        Row(
            name: "numeric with transport=tls: port 5061",
            destination: SIPDestination(host: "192.0.2.1", transport: .tls),
            expected: ["tls:192.0.2.1:5061"], asked: []),
        Row(
            name: "numeric sips: TLS whatever transport= says",
            destination: SIPDestination(host: "192.0.2.1", transport: .tcp, secure: true),
            expected: ["tls:192.0.2.1:5061"], asked: []),
        Row(
            name: "numeric with transport=tls, an agent without TLS: unusable",
            destination: SIPDestination(host: "192.0.2.1", transport: .tls),
            supported: [.udp, .tcp],
            expected: ["error: 192.0.2.1: every target needs TLS, which this agent does not offer"], asked: []),
        Row(
            name: "explicit port: A/AAAA only", destination: SIPDestination(host: "pbx.example", port: 5080),
            zone: [
                DNSQuestion("pbx.example", .a): a("192.0.2.5"), DNSQuestion("pbx.example", .aaaa): .failure(.noData)
            ],
            expected: ["udp:192.0.2.5:5080"], asked: ["A pbx.example", "AAAA pbx.example"]),
        Row(
            name: "transport=tcp picks _sip._tcp directly",
            destination: SIPDestination(host: "pbx.example", transport: .tcp),
            zone: [
                DNSQuestion("_sip._tcp.pbx.example", .srv): srv([(10, 0, 5062, "b.pbx.example")]),
                DNSQuestion("b.pbx.example", .a): a("192.0.2.6"), DNSQuestion("b.pbx.example", .aaaa): .failure(.noData)
            ],
            expected: ["tcp:192.0.2.6:5062"],
            asked: ["SRV _sip._tcp.pbx.example", "A b.pbx.example", "AAAA b.pbx.example"]),
        Row(
            name: "NAPTR orders the services, SRV the targets, A before AAAA",
            destination: SIPDestination(host: "carrier.example"),
            zone: [
                DNSQuestion("carrier.example", .naptr): naptr([
                    (20, 10, "SIP+D2U", "_sip._udp.carrier.example"),
                    (10, 10, "SIP+D2T", "_sip._tcp.carrier.example"),
                    (30, 10, "E2U+sip", "ignored.example")
                ]),
                DNSQuestion("_sip._tcp.carrier.example", .srv): srv([(10, 0, 5060, "t.carrier.example")]),
                DNSQuestion("_sip._udp.carrier.example", .srv): srv([
                    (20, 0, 5070, "u2.carrier.example"), (10, 0, 5060, "u1.carrier.example")
                ]),
                DNSQuestion("t.carrier.example", .a): a("192.0.2.10"),
                DNSQuestion("t.carrier.example", .aaaa): aaaa("2001:db8::10"),
                DNSQuestion("u1.carrier.example", .a): a("192.0.2.11"),
                DNSQuestion("u1.carrier.example", .aaaa): .failure(.noData),
                DNSQuestion("u2.carrier.example", .a): a("192.0.2.12"),
                DNSQuestion("u2.carrier.example", .aaaa): .failure(.noData)
            ],
            expected: ["tcp:192.0.2.10:5060", "tcp:[2001:db8::10]:5060", "udp:192.0.2.11:5060", "udp:192.0.2.12:5070"],
            asked: [
                "NAPTR carrier.example", "SRV _sip._tcp.carrier.example", "SRV _sip._udp.carrier.example",
                "A t.carrier.example", "AAAA t.carrier.example", "A u1.carrier.example", "AAAA u1.carrier.example",
                "A u2.carrier.example", "AAAA u2.carrier.example"
            ]),
        Row(
            name: "no NAPTR: SRV for UDP and TCP, the preferred (tcp) first",
            destination: SIPDestination(host: "carrier.example"),
            preferred: .tcp,
            zone: [
                DNSQuestion("carrier.example", .naptr): .failure(.noData),
                DNSQuestion("_sip._udp.carrier.example", .srv): srv([(10, 0, 5060, "u.carrier.example")]),
                DNSQuestion("_sip._tcp.carrier.example", .srv): srv([(10, 0, 5060, "t.carrier.example")]),
                DNSQuestion("u.carrier.example", .a): a("192.0.2.21"),
                DNSQuestion("t.carrier.example", .a): a("192.0.2.22")
            ],
            expected: ["tcp:192.0.2.22:5060", "udp:192.0.2.21:5060"],
            asked: [
                "NAPTR carrier.example", "SRV _sip._tcp.carrier.example", "SRV _sip._udp.carrier.example",
                "A t.carrier.example", "AAAA t.carrier.example", "A u.carrier.example", "AAAA u.carrier.example"
            ]),
        Row(
            name: "no NAPTR, no SRV: A/AAAA of the host on 5060", destination: SIPDestination(host: "carrier.example"),
            zone: [
                DNSQuestion("carrier.example", .naptr): .failure(.noData),
                DNSQuestion("carrier.example", .a): a("192.0.2.30")
            ],
            expected: ["udp:192.0.2.30:5060"],
            asked: [
                "NAPTR carrier.example", "SRV _sip._udp.carrier.example", "SRV _sip._tcp.carrier.example",
                "A carrier.example", "AAAA carrier.example"
            ]),
        Row(
            name: "NXDOMAIN ends at NAPTR", destination: SIPDestination(host: "nosuch.example"),
            expected: ["error: nosuch.example: no such domain (NXDOMAIN)"], asked: ["NAPTR nosuch.example"]),
        Row(
            name: "a timeout ends at NAPTR", destination: SIPDestination(host: "slow.example"),
            zone: [DNSQuestion("slow.example", .naptr): .failure(.timeout)],
            expected: ["error: slow.example: no answer from the DNS server (timeout)"], asked: ["NAPTR slow.example"]),
        Row(
            name: "SERVFAIL on NAPTR falls through to SRV", destination: SIPDestination(host: "odd.example"),
            zone: [
                DNSQuestion("odd.example", .naptr): .failure(.serverFailure("SERVFAIL")),
                DNSQuestion("_sip._udp.odd.example", .srv): srv([(10, 0, 5090, "odd.example")]),
                DNSQuestion("odd.example", .a): a("192.0.2.40")
            ],
            expected: ["udp:192.0.2.40:5090"]),
        Row(
            name: "SRV '.': the service is not offered",
            destination: SIPDestination(host: "none.example", transport: .udp),
            zone: [DNSQuestion("_sip._udp.none.example", .srv): srv([(0, 0, 0, "")])],
            expected: ["error: none.example: SRV says SIP is not offered there"]),
        Row(
            name: "sips: only SIPS+D2T", destination: SIPDestination(host: "secure.example", secure: true),
            zone: [
                DNSQuestion("secure.example", .naptr): naptr([
                    (10, 10, "SIP+D2U", "_sip._udp.secure.example"),
                    (10, 20, "SIPS+D2T", "_sips._tcp.secure.example")
                ]),
                DNSQuestion("_sips._tcp.secure.example", .srv): srv([(10, 0, 5061, "tls.secure.example")]),
                DNSQuestion("tls.secure.example", .a): a("192.0.2.80")
            ],
            expected: ["tls:192.0.2.80:5061"],
            asked: [
                "NAPTR secure.example", "SRV _sips._tcp.secure.example", "A tls.secure.example",
                "AAAA tls.secure.example"
            ]),
        Row(
            name: "sips: an agent without TLS skips SIPS+D2T with its reason",
            destination: SIPDestination(host: "secure.example", secure: true),
            supported: [.udp, .tcp],
            zone: [
                DNSQuestion("secure.example", .naptr): naptr([
                    (10, 10, "SIP+D2U", "_sip._udp.secure.example"),
                    (10, 20, "SIPS+D2T", "_sips._tcp.secure.example")
                ]),
                DNSQuestion("_sips._tcp.secure.example", .srv): srv([(10, 0, 5061, "tls.secure.example")])
            ],
            expected: ["error: secure.example: every target needs TLS, which this agent does not offer"],
            asked: ["NAPTR secure.example", "SRV _sips._tcp.secure.example"]),
        Row(
            name: "NAPTR's TLS first, in its order", destination: SIPDestination(host: "mixed.example"),
            zone: [
                DNSQuestion("mixed.example", .naptr): naptr([
                    (10, 10, "SIPS+D2T", "_sips._tcp.mixed.example"),
                    (20, 10, "SIP+D2U", "_sip._udp.mixed.example")
                ]),
                DNSQuestion("_sips._tcp.mixed.example", .srv): srv([(10, 0, 5061, "s.mixed.example")]),
                DNSQuestion("_sip._udp.mixed.example", .srv): srv([(10, 0, 5060, "u.mixed.example")]),
                DNSQuestion("s.mixed.example", .a): a("192.0.2.51"), DNSQuestion("u.mixed.example", .a): a("192.0.2.50")
            ],
            expected: ["tls:192.0.2.51:5061", "udp:192.0.2.50:5060"]),
        Row(
            name: "a TLS target among others is skipped by an agent without TLS",
            destination: SIPDestination(host: "mixed.example"),
            supported: [.udp, .tcp],
            zone: [
                DNSQuestion("mixed.example", .naptr): naptr([
                    (10, 10, "SIPS+D2T", "_sips._tcp.mixed.example"),
                    (20, 10, "SIP+D2U", "_sip._udp.mixed.example")
                ]),
                DNSQuestion("_sips._tcp.mixed.example", .srv): srv([(10, 0, 5061, "s.mixed.example")]),
                DNSQuestion("_sip._udp.mixed.example", .srv): srv([(10, 0, 5060, "u.mixed.example")]),
                DNSQuestion("u.mixed.example", .a): a("192.0.2.50")
            ],
            expected: ["udp:192.0.2.50:5060"],
            asked: [
                "NAPTR mixed.example", "SRV _sips._tcp.mixed.example", "SRV _sip._udp.mixed.example",
                "A u.mixed.example", "AAAA u.mixed.example"
            ]),
        Row(
            name: "an SRV target without an address is left out",
            destination: SIPDestination(host: "half.example", transport: .udp),
            zone: [
                DNSQuestion("_sip._udp.half.example", .srv): srv([
                    (10, 0, 5060, "gone.half.example"), (20, 0, 5060, "up.half.example")
                ]),
                DNSQuestion("up.half.example", .a): a("192.0.2.60")
            ],
            expected: ["udp:192.0.2.60:5060"]),
        Row(
            name: "no SRV target has an address", destination: SIPDestination(host: "dark.example", transport: .udp),
            zone: [DNSQuestion("_sip._udp.dark.example", .srv): srv([(10, 0, 5060, "gone.dark.example")])],
            expected: ["error: dark.example: no A or AAAA record"]),
        Row(
            name: "explicit port and NXDOMAIN", destination: SIPDestination(host: "nosuch.example", port: 5060),
            expected: ["error: nosuch.example: no such domain (NXDOMAIN)"]),
        Row(
            name: "names compare without case and trailing dot",
            destination: SIPDestination(host: "PBX.Example.", port: 5080),
            zone: [DNSQuestion("pbx.example", .a): a("192.0.2.70")],
            expected: ["udp:192.0.2.70:5080"], asked: ["A pbx.example", "AAAA pbx.example"])
    ]

    @Test(arguments: rows)
    func locates(_ row: Row) {
        let (result, asked) = Self.run(row)
        #expect(result == row.expected)
        if let expectedAsked = row.asked { #expect(asked == expectedAsked) }
    }

    @Test func skippedTargetsSayWhy() {
        var m = SIPServerLocator(SIPDestination(host: "mixed.example", transport: .tls), supported: [.udp, .tcp])
        guard case .lookup(let qs) = m.start() else { Issue.record("expected a lookup"); return }
        let step = m.receive(qs[0], Self.srv([(10, 0, 5061, "s.mixed.example")]))
        #expect(step == .failed(.unsupportedTransport("mixed.example", .tls)))
        #expect(m.skipped.map(\.reason) == ["needs TLS, not offered"])
    }

    // MARK: RFC 2782 order

    struct OrderRow: Sendable, CustomStringConvertible {
        var name: String
        var records: [(UInt16, UInt16, String)]
        /// The draws the random source returns, in turn.
        var draws: [Int]
        var expected: [String]
        var description: String { name }
    }

    static let orderRows: [OrderRow] = [
        OrderRow(
            name: "priority first, whatever the weight", records: [(20, 100, "b"), (10, 1, "a")], draws: [1, 1],
            expected: ["a", "b"]),
        OrderRow(
            name: "weights 1:3, a low draw picks the first", records: [(10, 1, "a"), (10, 3, "b")], draws: [1, 1],
            expected: ["a", "b"]),
        OrderRow(
            name: "weights 1:3, a draw past its running sum picks the second", records: [(10, 1, "a"), (10, 3, "b")],
            draws: [2, 1], expected: ["b", "a"]),
        OrderRow(
            name: "zero weights go first and win a zero draw", records: [(10, 5, "a"), (10, 0, "z")], draws: [0, 5],
            expected: ["z", "a"]),
        OrderRow(name: "a '.' target is dropped", records: [(10, 0, ""), (20, 0, "a")], draws: [0], expected: ["a"]),
        OrderRow(
            name: "all zero weights keep their order", records: [(10, 0, "a"), (10, 0, "b"), (10, 0, "c")],
            draws: [0, 0, 0],
            expected: ["a", "b", "c"])
    ]

    @Test(arguments: orderRows)
    func ordersSRV(_ row: OrderRow) {
        final class Draws: @unchecked Sendable { var left: [Int]; init(_ d: [Int]) { left = d } }
        let draws = Draws(row.draws)
        var ranges: [ClosedRange<Int>] = []
        let ordered = SRVOrdering.order(
            row.records.map { SRVRecord(priority: $0.0, weight: $0.1, port: 5060, target: $0.2) }
        ) { range in
            ranges.append(range)
            let d = draws.left.isEmpty ? range.lowerBound : draws.left.removeFirst()
            #expect(range.contains(d), "draw \(d) outside \(range)")
            return d
        }
        #expect(ordered.map(\.target) == row.expected)
    }

    /// Over many draws from a seeded generator, each record leads in proportion to its weight.
    @Test func weightsGiveTheirShare() {
        var g = SplitMix(seed: 7)
        var first: [String: Int] = [:]
        let records = [
            SRVRecord(priority: 10, weight: 1, port: 1, target: "a"),
            SRVRecord(priority: 10, weight: 3, port: 1, target: "b"),
            SRVRecord(priority: 10, weight: 6, port: 1, target: "c")
        ]
        for _ in 0..<20_000 {
            let order = SRVOrdering.order(records) { Int.random(in: $0, using: &g) }
            first[order[0].target, default: 0] += 1
        }
        #expect(abs(Double(first["a"]!) / 20_000 - 0.1) < 0.01, "\(first)")
        #expect(abs(Double(first["b"]!) / 20_000 - 0.3) < 0.015, "\(first)")
        #expect(abs(Double(first["c"]!) / 20_000 - 0.6) < 0.015, "\(first)")
    }
}

/// A small seeded generator (SplitMix64), so the share test is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
