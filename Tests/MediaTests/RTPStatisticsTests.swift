import Foundation
import Testing

@testable import Media

/// Feeds `statistics` a 20 ms, 8 kHz stream of sequence numbers `first..<first+count`
/// with those in `lost` missing and arrivals exactly on time (transit constant).
private func feed(
    _ statistics: inout RTPReceiverStatistics, ssrc: UInt32 = 0x5EED, first: Int = 0, count: Int,
    lost: (Int) -> Bool = { _ in false }, extra: [Int] = []
) {
    for n in first..<(first + count) where !lost(n) {
        _ = statistics.record(
            ssrc: ssrc, sequenceNumber: UInt16(truncatingIfNeeded: n), timestamp: UInt32(truncatingIfNeeded: n * 160),
            arrival: Double(n) * 0.020)
    }
    for n in extra {
        _ = statistics.record(
            ssrc: ssrc, sequenceNumber: UInt16(truncatingIfNeeded: n), timestamp: UInt32(truncatingIfNeeded: n * 160),
            arrival: Double(first + count) * 0.020)
    }
}

@Suite struct RTPStatisticsTests {
    struct LossPattern: Sendable, CustomTestStringConvertible {
        let name: String
        let count: Int
        let lost: @Sendable (Int) -> Bool
        var duplicates: [Int] = []
        // Expected, worked out by hand. Packet 0 is spent on probation (A.1), so counting
        // starts at sequence 1: expected = count − 1 when the last packet arrives.
        let expected: UInt64
        let received: UInt64
        let cumulativeLost: Int32
        let fractionLost: UInt8
        var testDescription: String { name }
    }

    static let patterns: [LossPattern] = [
        LossPattern(
            name: "no loss", count: 1000, lost: { _ in false },
            expected: 999, received: 999, cumulativeLost: 0, fractionLost: 0),
        // 100 lost of 999 expected: 100·256/999 = 25.6 -> 25.
        LossPattern(
            name: "every 10th lost", count: 1000, lost: { $0 % 10 == 5 },
            expected: 999, received: 899, cumulativeLost: 100, fractionLost: 25),
        // A 50-packet burst: 50·256/999 = 12.8 -> 12.
        LossPattern(
            name: "burst of 50", count: 1000, lost: { (600..<650).contains($0) },
            expected: 999, received: 949, cumulativeLost: 50, fractionLost: 12),
        // Two bursts and scattered loss: 20 + 30 + 10 = 60 lost; 60·256/999 = 15.4 -> 15.
        LossPattern(
            name: "bursts and scattered", count: 1000,
            lost: { (100..<120).contains($0) || (500..<530).contains($0) || ($0 >= 800 && $0 % 20 == 0) },
            expected: 999, received: 939, cumulativeLost: 60, fractionLost: 15),
        // Duplicates count as received (RFC 3550 §6.4.1), so the loss goes negative.
        LossPattern(
            name: "ten duplicates", count: 100, lost: { _ in false }, duplicates: Array(50..<60),
            expected: 99, received: 109, cumulativeLost: -10, fractionLost: 0)
    ]

    @Test(arguments: patterns)
    func scriptedLoss(_ pattern: LossPattern) throws {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        feed(&statistics, count: pattern.count, lost: pattern.lost, extra: pattern.duplicates)
        #expect(statistics.expected == pattern.expected)
        #expect(statistics.received == pattern.received)
        let blockMade = statistics.makeReportBlock(now: 100)
        let block = try #require(blockMade)
        #expect(block.ssrc == 0x5EED)
        #expect(block.cumulativeLost == pattern.cumulativeLost)
        #expect(block.fractionLost == pattern.fractionLost)
        #expect(block.extendedHighestSequenceNumber == UInt32(pattern.count - 1))
        #expect(block.interarrivalJitter == 0)
        #expect(block.lastSenderReport == 0 && block.delaySinceLastSenderReport == 0)
    }

