import Testing

@testable import SIP

/// The flood guard as a table: requests at given times from given sources, the verdicts.
@Suite struct SourceGuardTests {
    struct Step: Sendable {
        var at: Double
        var source = "192.0.2.1"
        var trusted = false
        var count = 1
        var expect: SourceGuard.Verdict
    }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var rate = 3
        var ban = 10.0
        var steps: [Step]
        var description: String { name }
    }

    /// Rate 3 holds 3 tokens (`SourceGuard.burst`) and refills 3 a second.
    static let rows: [Row] = [
        Row(
            name: "under the rate",
            steps: [Step(at: 0, count: 3, expect: .admit), Step(at: 1, count: 3, expect: .admit)]),
        Row(
            name: "an untrusted source over the rate is banned",
            steps: [
                Step(at: 0, count: 3, expect: .admit), Step(at: 0.1, expect: .ban),
                Step(at: 5, expect: .drop), Step(at: 10.05, expect: .drop), Step(at: 10.2, expect: .admit)
            ]),
        Row(
            name: "a trusted source over the rate loses only the excess",
            steps: [
                Step(at: 0, trusted: true, count: 3, expect: .admit),
                Step(at: 0.1, trusted: true, count: 5, expect: .drop),
                Step(at: 1.1, trusted: true, count: 3, expect: .admit)
            ]),
        Row(
            name: "tokens come back at the rate, not at a window's start",
            steps: [
                Step(at: 0, count: 3, expect: .admit), Step(at: 0.4, expect: .admit), Step(at: 0.8, expect: .admit),
                Step(at: 0.85, expect: .ban)
            ]),
        Row(
            name: "a fast rate lets a tenth of a second's worth through at once", rate: 2000,
            steps: [
                Step(at: 0, trusted: true, count: 200, expect: .admit),
                Step(at: 0, trusted: true, count: 50, expect: .drop),
                Step(at: 0.5, trusted: true, count: 200, expect: .admit), Step(at: 0.5, trusted: true, expect: .drop)
            ]),
        Row(
            name: "sources are counted apart",
            steps: [
                Step(at: 0, count: 3, expect: .admit), Step(at: 0.1, source: "192.0.2.2", count: 3, expect: .admit),
                Step(at: 0.2, expect: .ban), Step(at: 0.3, source: "192.0.2.2", expect: .ban),
                Step(at: 0.4, source: "192.0.2.3", expect: .admit)
            ])
    ]

    @Test(arguments: rows) func verdicts(_ row: Row) {
        var guardian = SourceGuard(requestsPerSecond: row.rate, banSeconds: row.ban)
        for (i, step) in row.steps.enumerated() {
            for _ in 0..<step.count {
                let verdict = guardian.admit(step.source, trusted: step.trusted, now: step.at)
                #expect(verdict == step.expect, "\(row.name), step \(i) at \(step.at): \(verdict)")
            }
        }
    }

    @Test func banIsVisibleBeforeParsing() {
        var guardian = SourceGuard(requestsPerSecond: 100, banSeconds: 60)
        #expect(!guardian.isBanned("198.51.100.7", now: 0))
        guardian.ban("198.51.100.7", now: 0)
        #expect(guardian.isBanned("198.51.100.7", now: 59))
        #expect(!guardian.isBanned("198.51.100.7", now: 60.5))
    }

    /// A trusted source flooding past its rate still gets its ACKs through (they end the
    /// answers' retransmissions), and its ACKs have a rate of their own.
    @Test func aTrustedSourcesACKsHaveABucketOfTheirOwn() {
        var guardian = SourceGuard(requestsPerSecond: 50, trustedRequestsPerSecond: 100, banSeconds: 60)
        let burst = Int(SourceGuard.burst(100))
        let requests = (0..<(burst + 20)).map { _ in guardian.admit("192.0.2.1", trusted: true, now: 0) }
        #expect(requests.filter { $0 == .admit }.count == burst)
        #expect(requests.suffix(20).allSatisfy { $0 == .drop }, "requests over the rate are dropped, not banned")
        let acks = (0..<(burst + 5)).map { _ in guardian.admitAcknowledgement("192.0.2.1", now: 0) }
        #expect(acks.prefix(burst).allSatisfy { $0 == .admit }, "the requests' bucket is empty; the ACKs' is not")
        #expect(acks.suffix(5).allSatisfy { $0 == .drop })
        #expect(!guardian.isBanned("192.0.2.1", now: 0))
        // Both refill at the trusted rate.
        #expect(guardian.admit("192.0.2.1", trusted: true, now: 0.05) == .admit)
        #expect(guardian.admitAcknowledgement("192.0.2.1", now: 0.05) == .admit)
    }

    /// Spoofed sources cannot grow the table without end; bans survive the eviction.
    @Test func theTableIsBounded() {
        var guardian = SourceGuard(requestsPerSecond: 1, banSeconds: 60, capacity: 100)
        guardian.ban("203.0.113.1", now: 0)
        for i in 0..<10_000 {
            _ = guardian.admit(
                "10.\(i / 65536).\(i / 256 % 256).\(i % 256)", trusted: false, now: 5 + Double(i) * 0.004)
        }
        let tracked = guardian.trackedCount
        #expect(tracked <= 100)
        let banned = guardian.isBanned("203.0.113.1", now: 50)
        #expect(banned)
    }

    @Test(
        "scanner user agents",
        arguments: [
            ("friendly-scanner", true), ("sipvicious 0.2.8", true), ("SIPVicious", true), ("VaxSIPUserAgent/3.1", true),
            ("Asterisk PBX 18", false), ("Linphone/5.0", false)
        ])
    func scanners(_ agent: String, _ isScanner: Bool) throws {
        var m = SIPMessage.request("OPTIONS", SIPURI(host: "example.com"))
        m.addHeader(.userAgent, agent)
        #expect(SIPDefence().isScanner(m) == isScanner)
    }
}
