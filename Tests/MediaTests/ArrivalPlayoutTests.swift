import Testing

@testable import Media

/// `ArrivalPlayout` driven by scripted arrivals: no socket, no clock. A PCMU stream (8 kHz
/// clock) played toward an Opus leg (48 kHz), so mapped timestamps step by 960 per frame.

/// One arrival: sequence number, timestamp, time (s); SSRC 1 unless said; the output leg's
/// next timestamp is always 50_000.
struct ArrivalStep: Sendable {
    var seq: UInt16
    var ts: UInt32
    var at: Double
    var ssrc: UInt32 = 1
    var forceBuffered = false
}

struct ArrivalCase: Sendable, CustomTestStringConvertible {
    var name: String
    var steps: [ArrivalStep]
    var decisions: [ArrivalPlayout.Decision]
    var finalMode: ArrivalPlayout.Mode
    var onArrival = true
    var testDescription: String { name }
}

/// A calm 20 ms stream from sequence 100 / timestamp 8000 at t = 1.0.
private func calm(_ count: Int, from i: Int = 0, at t0: Double = 1.0) -> [ArrivalStep] {
    var steps: [ArrivalStep] = []
    for n in i..<(i + count) {
        let seq = UInt16(100 + n), ts = UInt32(8000 + 160 * n), at = t0 + 0.020 * Double(n)
        steps.append(ArrivalStep(seq: seq, ts: ts, at: at))
    }
    return steps
}

/// `steps` with their arrival times moved by `by` seconds (or set to `at`).
private func shifted(_ steps: [ArrivalStep], by: Double = 0, at: Double? = nil) -> [ArrivalStep] {
    steps.map { (s: ArrivalStep) -> ArrivalStep in
        var s = s
        s.at = at ?? (s.at + by)
        return s
    }
}

private func forced(_ steps: [ArrivalStep]) -> [ArrivalStep] {
    steps.map { (s: ArrivalStep) -> ArrivalStep in
        var s = s
        s.forceBuffered = true
        return s
    }
}

/// Every other packet 5 ms late.
private func wobbled(_ steps: [ArrivalStep]) -> [ArrivalStep] {
    steps.enumerated().map { (i: Int, s: ArrivalStep) -> ArrivalStep in
        var s = s
        if i % 2 == 1 { s.at += 0.005 }
        return s
    }
}

private func drifting(_ count: Int) -> [ArrivalStep] {
    shifted(calm(count)).enumerated().map { (n: Int, s: ArrivalStep) -> ArrivalStep in
        var s = s
        s.at += 0.0001 * Double(n)
        return s
    }
}

private let reordered: [ArrivalStep] =
    calm(1) + calm(1, from: 2) + shifted(calm(1, from: 1), at: 1.041) + calm(1, from: 3)
private let oneLate: [ArrivalStep] = calm(3) + shifted(calm(1, from: 3), by: 0.015) + calm(1, from: 4)

private func played(_ frames: [Int], lost: [Int: Int] = [:]) -> [ArrivalPlayout.Decision] {
    frames.map { (f: Int) -> ArrivalPlayout.Decision in
        let ts = UInt32(50_000 + 960 * f)
        return .play(outputTimestamp: ts, lost: lost[f] ?? 0)
    }
}

let arrivalCases: [ArrivalCase] = [
    ArrivalCase(
        name: "a calm stream plays every packet on arrival, timestamps mapped to the output clock",
        steps: calm(5), decisions: played([0, 1, 2, 3, 4]), finalMode: .arrival),
    ArrivalCase(
        name: "a lost packet: the next plays at once with lost 1, the gap kept in the output timestamps",
        steps: calm(2) + calm(2, from: 3), decisions: played([0, 1, 3, 4], lost: [3: 1]), finalMode: .arrival),
    ArrivalCase(
        name: "a duplicate is dropped and changes nothing",
        steps: calm(3) + [ArrivalStep(seq: 101, ts: 8160, at: 1.045)] + calm(1, from: 3),
        decisions: played([0, 1, 2]) + [.duplicate] + played([3]), finalMode: .arrival),
    ArrivalCase(
        name: "reordering: the overtaken packet is late and the stream goes to the buffer",
        steps: reordered,
        decisions: played([0, 2], lost: [2: 1]) + [.late, .buffer], finalMode: .buffered),
    ArrivalCase(
        name: "a packet 15 ms late is still played; the ones after it go to the buffer",
        steps: oneLate,
        decisions: played([0, 1, 2, 3]) + [.buffer], finalMode: .buffered),
    ArrivalCase(
        name: "5 ms of wobble stays on arrival",
        steps: wobbled(calm(6)),
        decisions: played([0, 1, 2, 3, 4, 5]), finalMode: .arrival),
    ArrivalCase(
        name: "a sender clock 0.5 % slow over 10 s is drift, not jitter",
        steps: drifting(500),
        decisions: played(Array(0..<500)), finalMode: .arrival),
    ArrivalCase(
        name: "a new SSRC maps afresh from where the output stands",
        steps: calm(2) + [
            ArrivalStep(seq: 7, ts: 900_000, at: 1.040, ssrc: 2), ArrivalStep(seq: 8, ts: 900_160, at: 1.060, ssrc: 2)
        ],
        decisions: played([0, 1]) + played([0, 1]), finalMode: .arrival),
    ArrivalCase(
        name: "timestamps re-based backwards (after hold): mapped afresh, not wrapped",
        steps: calm(2) + [ArrivalStep(seq: 102, ts: 100, at: 1.040), ArrivalStep(seq: 103, ts: 260, at: 1.060)],
        decisions: played([0, 1]) + played([0, 1]), finalMode: .arrival),
    ArrivalCase(
        name: "a silence (timestamps jump 2 s, sequence continues) stays a gap in the output",
        steps: calm(2) + [ArrivalStep(seq: 102, ts: 8320 + 16_000, at: 3.040)],
        decisions: played([0, 1, 102]), finalMode: .arrival),
    ArrivalCase(
        name: "a mixing call sends everything to the buffer",
        steps: forced(calm(2)), decisions: [.buffer, .buffer], finalMode: .buffered),
    ArrivalCase(
        name: "playout on arrival turned off: always the buffer", steps: calm(3),
        decisions: [.buffer, .buffer, .buffer],
        finalMode: .buffered, onArrival: false)
]

