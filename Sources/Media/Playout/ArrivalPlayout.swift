/// How one received stream of a plain bridge is played out: decoded the moment a packet
/// arrives (no playout delay at all) while the network is calm, or through the jitter
/// buffer on the 20 ms tick while it is not. A plain value with time as an input, driven by
/// the pipeline and tested with scripted arrivals.
///
/// - **On arrival** (the start): each packet in sequence is decoded and re-encoded at once.
///   A packet after a single lost one carries what is needed to conceal it (`lost: 1`:
///   Opus FEC from this packet, PLC otherwise), so the loss costs no waiting. Output
///   timestamps follow the input's (mapped to the other leg's clock), so a gap or a silent
///   stretch stays a gap in what we send.
/// - **Into the buffer**: a packet whose transit (arrival minus RTP time) exceeds the
///   stream's recent minimum by `jitterThreshold` is still played, and hands the stream to
///   the jitter buffer from the next packet on; one that comes behind the sequence
///   (reordering) is dropped and does the same. While the buffer fills, the pipeline sends
///   nothing rather than silence, so no sample is inserted: the far side sees a delay.
/// - **Back on arrival**: after `calmPeriod` without transit excess above half the
///   threshold and without reordering, `shouldReturnToArrival` says so; the pipeline
///   drops what the buffer holds (the delay it had built) and the next packet plays at once.
struct ArrivalPlayout: Sendable {
    struct Configuration: Sendable, Equatable {
        /// RTP clock of the stream received, and of the leg its audio is sent on.
        var clockRate: Int
        var outputClockRate: Int
        /// Transit excess (s) over the recent minimum that brings the jitter buffer in.
        /// Default 10 ms: half a frame; a loaded sender's timer wobble stays below it.
        var jitterThreshold = 0.010
        /// Seconds of calm before the stream leaves the buffer again. Default 4.
        var calmPeriod = 4.0
        /// Highest transit rise (s) taken for jitter; a bigger jump is a new timeline (the
        /// sender re-based its timestamps after hold) and re-bases the minimum. Default 0.5.
        var resyncThreshold = 0.5
    }

    enum Mode: Sendable, Equatable { case arrival, buffered }

    enum Decision: Sendable, Equatable {
        /// Decode now; the frame's first sample goes out with `outputTimestamp` (the output
        /// leg's clock). `lost`: packets missing just before this one (conceal one of them
        /// now when 1; a bigger gap is left to the far end's concealment).
        case play(outputTimestamp: UInt32, lost: Int)
        /// Insert into the jitter buffer (buffered mode).
        case buffer
        /// Behind the sequence and not played before: its time has passed. The stream goes
        /// to the buffer (this is reordering).
        case late
        /// Played already.
        case duplicate
    }

    let configuration: Configuration
    private(set) var mode = Mode.arrival
    /// Times the stream changed mode (both ways).
    private(set) var switches = 0

    private var ssrc: UInt32?
    private var expectedSequence: UInt16 = 0
    /// Bit i set: sequence number `expectedSequence - 1 - i` was played (duplicate check).
    private var playedMask: UInt64 = 0
    /// (input timestamp, output timestamp) of the last packet played; nil until the next
    /// packet anchors the mapping where our output stands.
    private var anchor: (input: UInt32, output: UInt32)?

    // Transit tracking (seconds): RTP time unwrapped from timestamp steps.
    private var rtpTime = 0.0
    private var lastTimestamp: UInt32 = 0
    private var lastArrival = 0.0
    private var baseTransit = 0.0
    private var hasBase = false
    private var lastDisturbance = -Double.infinity
    private var modeSince = 0.0

    /// How fast the transit minimum may rise (s/s): above sender clock drift, below jitter.
    private static let baseLeak = 0.02

    /// `onArrival` false: the stream stays in the buffer for good.
    init(_ configuration: Configuration, onArrival: Bool = true) {
        var c = configuration
        if !onArrival { c.calmPeriod = .infinity }
        self.configuration = c
        if !onArrival { mode = .buffered }
    }

