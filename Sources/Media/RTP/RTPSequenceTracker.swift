// Source validation and 16/32-bit wrap handling for received RTP (RFC 3550 Appendix A.1).

/// Limits of RFC 3550 A.1's sequence validation.
public struct RTPSequenceConfiguration: Sendable, Equatable, Hashable {
    /// `MAX_DROPOUT`: the largest forward jump still taken as loss rather than a restart.
    /// Default 3000 (about a minute of 20 ms audio).
    public var maxDropout: UInt16
    /// `MAX_MISORDER`: how far behind the highest sequence number a packet may arrive and
    /// still count as late rather than a jump. Default 100; at most 128 (the duplicate window).
    public var maxMisorder: UInt16
    /// `MIN_SEQUENTIAL`: sequential packets needed before a new source is valid. Default 2;
    /// 1 accepts a source on its first packet.
    public var minSequential: Int

    /// The RFC's example values: 3000, 100, 2.
    public init(maxDropout: UInt16 = 3000, maxMisorder: UInt16 = 100, minSequential: Int = 2) {
        self.maxDropout = maxDropout
        self.maxMisorder = min(maxMisorder, UInt16(RTPSequenceTracker.duplicateWindow))
        self.minSequential = max(minSequential, 1)
    }
}

/// What the sequence tracker made of one packet's sequence number.
public enum RTPSequenceVerdict: Sendable, Equatable, Hashable {
    /// The source is still on probation: not yet `minSequential` packets in order. Drop it.
    case probation
    /// A new highest sequence number (possibly after a gap), with its extended value.
    case inOrder(extended: UInt64)
    /// Older than the highest but not seen before (reordered), with its extended value.
    case late(extended: UInt64)
    /// Seen before (within the last 128 sequence numbers). Drop it.
    case duplicate(extended: UInt64)
    /// A jump beyond `maxDropout` (or far behind): dropped, but remembered in case the
    /// sender restarted its numbering.
    case badJump
    /// The packet right after a `badJump`: the sender restarted, the tracker starts over
    /// from this packet (extended numbers restart from it too). Flush anything keyed by
    /// the old numbers.
    case restarted(extended: UInt64)

    /// True when the packet should be delivered to the media path.
    public var isDeliverable: Bool {
        switch self {
        case .inOrder, .late, .restarted: return true
        case .probation, .duplicate, .badJump: return false
        }
    }

    /// The extended sequence number, for delivered and duplicate packets.
    public var extendedSequenceNumber: UInt64? {
        switch self {
        case .inOrder(let value), .late(let value), .duplicate(let value), .restarted(let value):
            return value
        case .probation, .badJump:
            return nil
        }
    }
}

/// RFC 3550 A.1 `update_seq` for one source, plus extended (cycle-counting) sequence
/// numbers and duplicate detection over the last 128 numbers.
///
/// ```
/// uint16_t udelta = seq - s->max_seq;
/// if (s->probation) { ... }                    /* need MIN_SEQUENTIAL in a row */
/// else if (udelta < MAX_DROPOUT) {              /* in order, with permissible gap */
///     if (seq < s->max_seq) s->cycles += RTP_SEQ_MOD;
///     s->max_seq = seq;
/// } else if (udelta <= RTP_SEQ_MOD - MAX_MISORDER) {  /* the sequence number made a very large jump */
///     if (seq == s->bad_seq) init_seq(s, seq);  /* two sequential packets: restart */
///     else { s->bad_seq = (seq + 1) & (RTP_SEQ_MOD-1); return 0; }
/// } else { /* duplicate or reordered packet */ }
/// s->received++;
/// ```
/// A plain struct: one per remote source, owned by the media loop.
public struct RTPSequenceTracker: Sendable, Equatable, Hashable {
    /// How many sequence numbers behind the highest the duplicate check remembers.
    public static let duplicateWindow = 128