    @Test func fractionLostIsPerInterval() throws {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        feed(&statistics, count: 500)
        let firstMade = statistics.makeReportBlock(now: 10)
        let first = try #require(firstMade)
        #expect(first.fractionLost == 0)
        #expect(first.cumulativeLost == 0)

        // Interval 2: 500 more expected, a burst of 50 lost: 50·256/500 = 25.6 -> 25.
        feed(&statistics, first: 500, count: 500, lost: { (600..<650).contains($0) })
        let secondMade = statistics.makeReportBlock(now: 20)
        let second = try #require(secondMade)
        #expect(second.fractionLost == 25)
        #expect(second.cumulativeLost == 50)

        // Interval 3: nothing new, so nothing lost in it.
        let thirdMade = statistics.makeReportBlock(now: 30)
        let third = try #require(thirdMade)
        #expect(third.fractionLost == 0)
        #expect(third.cumulativeLost == 50)

        // Interval 4: every odd packet of 1000...1099 lost.
        feed(&statistics, first: 1000, count: 100, lost: { $0 % 2 == 1 })
        // The last sent (1099) was lost, so the highest is 1098: 99 expected, 50 received.
        // 49·256/99 = 126.7 -> 126.
        let fourthMade = statistics.makeReportBlock(now: 40)
        let fourth = try #require(fourthMade)
        #expect(fourth.fractionLost == 126)
        #expect(fourth.cumulativeLost == 99)
    }

    @Test func cumulativeLostClampsTo24Bits() throws {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        // Each packet jumps 2999 ahead (just under MAX_DROPOUT): 2998 lost per packet,
        // 3000 packets -> about 9 million lost, more than 2^23 - 1.
        var seq: UInt16 = 0
        for n in 0..<3001 {
            _ = statistics.record(ssrc: 1, sequenceNumber: seq, timestamp: UInt32(n * 160), arrival: Double(n) * 0.02)
            seq &+= n == 0 ? 1 : 2999
        }
        #expect(statistics.cumulativeLost > 8_388_607)
        let blockMade = statistics.makeReportBlock(now: 1)
        let block = try #require(blockMade)
        #expect(block.cumulativeLost == 8_388_607)
        #expect(block.fractionLost == 255)
    }

    @Test func noReportBeforeTheSourceIsValid() {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        let before = statistics.makeReportBlock(now: 0)
        #expect(before == nil)
        _ = statistics.record(ssrc: 1, sequenceNumber: 1, timestamp: 0, arrival: 0)
        let onProbation = statistics.makeReportBlock(now: 0)
        #expect(onProbation == nil)
    }

    // MARK: Jitter

    @Test(arguments: [0.0, 0.035, 1.7])
    func constantTransitHasNoJitter(_ transit: Double) {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        for n in 0..<200 {
            _ = statistics.record(
                ssrc: 1, sequenceNumber: UInt16(n), timestamp: UInt32(1000 + n * 160),
                arrival: 50 + transit + Double(n) * 0.020)
        }
        #expect(abs(statistics.jitter) < 1e-6)
        #expect(statistics.jitterTimestampUnits == 0)
    }

    /// Arrivals alternate X ms early and X ms late, so |D| = 2X ms for every pair and A.8
    /// gives J_k = 2X·(1 − (15/16)^k) after k differences.
    @Test(arguments: [(5.0, 8000), (5.0, 48000), (2.0, 8000), (10.0, 16000)] as [(Double, Int)])
    func alternatingArrivalJitterFollowsClosedForm(_ xMilliseconds: Double, _ clockRate: Int) {
        var statistics = RTPReceiverStatistics(clockRate: clockRate)
        let step = clockRate / 50
        let packets = 300
        for n in 0..<packets {
            let offset = (n % 2 == 0 ? 1.0 : -1.0) * xMilliseconds / 1000
            _ = statistics.record(
                ssrc: 1, sequenceNumber: UInt16(n), timestamp: UInt32(n * step),
                arrival: 10 + Double(n) * 0.020 + offset)
        }
        // Probation swallows packet 0; packet 1 starts the transit history: packets − 2 differences.
        let k = Double(packets - 2)
        let d = 2 * xMilliseconds / 1000 * Double(clockRate)
        let closedForm = d * (1 - pow(15.0 / 16.0, k))
        #expect(abs(statistics.jitter - closedForm) < 1e-6)
        #expect(abs(statistics.jitterMilliseconds - 2 * xMilliseconds) < 1e-3)
        #expect(statistics.jitterTimestampUnits == UInt32(closedForm.rounded(.down)))
    }