@Suite struct ArrivalPlayoutTests {
    @Test(arguments: arrivalCases)
    func decisions(_ c: ArrivalCase) {
        var p = ArrivalPlayout(.init(clockRate: 8000, outputClockRate: 48_000), onArrival: c.onArrival)
        let got = c.steps.map { s in
            p.arrived(
                sequenceNumber: s.seq, timestamp: s.ts, ssrc: s.ssrc, arrival: s.at, continuingAt: 50_000,
                forceBuffered: s.forceBuffered)
        }
        #expect(got == c.decisions)
        #expect(p.mode == c.finalMode)
    }

    /// Buffered after a jitter spike; calm for `calmPeriod` brings it back once, and the
    /// next packet maps afresh from where the output stands.
    @Test func returnsToArrivalAfterACalmPeriod() throws {
        var p = ArrivalPlayout(.init(clockRate: 8000, outputClockRate: 48_000, calmPeriod: 2))
        for s in calm(3) {
            _ = p.arrived(sequenceNumber: s.seq, timestamp: s.ts, ssrc: 1, arrival: s.at, continuingAt: 0)
        }
        _ = p.arrived(sequenceNumber: 103, ts: 8480, ssrc: 1, arrival: 1.090, continuingAt: 0)
        #expect(p.mode == .buffered)
        var returned: Double?
        var next: ArrivalStep?
        for s in calm(150, from: 4) {
            if let r = returned, r > 0 { next = s; break }
            let d = p.arrived(sequenceNumber: s.seq, timestamp: s.ts, ssrc: 1, arrival: s.at, continuingAt: 0)
            #expect(d == .buffer)
            if p.shouldReturnToArrival(now: s.at + 0.001) { returned = s.at }
            let again = p.shouldReturnToArrival(now: s.at + 0.002)
            #expect(!again, "says so once")
        }
        #expect((returned ?? 0) >= 1.090 + 2)
        #expect(p.mode == .arrival)
        #expect(p.switches == 2)
        let s = try #require(next)
        let d = p.arrived(sequenceNumber: s.seq, timestamp: s.ts, ssrc: 1, arrival: s.at, continuingAt: 777)
        #expect(d == .play(outputTimestamp: 777, lost: 0))
    }

    /// RFC 4733 event packets between audio packets take sequence numbers: skipped, they are
    /// not losses.
    @Test func telephoneEventsAreNotLosses() {
        var p = ArrivalPlayout(.init(clockRate: 8000, outputClockRate: 8000))
        let steps = calm(4)
        _ = p.arrived(sequenceNumber: steps[0].seq, ts: steps[0].ts, ssrc: 1, arrival: steps[0].at, continuingAt: 0)
        p.skip(sequenceNumber: steps[1].seq, ssrc: 1)
        let d = p.arrived(sequenceNumber: steps[2].seq, ts: steps[2].ts, ssrc: 1, arrival: steps[2].at, continuingAt: 0)
        #expect(d == .play(outputTimestamp: 320, lost: 0))
    }

    /// Jitter keeps it buffered: a spike every second never leaves `calmPeriod` of calm.
    @Test func recurringJitterKeepsTheBuffer() {
        var p = ArrivalPlayout(.init(clockRate: 8000, outputClockRate: 8000, calmPeriod: 2))
        for (i, s) in calm(500).enumerated() {
            let late = i % 50 == 10 ? 0.030 : 0
            _ = p.arrived(sequenceNumber: s.seq, timestamp: s.ts, ssrc: 1, arrival: s.at + late, continuingAt: 0)
            let returned = p.shouldReturnToArrival(now: s.at + late)
            #expect(!returned)
        }
        #expect(p.mode == .buffered)
    }
}

extension ArrivalPlayout {
    /// The test's shorthand (timestamp as `ts`).
    mutating func arrived(
        sequenceNumber: UInt16, ts: UInt32, ssrc: UInt32, arrival: Double, continuingAt: UInt32
    ) -> Decision {
        arrived(sequenceNumber: sequenceNumber, timestamp: ts, ssrc: ssrc, arrival: arrival, continuingAt: continuingAt)
    }
}
