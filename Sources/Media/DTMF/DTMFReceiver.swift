/// The RFC 4733 receive side for DTMF: turns the telephone-event reports of one RTP
/// stream into one `.began` and one `.ended(digit, durationMs)` per key press.
///
/// Feed every telephone-event packet to `receive(_:timestamp:sequenceNumber:now:)` and
/// call `tick(now:)` on the media tick so a digit whose end packets were all lost still
/// ends. Time is an input (seconds on any monotonic clock); nothing here reads a clock.
///
/// Rules, after RFC 4733 §2.5.2:
/// - A new event is a report with a later RTP timestamp than the current event's, or one
///   at the same timestamp after the current event ended (a different key, or the same
///   key with a newer sequence number and no E bit). The marker bit is not used: it is
///   lost with the first packet and some senders set it on every packet.
/// - Reports of the current event only extend its duration (the longest seen wins, so
///   reordering inside an event is harmless); E-bit retransmissions after the end are
///   ignored; reports older than the current event are ignored.
/// - The first report seen may be mid-event or even an end report: the digit is still
///   reported, with the duration that report carries.
/// - A digit whose reports stop for longer than `endTimeoutMs` without an E bit ends with
///   the last duration seen; so does one interrupted by the next event.
/// - Long events (§2.5.1.3): a report of the same key whose timestamp is the previous
///   segment's timestamp plus its (near 0xFFFF) duration continues the event, and the
///   durations add up. A duration that wraps past 0xFFFF at one timestamp (a
///   non-compliant sender) is also followed.
///
/// Event codes above 15 (flash, modem tones) are ignored. Call `reset()` when the stream's
/// SSRC changes.
public struct DTMFReceiver: Sendable {
    /// Receiver settings.
    public struct Configuration: Sendable, Equatable {
        /// The telephone-event RTP clock rate in Hz (the `a=rtpmap` rate: 8000 usually,
        /// 48000 alongside Opus). Default 8000.
        public var clockRate: Int
        /// How long a digit may go without reports before it is ended with its last
        /// duration, in ms. Default 250: senders repeat every 50 ms at most, so this is
        /// five lost packets.
        public var endTimeoutMs: Int

        /// Settings with the documented defaults.
        public init(clockRate: Int = 8_000, endTimeoutMs: Int = 250) {
            self.clockRate = max(clockRate, 1)
            self.endTimeoutMs = max(endTimeoutMs, 1)
        }
    }

    private enum Phase: Sendable {
        case active
        /// Ended by an E-bit report: a later non-E report at the same timestamp is a new press.
        case endedByEndBit
        /// Ended by timeout or by the next event: late reports still belong to it.
        case endedOtherwise
    }

    private struct Current: Sendable {
        var digit: DTMFDigit
        /// The RTP timestamp of the current segment (the event's, unless it is long).
        var segmentTimestamp: UInt32
        /// Units of earlier segments and duration wraps.
        var baseUnits: Int
        /// The longest duration seen in the current segment.
        var segmentDuration: UInt16
        var highestSequence: UInt16
        var lastHeard: Double
        var phase: Phase

        var totalUnits: Int { baseUnits + Int(segmentDuration) }
        var isActive: Bool { if case .active = phase { true } else { false } }
    }

    /// The settings in use.
    public let configuration: Configuration
    private var current: Current?

    /// A receiver with no event in progress.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The key currently held down, if any.
    public var activeDigit: DTMFDigit? {
        guard let current, current.isActive else { return nil }
        return current.digit
    }