    @Test func jitterEarlyInTheStreamMatchesTheRecurrence() {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        // Transit (timestamp units): 80 for packets 1 and 3, 0 otherwise (10 ms late each time).
        let late: Set<Int> = [1, 3]
        for n in 0..<5 {
            let arrival = Double(n) * 0.020 + (late.contains(n) ? 0.010 : 0)
            _ = statistics.record(ssrc: 1, sequenceNumber: UInt16(n), timestamp: UInt32(n * 160), arrival: arrival)
        }
        // Differences from packet 1 on: |0-80|, |80-0|, |0-80| = 80, 80, 80 (packet 1 sets the base).
        var expected = 0.0
        for d in [80.0, 80.0, 80.0] { expected += (d - expected) / 16 }
        #expect(abs(statistics.jitter - expected) < 1e-9)
    }

    @Test func duplicatesDoNotMoveJitter() {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        feed(&statistics, count: 50)
        _ = statistics.record(ssrc: 0x5EED, sequenceNumber: 40, timestamp: 40 * 160, arrival: 99)
        #expect(statistics.jitter == 0)
    }

    // MARK: Round trip and sender reports

    @Test func lsrAndDlsrComeFromTheLastSenderReport() throws {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        feed(&statistics, ssrc: 77, count: 10)
        let ntp = NTPTimestamp(seconds: 0xE123_4567, fraction: 0x89AB_CDEF)
        statistics.recordSenderReport(
            ssrc: 77, RTCPSenderInfo(ntpTimestamp: ntp, rtpTimestamp: 0, packetCount: 10, octetCount: 1600),
            arrival: 10.0)
        // An SR from another source is not ours to report on.
        statistics.recordSenderReport(
            ssrc: 78,
            RTCPSenderInfo(ntpTimestamp: NTPTimestamp(rawValue: 1), rtpTimestamp: 0, packetCount: 0, octetCount: 0),
            arrival: 11.0)
        let blockMade = statistics.makeReportBlock(now: 12.5)
        let block = try #require(blockMade)
        #expect(block.lastSenderReport == 0x4567_89AB)
        #expect(block.delaySinceLastSenderReport == 163_840)  // 2.5 s × 65536
    }

    struct RoundTrip: Sendable, CustomTestStringConvertible {
        let name: String
        let delay: Double  // seconds the peer held our SR (DLSR)
        let rtt: Double  // seconds on the wire, both ways
        var testDescription: String { name }
    }

    @Test(arguments: [
        RoundTrip(name: "80 ms, held 1.5 s", delay: 1.5, rtt: 0.080),
        RoundTrip(name: "0 ms, answered at once", delay: 0, rtt: 0),
        RoundTrip(name: "600 ms satellite, held 4.2 s", delay: 4.2, rtt: 0.600)
    ])
    func roundTripTimeFromConstructedBlock(_ trip: RoundTrip) throws {
        var sender = RTPSenderStatistics(ssrc: 0xABCD, clockRate: 8000)
        sender.recordSent(payloadLength: 160, timestamp: 160, now: 0)
        let sentAt = NTPTimestamp(secondsSince1970: 1_700_000_000.25)
        let info = sender.makeSenderInfo(ntp: sentAt, now: 0)
        // The peer answers in an RR, holding our SR for `delay` seconds.
        let block = RTCPReportBlock(
            ssrc: 0xABCD, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0, interarrivalJitter: 0,
            lastSenderReport: info.ntpTimestamp.middle32,
            delaySinceLastSenderReport: NTPTimestamp.compactDuration(seconds: trip.delay))
        let arrival = NTPTimestamp(secondsSince1970: 1_700_000_000.25 + trip.delay + trip.rtt)
        let rtt = try #require(sender.roundTripTime(from: block, arrival: arrival))
        #expect(abs(rtt - trip.rtt) <= 2.0 / 65536)
    }

