// What RTCP reports say about a stream (RFC 3550 §6.4, Appendix A.3 and A.8).
// Times are inputs: `arrival`/`now` are seconds on the caller's monotonic clock, and
// NTP timestamps come from the caller's wall clock.

/// Reception statistics for the remote source of one stream: loss, jitter and the last SR
/// heard, ready to become a report block. A plain struct owned by the media loop.
public struct RTPReceiverStatistics: Sendable, Equatable {
    /// The payload's RTP clock rate in Hz (8000 for G.711, 48000 for Opus).
    public let clockRate: Int
    /// Sequence, timestamp and SSRC tracking.
    public private(set) var source: RTPSourceTracker
    /// Interarrival jitter estimate, in timestamp units (A.8, kept unrounded).
    public private(set) var jitter: Double = 0
    /// Transit time of the previous packet (arrival − timestamp, timestamp units).
    private var lastTransit: Double?
    /// A.3 `expected_prior` and `received_prior`: counts when the last report was made.
    private var expectedPrior: UInt64 = 0
    private var receivedPrior: UInt64 = 0
    /// The last SR from this source: its NTP middle 32 bits and when it arrived.
    public private(set) var lastSenderReport: (compactNTP: UInt32, arrival: Double)?

    /// Statistics for a stream clocked at `clockRate` Hz.
    public init(clockRate: Int, configuration: RTPSequenceConfiguration = RTPSequenceConfiguration()) {
        self.clockRate = max(clockRate, 1)
        self.source = RTPSourceTracker(configuration: configuration)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.clockRate == rhs.clockRate && lhs.source == rhs.source && lhs.jitter == rhs.jitter
            && lhs.lastTransit == rhs.lastTransit && lhs.expectedPrior == rhs.expectedPrior
            && lhs.receivedPrior == rhs.receivedPrior
            && lhs.lastSenderReport?.compactNTP == rhs.lastSenderReport?.compactNTP
            && lhs.lastSenderReport?.arrival == rhs.lastSenderReport?.arrival
    }

    /// The SSRC being reported on, nil before the first packet.
    public var ssrc: UInt32? { source.ssrc }

    /// Records one received RTP packet that arrived at `arrival` seconds. A new SSRC resets
    /// everything; jitter follows every delivered packet in arrival order (A.8).
    ///
    /// `sampledTimestamp` false (an RFC 4733 event packet, whose timestamp stays at the
    /// event's start while packets keep coming) leaves the jitter estimate alone: its
    /// transit says nothing about the network. The packet still counts for sequence and loss.
    public mutating func record(
        ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, arrival: Double, sampledTimestamp: Bool = true
    ) -> RTPSourceUpdate {
        let update = source.update(ssrc: ssrc, sequenceNumber: sequenceNumber, timestamp: timestamp)
        if update.sourceChanged { resetReception(forgetSenderReport: true) }
        switch update.verdict {
        case .restarted:
            resetReception(forgetSenderReport: false)
            fallthrough
        case .inOrder, .late:
            guard sampledTimestamp else { break }
            let transit = arrival * Double(clockRate) - Double(update.extendedTimestamp)
            if let lastTransit {
                // J(i) = J(i-1) + (|D(i-1,i)| - J(i-1)) / 16
                jitter += (abs(transit - lastTransit) - jitter) / 16
            }
            lastTransit = transit
        case .probation, .duplicate, .badJump:
            break
        }
        return update
    }

    /// Records a packet from its parsed view.
    public mutating func record(
        _ packet: RTPPacketView, arrival: Double, sampledTimestamp: Bool = true
    ) -> RTPSourceUpdate {
        record(
            ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp, arrival: arrival,
            sampledTimestamp: sampledTimestamp)
    }

    /// Notes an SR from this source (its sender info), received at `arrival` seconds, for
    /// the LSR and DLSR of the next report block. SRs from another SSRC are ignored.
    public mutating func recordSenderReport(ssrc: UInt32, _ info: RTCPSenderInfo, arrival: Double) {
        guard ssrc == source.ssrc else { return }
        lastSenderReport = (info.ntpTimestamp.middle32, arrival)
    }

    /// A new source starts from nothing; a restart of the same source keeps its last SR.
    private mutating func resetReception(forgetSenderReport: Bool) {
        jitter = 0
        lastTransit = nil
        expectedPrior = 0
        receivedPrior = 0
        if forgetSenderReport { lastSenderReport = nil }
    }

    /// Packets expected: extended highest − base + 1 (A.3).
    public var expected: UInt64 { source.sequence.expected }

    /// Packets received (late and duplicate ones included, as the RFC counts).
    public var received: UInt64 { source.sequence.received }

    /// Cumulative packets lost: expected − received (negative with duplicates).
    public var cumulativeLost: Int64 {
        Int64(clamping: expected) - Int64(clamping: received)
    }

    /// `cumulativeLost` clamped to the report block's 24-bit signed field.
    public var cumulativeLostForReport: Int32 {
        Int32(
            min(
                max(cumulativeLost, Int64(RTCPReportBlock.cumulativeLostRange.lowerBound)),
                Int64(RTCPReportBlock.cumulativeLostRange.upperBound)))
    }

    /// Interarrival jitter in timestamp units, as a report block carries it.
    public var jitterTimestampUnits: UInt32 { UInt32(min(jitter.rounded(.down), 4_294_967_295)) }

    /// Interarrival jitter in milliseconds at `clockRate`.
    public var jitterMilliseconds: Double { jitter * 1000 / Double(clockRate) }

    /// Fraction lost since the previous call, × 256 (A.3), without moving the interval on.
    public var fractionLostSinceLastReport: UInt8 {
        let expectedInterval = Int64(clamping: expected) - Int64(clamping: expectedPrior)
        let receivedInterval = Int64(clamping: received) - Int64(clamping: receivedPrior)
        let lostInterval = expectedInterval - receivedInterval
        guard expectedInterval > 0, lostInterval > 0 else { return 0 }
        return UInt8(min((lostInterval << 8) / expectedInterval, 255))
    }

    /// The report block for this source at `now` seconds, starting a new loss interval;
    /// nil while no valid source has been heard.
    public mutating func makeReportBlock(now: Double) -> RTCPReportBlock? {
        guard let ssrc = source.ssrc, source.sequence.isValid else { return nil }
        let fraction = fractionLostSinceLastReport
        expectedPrior = expected
        receivedPrior = received
        var lsr: UInt32 = 0
        var dlsr: UInt32 = 0
        if let last = lastSenderReport {
            lsr = last.compactNTP
            dlsr = NTPTimestamp.compactDuration(seconds: now - last.arrival)
        }
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: cumulativeLostForReport,
            extendedHighestSequenceNumber: UInt32(truncatingIfNeeded: source.sequence.extendedHighestSequenceNumber),
            interarrivalJitter: jitterTimestampUnits, lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }
}