    /// A packet arrived. `continuingAt`: the output leg's next timestamp, where a fresh
    /// mapping starts (first packet, new SSRC, a return from the buffer, a jump).
    /// `forceBuffered`: the call mixes (a merged call): everything goes to the buffer.
    mutating func arrived(
        sequenceNumber seq: UInt16, timestamp ts: UInt32, ssrc: UInt32, arrival: Double,
        continuingAt next: UInt32, forceBuffered: Bool = false
    ) -> Decision {
        if self.ssrc != ssrc {
            self.ssrc = ssrc
            anchor = nil
            hasBase = false
            playedMask = 0
            expectedSequence = seq
        }
        let excess = transitExcess(timestamp: ts, arrival: arrival)
        let delta = Int16(bitPattern: seq &- expectedSequence)
        if excess > configuration.jitterThreshold / 2 || delta < 0 { lastDisturbance = arrival }
        if forceBuffered { enter(.buffered, at: arrival) }
        if mode == .buffered {
            if delta >= 0 { advance(past: seq) }
            return .buffer
        }
        if delta < 0 {
            let back = Int(-Int(delta)) - 1
            if back < 64, playedMask & (1 << UInt64(back)) != 0 { return .duplicate }
            enter(.buffered, at: arrival)
            return .late
        }
        // A late packet is still played now (its lateness passes on to the far side's
        // buffer, which is there for it); the packets after it go through ours.
        if excess > configuration.jitterThreshold { enter(.buffered, at: arrival) }
        let lost = Int(delta)
        // Far outside the window (a restart of numbering): a fresh mapping, no loss.
        if lost > 100 { anchor = nil }
        let output: UInt32
        if let a = anchor, let mapped = map(ts, from: a) {
            output = mapped
        } else {
            output = next
        }
        anchor = (ts, output)
        advance(past: seq)
        return .play(outputTimestamp: output, lost: lost > 100 ? 0 : lost)
    }

    /// A packet of the stream that carries no audio for us (an RFC 4733 event): it takes its
    /// sequence number, so the next audio packet is not taken for one after a loss.
    mutating func skip(sequenceNumber seq: UInt16, ssrc: UInt32) {
        guard self.ssrc == ssrc, Int16(bitPattern: seq &- expectedSequence) >= 0 else { return }
        advance(past: seq)
    }

    /// True (once) when a buffered stream has been calm for `calmPeriod`: the pipeline
    /// flushes the buffer, and the next packet plays on arrival with a fresh mapping.
    mutating func shouldReturnToArrival(now: Double) -> Bool {
        guard mode == .buffered, now - lastDisturbance >= configuration.calmPeriod,
            now - modeSince >= configuration.calmPeriod
        else { return false }
        enter(.arrival, at: now)
        anchor = nil
        return true
    }

    /// Our output went on without this stream (filler frames over a silence): the next
    /// packet continues where the output stands instead of at its mapped place.
    mutating func reanchor() { anchor = nil }

    private mutating func enter(_ m: Mode, at now: Double) {
        guard mode != m else { return }
        mode = m
        modeSince = now
        switches += 1
    }

    private mutating func advance(past seq: UInt16) {
        let step = Int(Int16(bitPattern: seq &- expectedSequence)) + 1
        playedMask = step >= 64 ? 1 : (playedMask << UInt64(step)) | 1
        expectedSequence = seq &+ 1
    }

    /// The output timestamp of input timestamp `ts`, continuing the mapping `a`; nil when
    /// the step is backwards or longer than a minute (timestamps re-based: map afresh).
    private func map(_ ts: UInt32, from a: (input: UInt32, output: UInt32)) -> UInt32? {
        let step = Int64(Int32(bitPattern: ts &- a.input))
        guard step >= 0, step <= Int64(configuration.clockRate) * 60 else { return nil }
        let scaled = step * Int64(configuration.outputClockRate) / Int64(configuration.clockRate)
        return a.output &+ UInt32(truncatingIfNeeded: scaled)
    }

    /// Arrival minus RTP time, above the recent minimum (which leaks upwards slowly).
    private mutating func transitExcess(timestamp ts: UInt32, arrival: Double) -> Double {
        if hasBase {
            rtpTime += Double(Int32(bitPattern: ts &- lastTimestamp)) / Double(configuration.clockRate)
        } else {
            rtpTime = 0
        }
        let transit = arrival - rtpTime
        defer { lastTimestamp = ts; lastArrival = arrival }
        guard hasBase else {
            hasBase = true
            baseTransit = transit
            return 0
        }
        baseTransit += Self.baseLeak * max(arrival - lastArrival, 0)
        let excess = transit - baseTransit
        if excess < 0 || excess > configuration.resyncThreshold {
            baseTransit = transit
            return 0
        }
        return excess
    }
}