    /// The limits in force.
    public let configuration: RTPSequenceConfiguration
    /// `base_seq`: the first sequence number counted (after probation or a restart).
    public private(set) var baseSequenceNumber: UInt16 = 0
    /// `max_seq`: the highest sequence number seen.
    public private(set) var highestSequenceNumber: UInt16 = 0
    /// `cycles`: 65536 × the number of times the sequence number wrapped.
    public private(set) var cycles: UInt64 = 0
    /// `received`: packets counted since validation (late and duplicate ones included, as
    /// the RFC counts them; see `duplicates`).
    public private(set) var received: UInt64 = 0
    /// Packets found to be duplicates (already included in `received`).
    public private(set) var duplicates: UInt64 = 0
    /// Packets left in probation before the source is valid (0: valid).
    public private(set) var probation: Int
    /// `bad_seq`: the sequence number that would confirm a restart after a jump.
    private var badSequenceNumber: UInt32 = 65536 + 1
    /// Bit i set: highest − i was received (i in 0..<128). `low` holds bits 0...63.
    private var seenLow: UInt64 = 0
    private var seenHigh: UInt64 = 0

    /// A tracker for a source whose first packet has not arrived yet.
    public init(configuration: RTPSequenceConfiguration = RTPSequenceConfiguration()) {
        self.configuration = configuration
        self.probation = configuration.minSequential
        self.started = false
    }

    /// Whether any packet was seen (before that, the first one starts probation).
    private var started: Bool

    /// True once the source passed probation.
    public var isValid: Bool { started && probation == 0 }

    /// The extended highest sequence number: `cycles + max_seq`.
    public var extendedHighestSequenceNumber: UInt64 { cycles + UInt64(highestSequenceNumber) }

    /// Packets expected since validation: extended highest − base + 1 (A.3); 0 before.
    public var expected: UInt64 {
        guard isValid else { return 0 }
        return extendedHighestSequenceNumber + 1 - UInt64(baseSequenceNumber)
    }

    /// Feeds one received sequence number.
    public mutating func update(sequenceNumber seq: UInt16) -> RTPSequenceVerdict {
        if !started {
            // init_seq, then max_seq = seq - 1 so the first packet counts as sequential.
            started = true
            initialize(seq)
            highestSequenceNumber = seq &- 1
            probation = configuration.minSequential
        }
        let udelta = seq &- highestSequenceNumber
        if probation > 0 {
            if seq == highestSequenceNumber &+ 1 {
                probation -= 1
                highestSequenceNumber = seq
                if probation == 0 {
                    initialize(seq)
                    received += 1
                    return .inOrder(extended: extendedHighestSequenceNumber)
                }
            } else {
                probation = configuration.minSequential - 1
                highestSequenceNumber = seq
            }
            return .probation
        }
        if udelta < configuration.maxDropout {
            received += 1
            if udelta == 0 {
                duplicates += 1
                return .duplicate(extended: extendedHighestSequenceNumber)
            }
            if seq < highestSequenceNumber { cycles += 65536 }
            highestSequenceNumber = seq
            shiftWindow(by: Int(udelta))
            return .inOrder(extended: extendedHighestSequenceNumber)
        }
        if UInt32(udelta) <= 65536 - UInt32(configuration.maxMisorder) {
            if UInt32(seq) == badSequenceNumber {
                initialize(seq)
                received += 1
                return .restarted(extended: extendedHighestSequenceNumber)
            }
            badSequenceNumber = UInt32(seq &+ 1)
            return .badJump
        }
        // Behind the highest by at most maxMisorder: late or duplicate.
        received += 1
        let behind = Int(highestSequenceNumber &- seq)
        let highest = extendedHighestSequenceNumber
        let extended = highest >= UInt64(behind) ? highest - UInt64(behind) : 0
        if markSeen(behind: behind) {
            duplicates += 1
            return .duplicate(extended: extended)
        }
        return .late(extended: extended)
    }

    /// `init_seq`: starts counting at `seq`.
    private mutating func initialize(_ seq: UInt16) {
        baseSequenceNumber = seq
        highestSequenceNumber = seq
        badSequenceNumber = 65536 + 1
        cycles = 0
        received = 0
        duplicates = 0
        seenLow = 1
        seenHigh = 0
    }