    @Test func roundTripTimeRejectsUnusableBlocks() {
        let sender = RTPSenderStatistics(ssrc: 1, clockRate: 8000)
        let arrival = NTPTimestamp(secondsSince1970: 1_700_000_100)
        let noLSR = RTCPReportBlock(
            ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0,
            interarrivalJitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
        #expect(sender.roundTripTime(from: noLSR, arrival: arrival) == nil)
        var otherSource = noLSR
        otherSource.ssrc = 2
        otherSource.lastSenderReport = arrival.middle32 &- 65536
        #expect(sender.roundTripTime(from: otherSource, arrival: arrival) == nil)
        // DLSR longer than the time since our SR: the result would be negative.
        var impossible = noLSR
        impossible.lastSenderReport = arrival.middle32 &- 65536
        impossible.delaySinceLastSenderReport = 2 * 65536
        #expect(sender.roundTripTime(from: impossible, arrival: arrival) == nil)
    }

    @Test func senderInfoCountsAndPlacesTheTimestamp() {
        var sender = RTPSenderStatistics(ssrc: 9, clockRate: 8000)
        #expect(!sender.sentSinceLastReport)
        for n in 0..<50 {
            sender.recordSent(payloadLength: 160, timestamp: UInt32(1000 + n * 160), now: Double(n) * 0.02)
        }
        #expect(sender.sentSinceLastReport)
        // Last packet at 0.98 s with timestamp 1000 + 49·160; the SR is made 5 ms later.
        let info = sender.makeSenderInfo(ntp: NTPTimestamp(seconds: 1, fraction: 0), now: 0.985)
        #expect(info.packetCount == 50)
        #expect(info.octetCount == 8000)
        #expect(info.rtpTimestamp == UInt32(1000 + 49 * 160 + 40))
        #expect(!sender.sentSinceLastReport)
    }

    @Test func ssrcChangeStartsStatisticsOver() throws {
        var statistics = RTPReceiverStatistics(clockRate: 8000)
        feed(&statistics, ssrc: 1, count: 100, lost: { $0 % 10 == 5 })
        statistics.recordSenderReport(
            ssrc: 1,
            RTCPSenderInfo(
                ntpTimestamp: NTPTimestamp(rawValue: 1 << 40), rtpTimestamp: 0, packetCount: 0, octetCount: 0),
            arrival: 1)
        feed(&statistics, ssrc: 2, first: 7000, count: 11)
        #expect(statistics.ssrc == 2)
        let blockMade = statistics.makeReportBlock(now: 200)
        let block = try #require(blockMade)
        #expect(block.ssrc == 2)
        #expect(block.cumulativeLost == 0)
        #expect(block.fractionLost == 0)
        #expect(block.extendedHighestSequenceNumber == 7010)
        #expect(block.lastSenderReport == 0)
    }
}

/// RFC 4733 event packets keep the event's start timestamp while they keep coming: counted
/// for sequence and loss, left out of the jitter estimate.
@Suite struct TelephoneEventJitterTests {
    static func run(flagEvents: Bool) -> RTPReceiverStatistics {
        var stats = RTPReceiverStatistics(clockRate: 8000)
        var seq: UInt16 = 100
        for i in 0..<60 {
            let arrival = Double(i) * 0.02
            // Frames 40-59 are a digit: twenty packets, all with the timestamp of frame 40.
            let event = (40..<60).contains(i)
            let ts = UInt32(event ? 40 * 160 : i * 160)
            _ = stats.record(
                ssrc: 7, sequenceNumber: seq, timestamp: ts, arrival: arrival, sampledTimestamp: !(event && flagEvents))
            seq &+= 1
        }
        return stats
    }

    @Test func eventPacketsDoNotReadAsJitter() {
        let flagged = Self.run(flagEvents: true), unflagged = Self.run(flagEvents: false)
        #expect(flagged.jitterMilliseconds < 1, "\(flagged.jitterMilliseconds)")
        #expect(unflagged.jitterMilliseconds > 10, "\(unflagged.jitterMilliseconds)")
        #expect(flagged.cumulativeLost == 0 && unflagged.cumulativeLost == 0)
    }
}