    /// Takes one telephone-event report with its packet's RTP timestamp and sequence
    /// number, received at `now` (seconds); returns what it caused (often nothing).
    public mutating func receive(
        _ report: TelephoneEvent, timestamp: UInt32, sequenceNumber: UInt16, now: Double
    ) -> DTMFEvents {
        var out = DTMFEvents()
        guard let digit = report.digit else { return out }
        if var cur = current {
            let delta = Int64(Int32(bitPattern: timestamp &- cur.segmentTimestamp))
            let isNewer = Int16(bitPattern: sequenceNumber &- cur.highestSequence) > 0
            if delta < 0, -delta <= staleWindowUnits {
                return out  // from an earlier event or segment
            } else if delta == 0 {
                if cur.isActive, cur.digit == digit {
                    extend(&cur, with: report, isNewer: isNewer, sequenceNumber: sequenceNumber, now: now, into: &out)
                    current = cur
                    return out
                }
                // Same timestamp, but the event is over or the key differs: a new press only
                // if it was sent after everything seen (late and retransmitted reports are not).
                guard isNewer else { return out }
                if cur.digit == digit {
                    guard !report.isEnd, case .endedByEndBit = cur.phase else { return out }
                }
            } else if cur.isActive, cur.digit == digit, continues(cur, delta: delta) {
                cur.baseUnits += Int(delta)
                cur.segmentTimestamp = timestamp
                cur.segmentDuration = 0
                extend(&cur, with: report, isNewer: true, sequenceNumber: sequenceNumber, now: now, into: &out)
                current = cur
                return out
            }
            if cur.isActive { out.append(.ended(cur.digit, durationMs: milliseconds(cur.totalUnits))) }
        }
        var next = Current(
            digit: digit, segmentTimestamp: timestamp, baseUnits: 0, segmentDuration: report.duration,
            highestSequence: sequenceNumber, lastHeard: now, phase: .active)
        out.append(.began(digit))
        if report.isEnd {
            next.phase = .endedByEndBit
            out.append(.ended(digit, durationMs: milliseconds(next.totalUnits)))
        }
        current = next
        return out
    }

    /// Advances time: ends a digit whose reports stopped more than `endTimeoutMs` ago,
    /// with the last duration seen.
    public mutating func tick(now: Double) -> DTMFEvents {
        var out = DTMFEvents()
        guard var cur = current, cur.isActive,
            (now - cur.lastHeard) * 1000 > Double(configuration.endTimeoutMs)
        else { return out }
        cur.phase = .endedOtherwise
        out.append(.ended(cur.digit, durationMs: milliseconds(cur.totalUnits)))
        current = cur
        return out
    }

    /// Forgets all state (for a new SSRC or the end of the stream); a digit still held is
    /// ended with its last duration.
    public mutating func reset() -> DTMFEvents {
        var out = DTMFEvents()
        if let cur = current, cur.isActive {
            out.append(.ended(cur.digit, durationMs: milliseconds(cur.totalUnits)))
        }
        current = nil
        return out
    }

    // MARK: - Private

    /// Reports older than this (10 s of clock) are stale; anything further back is taken
    /// as a restarted stream rather than ignored for half the timestamp space.
    private var staleWindowUnits: Int64 { Int64(configuration.clockRate) * 10 }

    private var timeoutUnits: Int { configuration.clockRate * configuration.endTimeoutMs / 1000 }

    /// Whether a report `delta` units after the current segment starts its next segment.
    private func continues(_ cur: Current, delta: Int64) -> Bool {
        // The old segment must have (nearly) filled the 16-bit duration, and the new one
        // starts where it ended; lost packets make the last known duration fall short.
        let full = Int(UInt16.max)
        return delta <= Int64(full) && delta >= Int64(cur.segmentDuration)
            && Int(cur.segmentDuration) + timeoutUnits >= full
    }

    private func extend(
        _ cur: inout Current, with report: TelephoneEvent, isNewer: Bool, sequenceNumber: UInt16,
        now: Double, into out: inout DTMFEvents
    ) {
        if isNewer { cur.highestSequence = sequenceNumber }
        if report.duration >= cur.segmentDuration {
            cur.segmentDuration = report.duration
        } else if isNewer, cur.segmentDuration >= 0x8000, report.duration < 0x8000 {
            // Sent later yet shorter by half the range: the 16-bit duration wrapped.
            cur.baseUnits += 0x1_0000
            cur.segmentDuration = report.duration
        }
        cur.lastHeard = now
        if report.isEnd {
            cur.phase = .endedByEndBit
            out.append(.ended(cur.digit, durationMs: milliseconds(cur.totalUnits)))
        }
    }

    private func milliseconds(_ units: Int) -> Int {
        let rate = configuration.clockRate
        return (units * 1000 + rate / 2) / rate
    }
}