    /// Moves the window forward by `distance` and marks the new highest as seen.
    private mutating func shiftWindow(by distance: Int) {
        if distance >= 128 {
            seenHigh = 0
            seenLow = 0
        } else if distance >= 64 {
            seenHigh = seenLow << UInt64(distance - 64)
            seenLow = 0
        } else if distance > 0 {
            seenHigh = (seenHigh << UInt64(distance)) | (seenLow >> UInt64(64 - distance))
            seenLow <<= UInt64(distance)
        }
        seenLow |= 1
    }

    /// Marks highest − `behind` as seen; returns true when it already was.
    private mutating func markSeen(behind: Int) -> Bool {
        guard behind < 128 else { return false }
        if behind < 64 {
            let bit = UInt64(1) << UInt64(behind)
            defer { seenLow |= bit }
            return seenLow & bit != 0
        }
        let bit = UInt64(1) << UInt64(behind - 64)
        defer { seenHigh |= bit }
        return seenHigh & bit != 0
    }
}

/// Unwraps 32-bit RTP timestamps to 64 bits: each new value is placed within ±2³¹ of the
/// highest seen, so wraps forward count up and slightly older (reordered) values stay
/// just below. The first value maps to itself plus 2³² so reordering never goes negative.
public struct RTPTimestampUnwrapper: Sendable, Equatable, Hashable {
    /// The highest extended timestamp so far, nil before the first.
    public private(set) var highest: UInt64?

    /// An unwrapper that has seen nothing.
    public init() {}

    /// The extended value of `timestamp`.
    public mutating func unwrap(_ timestamp: UInt32) -> UInt64 {
        guard let highest else {
            let first = (UInt64(1) << 32) + UInt64(timestamp)
            self.highest = first
            return first
        }
        let delta = Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: highest)))
        let extended = UInt64(max(Int64(highest) + delta, 0))
        if delta > 0 { self.highest = extended }
        return extended
    }

    /// Forgets the history (new source or restart).
    public mutating func reset() { highest = nil }
}

/// What happened to one packet at the source level.
public struct RTPSourceUpdate: Sendable, Equatable, Hashable {
    /// True when the packet's SSRC differs from the one tracked before: everything was
    /// reset and this packet is the first of the new source.
    public var sourceChanged: Bool
    /// The sequence verdict for the packet (for the new source when `sourceChanged`).
    public var verdict: RTPSequenceVerdict
    /// The packet's timestamp unwrapped to 64 bits (within the current source's history).
    public var extendedTimestamp: UInt64
}

/// Sequence and timestamp tracking for the single remote source of a stream: a change of
/// SSRC (a new sender behind the same session, such as a failover) resets both.
public struct RTPSourceTracker: Sendable, Equatable, Hashable {
    /// The SSRC being tracked, nil before the first packet.
    public private(set) var ssrc: UInt32?
    /// Sequence state for `ssrc`.
    public private(set) var sequence: RTPSequenceTracker
    /// Timestamp state for `ssrc`.
    public private(set) var timestamps = RTPTimestampUnwrapper()

    /// A tracker with `configuration` for each source it meets.
    public init(configuration: RTPSequenceConfiguration = RTPSequenceConfiguration()) {
        sequence = RTPSequenceTracker(configuration: configuration)
    }

    /// Feeds one received packet's SSRC, sequence number and timestamp.
    public mutating func update(ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32) -> RTPSourceUpdate {
        let changed = self.ssrc != nil && self.ssrc != ssrc
        if self.ssrc != ssrc {
            reset(ssrc: ssrc)
        }
        let verdict = sequence.update(sequenceNumber: sequenceNumber)
        if case .restarted = verdict { timestamps.reset() }
        return RTPSourceUpdate(
            sourceChanged: changed, verdict: verdict, extendedTimestamp: timestamps.unwrap(timestamp))
    }

    /// Starts over for `ssrc` (new source, or a renegotiation that says so).
    public mutating func reset(ssrc: UInt32?) {
        self.ssrc = ssrc
        sequence = RTPSequenceTracker(configuration: sequence.configuration)
        timestamps.reset()
    }
}
