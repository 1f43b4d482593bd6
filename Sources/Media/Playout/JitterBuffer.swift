#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An adaptive jitter buffer for one received RTP stream: a plain value with time as an
/// input (no clock, no threads), so it is driven and tested with scripted times.
///
/// The media loop calls ``insert(_:payload:arrival:)`` for every RTP packet and
/// ``pop(now:)`` whenever playout needs the next frame's worth of audio — with 20 ms
/// packets that is exactly once per 20 ms tick (with 40 ms packets every other tick,
/// with 10 ms packets twice a tick). Each pop answers what to play:
/// a frame to decode, a concealment (run PLC, or Opus FEC from the next frame), or silence.
///
/// Policy:
/// - **Storage.** A ring of `capacity` slots indexed by extended sequence number, with
///   payload bytes copied into preallocated slots of `maxPayloadSize`: `insert` and `pop`
///   never allocate after `init` (as long as the buffer value is not copied). Reordered
///   packets land in their own slot, so they are "inserted in place".
/// - **Depth** is the audio from the playout cursor to the newest frame, counting holes
///   (they will be concealed) but not silent gaps, measured in frames of the stream's
///   frame duration (learnt from the timestamp step between consecutive packets: the
///   first step at once, later only two equal steps in a row, so a gap is not taken for a
///   frame). It is measured at a pop and includes the frame about to be played.
/// - **Target.** Each packet's transit (arrival minus RTP time) is compared with a base,
///   the smallest recent transit (a minimum that leaks upwards at 20 ms/s so sender clock
///   drift does not look like jitter). The excess over the base feeds a peak estimate that
///   jumps up at once (a late packet raises it immediately) and halves every
///   `jitterHalfLife` when calm. Target = frame duration + estimate, clamped to
///   `minimumDelay ... maximumDelay`.
/// - **Start.** After the first packet (or a resync) the buffer answers `.silence` until
///   its depth reaches the target, or the first frame has waited target − one frame.
/// - **Growing** happens by holding: when the buffer runs dry, pops conceal without
///   advancing, so a late packet is still played when it comes and the delay grows by the
///   time it was late. When the depth stayed a frame or more below the target for a
///   whole `shrinkWindow`, one concealment is inserted before the next frame (this is
///   also how a sender clock slower than ours is absorbed).
/// - **Shrinking** is slow: when for a whole `shrinkWindow` every pop found at least one
///   spare frame (depth ≥ 2 frames) and the depth reached target + one frame, one frame
///   is skipped (only between two contiguous frames). This absorbs a sender clock
///   faster than ours, and brings the delay back down after a jitter burst.
/// - **Talkspurts and gaps.** A frame's expected timestamp is that of the last frame taken
///   plus one frame duration per sequence number since. When the next frame is more than
///   half a frame away from it (DTX, comfort noise, a new talkspurt, timestamps re-based
///   after hold, forwards or backwards), it is a gap, not a loss: the buffer answers
///   `.silence` until that frame is ready by the start rule, which also resets the delay to
///   the current target for free during the silence (and plays at once when the depth is
///   already there, so a timestamp jump in a continuous stream costs nothing). The marker
///   bit is carried but not needed: the timestamps decide.
/// - **Loss.** A missing sequence number with later frames present is lost: one
///   `.conceal(next:)` for it, carrying the following frame if present (for Opus FEC).
///   A pop that finds the buffer empty is an underrun: up to `maxUnderrunConcealment`
///   concealments, then silence (the sender probably went quiet); none at all after a
///   comfort-noise frame. So DTX without comfort noise begins with a few concealments
///   (counted as underruns, not losses): the buffer cannot know yet. Underrun pops later
///   found to cover a lost packet count for it, so each loss costs exactly one
///   concealment (a silence after more than `maxUnderrunConcealment` in a row).
/// - **Late and duplicate packets.** A packet behind the cursor is late (its frame was
///   concealed or skipped) and dropped; one already held or played is a duplicate.
/// - **Bounds.** A packet beyond the ring, or one that makes the depth exceed
///   `maximumDelay`, pushes the oldest frames out (counted as overflow drops).
/// - **Resync.** An SSRC change flushes the buffer and starts again (stray packets of the
///   previous SSRC within 1 s are dropped as late). A jump forward beyond the ring while
///   nothing is left to play (an outage) restarts at once, the skipped numbers counted as
///   lost; otherwise two consecutive packets far outside the sequence window restart the
///   stream at them. A transit jump over `resyncThreshold` re-bases the jitter estimate
///   instead of counting as jitter. Counters survive resyncs.
public struct JitterBuffer: Sendable {
    /// The RTP header fields the buffer needs (RFC 3550 §5.1).
    public struct Packet: Sendable, Equatable {
        /// RTP sequence number (16 bits, wraps).
        public var sequenceNumber: UInt16
        /// RTP timestamp in clock-rate units (32 bits, wraps).
        public var timestamp: UInt32
        /// Marker bit: for audio, the first packet of a talkspurt (RFC 3551 §4.1).
        public var marker: Bool
        /// Synchronisation source identifier.
        public var ssrc: UInt32
        /// RTP payload type.
        public var payloadType: UInt8

        /// A packet header.
        public init(
            sequenceNumber: UInt16, timestamp: UInt32, marker: Bool = false,
            ssrc: UInt32, payloadType: UInt8
        ) {
            self.sequenceNumber = sequenceNumber
            self.timestamp = timestamp
            self.marker = marker
            self.ssrc = ssrc
            self.payloadType = payloadType
        }
    }

    /// A frame held by the buffer. Read its bytes with ``JitterBuffer/withPayload(of:_:)``
    /// or ``JitterBuffer/payload(of:)``; they are valid until the next `insert`, `pop` or
    /// `reset` (after which a stale reference reads as empty, never as another frame).
    public struct FrameRef: Sendable, Equatable {
        /// RTP sequence number.
        public let sequenceNumber: UInt16
        /// RTP timestamp.
        public let timestamp: UInt32
        /// Marker bit.
        public let marker: Bool
        /// SSRC of the stream.
        public let ssrc: UInt32
        /// RTP payload type.
        public let payloadType: UInt8
        /// When the packet arrived (the `arrival` given to `insert`).
        public let arrival: Double
        /// Payload length in bytes.
        public let payloadCount: Int
        let slot: Int
        let generation: UInt32
    }

    /// What to play for one pop.
    public enum Playout: Sendable, Equatable {
        /// Decode this frame.
        case frame(FrameRef)
        /// A frame is missing: run packet-loss concealment for one frame duration, or
        /// recover it from `next` (the frame after the missing one) with Opus in-band FEC.
        case conceal(next: FrameRef?)
        /// Nothing to play for one frame duration: not started, buffering, or a silent
        /// gap (DTX / comfort noise). Play silence or comfort noise.
        case silence
    }

    /// What `insert` did with a packet.
    public enum InsertOutcome: Sendable, Equatable {
        /// Stored for playout.
        case buffered
        /// Stored after flushing the buffer and restarting (new SSRC, sequence jump).
        case resynchronized
        /// Dropped: the same sequence number is already held or was played.
        case duplicate
        /// Dropped: its playout time has passed (concealed or skipped), or it belongs to
        /// the SSRC that was replaced.
        case late
        /// Dropped: larger than `maxPayloadSize`.
        case oversized
        /// Dropped: far outside the sequence window; a following packet that continues
        /// from it restarts the stream there.
        case discarded
    }

    /// Counters since `init` (never reset by a resync) and the current depth and target.
    public struct Statistics: Sendable, Equatable {
        /// Packets given to `insert`.
        public var received = 0
        /// `.frame` answers.
        public var played = 0
        /// `.conceal` answers, for whatever reason (loss, underrun, growing the delay).
        public var concealed = 0
        /// Sequence numbers given up as missing (each covered by a concealment or silence).
        public var lost = 0
        /// Pops that found the buffer empty while playing (not counted after comfort noise).
        public var underruns = 0
        /// Concealments inserted to raise the depth towards the target.
        public var stretches = 0
        /// Packets that came after their playout time.
        public var late = 0
        /// Packets received twice.
        public var duplicates = 0
        /// Frames pushed out by the ring capacity or the maximum delay.
        public var overflowDrops = 0
        /// Frames skipped to bring the depth down to the target.
        public var shrinkDrops = 0
        /// Restarts: SSRC changes, sequence jumps, timestamp re-basing.
        public var resyncs = 0
        /// Packets refused as larger than a slot.
        public var oversized = 0
        /// Packets dropped far outside the sequence window.
        public var discarded = 0
        /// Current depth, in milliseconds.
        public var depthMilliseconds = 0
        /// Current target depth, in milliseconds.
        public var targetMilliseconds = 0
    }

    private enum State: Sendable { case idle, prefetching, playing }
    private enum SlotState: Sendable { case empty, held, consumed }

    private struct Slot: Sendable {
        var sequence: Int64 = .min
        var timestamp: Int64 = 0
        var arrival: Double = 0
        var count = 0
        var marker = false
        var payloadType: UInt8 = 0
        var state = SlotState.empty
        var generation: UInt32 = 0
    }

    /// The settings in force (sanitised: out-of-range values brought into range).
    public let configuration: JitterBufferConfiguration

    private var slots: [Slot]
    private var storage: [UInt8]
    private var counters = Statistics()
    private var state = State.idle

    private var ssrc: UInt32 = 0
    private var previousSSRC: UInt32?
    private var previousSSRCUntil = 0.0
    private var probationSequence: UInt16?
    /// Next sequence number to play (extended to 64 bits).
    private var nextSequence: Int64 = 0
    /// Highest sequence number held, and its timestamp (the references for extension).
    private var highestSequence: Int64 = 0
    private var highestTimestamp: Int64 = 0
    private var lastInsertedSequence: Int64 = 0
    private var lastInsertedTimestamp: Int64 = 0
    private var lastTimestampStep: Int64 = 0
    private var frameSamples: Int64
    /// The last frame taken from the buffer (played or dropped): the next frames' expected
    /// timestamps count on from it in frame durations.
    private var anchorSequence: Int64 = 0
    private var anchorTimestamp: Int64 = 0
    /// Whether `frameSamples` was confirmed by two equal timestamp steps.
    private var frameConfirmed = false
    /// Concealments/silences already given since the last frame while the buffer was dry.
    private var owed = 0
    private var lastWasComfortNoise = false

    private var hasBase = false
    private var baseTransit = 0.0
    private var baseTime = 0.0
    private var jitter = 0.0
    private var jitterTime = 0.0

    /// The latest finite time seen, standing in for a non-finite one.
    private var lastTime = 0.0
    private var windowStart = 0.0
    private var windowMin = Int64.max
    private var windowMax = Int64.min
    private var shrinkPending = false
    private var growPending = false

    /// How fast the transit base may rise, in seconds per second: above any plausible
    /// sender clock drift (0.5 % is 5 ms/s), well below real jitter.
    private static let baseLeak = 0.02
    /// How long after an SSRC change packets of the replaced SSRC count as stragglers.
    private static let stragglerWindow = 1.0
    /// Largest forward sequence jump taken as an outage rather than a restart of numbering
    /// (RFC 3550 Appendix A.1's MAX_DROPOUT).
    private static let maxDropout: Int64 = 3_000
    /// Longest frame duration believed from timestamp steps, in seconds (Opus's maximum).
    private static let longestFrame = 0.120

    /// An empty buffer with all storage allocated up front.
    public init(configuration: JitterBufferConfiguration = JitterBufferConfiguration()) {
        let c = configuration.sanitized
        self.configuration = c
        slots = Array(repeating: Slot(), count: c.capacity)
        storage = Array(repeating: 0, count: c.capacity * c.maxPayloadSize)
        frameSamples = max(Int64((c.defaultFrameDuration * Double(c.clockRate)).rounded()), 1)
    }

    // MARK: - Public state

    /// Counters, current depth and target.
    public var statistics: Statistics {
        var s = counters
        s.depthMilliseconds = Int((depth * 1000).rounded())
        s.targetMilliseconds = Int((targetDelay * 1000).rounded())
        return s
    }

    /// Buffered audio ahead of the playout cursor, in seconds (see the type's policy).
    public var depth: Double { Double(depthSamples) / rate }

    /// The depth the buffer currently aims for, in seconds.
    public var targetDelay: Double {
        min(max(frameDuration + jitter, configuration.minimumDelay), configuration.maximumDelay)
    }

    /// The stream's frame duration in seconds, as learnt from its timestamps (the
    /// configured default until then). A `.conceal` or `.silence` covers this long.
    public var frameDuration: Double { Double(frameSamples) / rate }

    /// Whether playout has started (not idle nor buffering its first frames).
    public var isPlaying: Bool { state == .playing }

    // MARK: - Insert

    /// Stores an arrived packet, copying `payload` into a preallocated slot.
    public mutating func insert(
        _ packet: Packet, payload: UnsafeRawBufferPointer, arrival: Double
    ) -> InsertOutcome {
        counters.received += 1
        // A broken clock reading must not poison the estimates: reuse the last good one.
        let arrival = arrival.isFinite ? arrival : lastTime
        lastTime = arrival
        guard payload.count <= configuration.maxPayloadSize else {
            counters.oversized += 1
            return .oversized
        }
        if state == .idle {
            begin(packet, payload: payload, arrival: arrival)
            return .buffered
        }
        if packet.ssrc != ssrc {
            if packet.ssrc == previousSSRC, arrival < previousSSRCUntil {
                counters.late += 1
                return .late
            }
            previousSSRC = ssrc
            previousSSRCUntil = arrival + Self.stragglerWindow
            restart(packet, payload: payload, arrival: arrival)
            return .resynchronized
        }

        let sequence =
            highestSequence
            + Int64(Int16(bitPattern: packet.sequenceNumber &- UInt16(truncatingIfNeeded: highestSequence)))
        let timestamp =
            highestTimestamp
            + Int64(Int32(bitPattern: packet.timestamp &- UInt32(truncatingIfNeeded: highestTimestamp)))
        let capacity = Int64(configuration.capacity)

        if sequence < nextSequence {
            if state == .prefetching, highestSequence - sequence < capacity, !isHeld(sequence) {
                // Reordered before the first packet, and nothing has played: start earlier.
                nextSequence = sequence
            } else if nextSequence - sequence <= capacity {
                let slot = slots[index(sequence)]
                if slot.sequence == sequence, slot.state != .empty {
                    counters.duplicates += 1
                    return .duplicate
                }
                counters.late += 1
                observeTransit(timestamp: timestamp, arrival: arrival)
                return .late
            } else {
                return probation(packet, payload: payload, arrival: arrival)
            }
        } else if sequence - highestSequence >= capacity {
            if highestSequence < nextSequence, sequence - highestSequence < Self.maxDropout {
                // An outage longer than the ring with nothing left to play: start again here.
                counters.lost += Int(sequence - nextSequence)
                restart(packet, payload: payload, arrival: arrival)
                return .resynchronized
            }
            return probation(packet, payload: payload, arrival: arrival)
        }
        if isHeld(sequence) {
            counters.duplicates += 1
            return .duplicate
        }
        probationSequence = nil
        while sequence - nextSequence >= capacity { dropHead() }
        store(packet, sequence: sequence, timestamp: timestamp, payload: payload, arrival: arrival)
        enforceMaximumDelay()
        return .buffered
    }

    /// Stores an arrived packet; see ``insert(_:payload:arrival:)``.
    public mutating func insert(_ packet: Packet, payload: [UInt8], arrival: Double) -> InsertOutcome {
        payload.withUnsafeBytes { insert(packet, payload: $0, arrival: arrival) }
    }

    /// Empties the buffer and forgets the stream (counters are kept).
    public mutating func reset() {
        flush()
        state = .idle
        previousSSRC = nil
        probationSequence = nil
        hasBase = false
    }

    // MARK: - Pop

    /// What to play next, at local time `now` (seconds, same clock as the arrivals).
    /// Every answer covers one frame: a `.frame` its own duration, `.conceal` and
    /// `.silence` ``frameDuration``.
    public mutating func pop(now: Double) -> Playout {
        let now = now.isFinite ? now : lastTime
        lastTime = now
        switch state {
        case .idle:
            return .silence
        case .prefetching:
            guard let head = heldSlot(nextSequence) else { return .silence }
            guard isReady(head, now: now) else { return .silence }
            state = .playing
            anchorSequence = nextSequence - 1
            anchorTimestamp = head.timestamp - frameSamples
            owed = 0
            lastWasComfortNoise = false
            startWindow(now)
        case .playing:
            break
        }
        return playoutTick(now: now)
    }

    // MARK: - Payload access

    /// Calls `body` with the payload bytes of `frame` (empty if the reference is stale).
    public func withPayload<R>(
        of frame: FrameRef, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        let count = validCount(frame)
        return try storage.withUnsafeBytes { bytes in
            let start = frame.slot * configuration.maxPayloadSize
            return try body(UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
        }
    }

    /// The payload bytes of `frame` (empty if the reference is stale). The slice shares the
    /// buffer's storage: drop it before the next `insert`, or that insert has to copy.
    public func payload(of frame: FrameRef) -> ArraySlice<UInt8> {
        let start = frame.slot * configuration.maxPayloadSize
        return storage[start..<start + validCount(frame)]
    }

    // MARK: - Playout

    private mutating func playoutTick(now: Double) -> Playout {
        let depthNow = depthSamples
        let continuous = heldSlot(nextSequence).map { isContinuous($0) } ?? false
        if continuous { trackWindow(depth: depthNow, now: now) }

        if growPending, continuous {
            growPending = false
            counters.stretches += 1
            counters.concealed += 1
            startWindow(now)
            return .conceal(next: nil)
        }
        if shrinkPending, let head = heldSlot(nextSequence), isContinuous(head),
            let next = heldSlot(nextSequence + 1), next.timestamp - head.timestamp == frameSamples
        {
            shrinkPending = false
            slots[index(nextSequence)].state = .consumed
            counters.shrinkDrops += 1
            anchorSequence = nextSequence
            anchorTimestamp = head.timestamp
            nextSequence += 1
            startWindow(now)
        }

        while true {
            if let head = heldSlot(nextSequence) {
                if !isContinuous(head) {
                    // A gap in the timeline: silence until the new talkspurt is ready.
                    guard isReady(head, now: now) else { return .silence }
                    startWindow(now)
                }
                return consumeHead(head)
            }
            if nextSequence < highestSequence {
                // A hole with later frames present: the missing frame is lost.
                counters.lost += 1
                nextSequence += 1
                if owed > 0 {
                    owed -= 1  // an underrun pop already stood in for it
                    continue
                }
                counters.concealed += 1
                return .conceal(next: heldSlot(nextSequence).map { reference(index(nextSequence), $0) })
            }
            // Empty.
            if lastWasComfortNoise { return .silence }
            counters.underruns += 1
            owed += 1
            startWindow(now)
            if owed <= configuration.maxUnderrunConcealment {
                counters.concealed += 1
                return .conceal(next: nil)
            }
            return .silence
        }
    }

    private mutating func consumeHead(_ head: Slot) -> Playout {
        let i = index(nextSequence)
        slots[i].state = .consumed
        anchorSequence = nextSequence
        anchorTimestamp = head.timestamp
        nextSequence += 1
        owed = 0
        lastWasComfortNoise = head.payloadType == configuration.comfortNoisePayloadType
        counters.played += 1
        return .frame(reference(i, head))
    }

    /// Whether a frame starting playout (first frame, or first after a gap) may go: the
    /// depth has reached the target, or it has waited target − one frame.
    private func isReady(_ head: Slot, now: Double) -> Bool {
        depthSamples >= targetSamples || now - head.arrival >= targetDelay - frameDuration - 1e-9
    }

    /// Whether `head` sits where the timeline says (the last frame taken plus one frame
    /// duration per sequence number since), within half a frame.
    private func isContinuous(_ head: Slot) -> Bool {
        let expected = anchorTimestamp + (head.sequence - anchorSequence) * frameSamples
        return abs(head.timestamp - expected) <= frameSamples / 2
    }

    private mutating func startWindow(_ now: Double) {
        windowStart = now
        windowMin = .max
        windowMax = .min
    }

    /// Records the depth of a pop; at the end of a window decides whether to shrink or grow.
    private mutating func trackWindow(depth: Int64, now: Double) {
        windowMin = min(windowMin, depth)
        windowMax = max(windowMax, depth)
        guard now - windowStart >= configuration.shrinkWindow else { return }
        let target = targetSamples
        shrinkPending = windowMin >= 2 * frameSamples && windowMax >= target + frameSamples
        growPending = windowMax + frameSamples <= target
        startWindow(now)
    }

    // MARK: - Storage

    private var rate: Double { Double(configuration.clockRate) }

    private var targetSamples: Int64 { Int64((targetDelay * rate).rounded()) }

    private var depthSamples: Int64 {
        guard state != .idle, highestSequence >= nextSequence else { return 0 }
        return (highestSequence - nextSequence + 1) * frameSamples
    }

    private func index(_ sequence: Int64) -> Int {
        let capacity = Int64(configuration.capacity)
        return Int(((sequence % capacity) + capacity) % capacity)
    }

    private func isHeld(_ sequence: Int64) -> Bool { heldSlot(sequence) != nil }

    private func heldSlot(_ sequence: Int64) -> Slot? {
        let slot = slots[index(sequence)]
        return slot.sequence == sequence && slot.state == .held ? slot : nil
    }

    private func reference(_ i: Int, _ slot: Slot) -> FrameRef {
        FrameRef(
            sequenceNumber: UInt16(truncatingIfNeeded: slot.sequence),
            timestamp: UInt32(truncatingIfNeeded: slot.timestamp),
            marker: slot.marker, ssrc: ssrc, payloadType: slot.payloadType,
            arrival: slot.arrival, payloadCount: slot.count, slot: i, generation: slot.generation)
    }

    private func validCount(_ frame: FrameRef) -> Int {
        guard frame.slot >= 0, frame.slot < slots.count else { return 0 }
        let slot = slots[frame.slot]
        guard slot.generation == frame.generation, slot.state != .empty,
            UInt16(truncatingIfNeeded: slot.sequence) == frame.sequenceNumber
        else { return 0 }
        return min(slot.count, frame.payloadCount)
    }

    private mutating func store(
        _ packet: Packet, sequence: Int64, timestamp: Int64, payload: UnsafeRawBufferPointer,
        arrival: Double
    ) {
        let i = index(sequence)
        let generation = slots[i].generation &+ 1
        slots[i] = Slot(
            sequence: sequence, timestamp: timestamp, arrival: arrival, count: payload.count,
            marker: packet.marker, payloadType: packet.payloadType, state: .held,
            generation: generation)
        if payload.count > 0 {
            let start = i * configuration.maxPayloadSize
            storage.withUnsafeMutableBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: bytes[start..<start + payload.count])
                    .copyMemory(from: payload)
            }
        }
        if sequence > highestSequence {
            highestSequence = sequence
            highestTimestamp = timestamp
        }
        // Learn the frame duration from two equal timestamp steps in a row (a single
        // step may span a silent gap); until then believe the first step seen.
        if sequence == lastInsertedSequence + 1 {
            let step = timestamp - lastInsertedTimestamp
            if step > 0, Double(step) <= Self.longestFrame * rate,
                step == lastTimestampStep || !frameConfirmed
            {
                frameSamples = step
                frameConfirmed = frameConfirmed || step == lastTimestampStep
            }
            lastTimestampStep = step
        }
        lastInsertedSequence = sequence
        lastInsertedTimestamp = timestamp
        observeTransit(timestamp: timestamp, arrival: arrival)
    }

    /// Removes the frame (or hole) at the playout cursor to make room.
    private mutating func dropHead() {
        if let head = heldSlot(nextSequence) {
            slots[index(nextSequence)].state = .consumed
            counters.overflowDrops += 1
            anchorSequence = nextSequence
            anchorTimestamp = head.timestamp
        } else {
            counters.lost += 1
        }
        nextSequence += 1
        if state == .prefetching {
            // Before playout the cursor sits on the oldest frame held.
            while nextSequence < highestSequence, !isHeld(nextSequence) { nextSequence += 1 }
        }
    }

    private mutating func enforceMaximumDelay() {
        let bound = max(Int64((configuration.maximumDelay * rate).rounded(.down)), frameSamples)
        while depthSamples > bound { dropHead() }
    }

    private mutating func flush() {
        for i in slots.indices { slots[i].state = .empty }
        owed = 0
        lastWasComfortNoise = false
        shrinkPending = false
        growPending = false
    }

    private mutating func begin(_ packet: Packet, payload: UnsafeRawBufferPointer, arrival: Double) {
        state = .prefetching
        ssrc = packet.ssrc
        probationSequence = nil
        let sequence = Int64(packet.sequenceNumber)
        let timestamp = Int64(packet.timestamp)
        nextSequence = sequence
        highestSequence = sequence
        highestTimestamp = timestamp
        lastInsertedSequence = sequence
        lastInsertedTimestamp = timestamp
        lastTimestampStep = 0
        frameConfirmed = false
        store(packet, sequence: sequence, timestamp: timestamp, payload: payload, arrival: arrival)
    }

    private mutating func restart(_ packet: Packet, payload: UnsafeRawBufferPointer, arrival: Double) {
        counters.resyncs += 1
        flush()
        hasBase = false
        begin(packet, payload: payload, arrival: arrival)
    }

    /// A packet far outside the window: dropped, unless it follows the previous such
    /// packet, in which case the sender really jumped and the stream restarts there.
    private mutating func probation(
        _ packet: Packet, payload: UnsafeRawBufferPointer, arrival: Double
    ) -> InsertOutcome {
        if let previous = probationSequence, packet.sequenceNumber == previous &+ 1 {
            restart(packet, payload: payload, arrival: arrival)
            return .resynchronized
        }
        probationSequence = packet.sequenceNumber
        counters.discarded += 1
        return .discarded
    }

    // MARK: - Jitter estimate

    private mutating func observeTransit(timestamp: Int64, arrival: Double) {
        let transit = arrival - Double(timestamp) / rate
        guard hasBase else {
            hasBase = true
            baseTransit = transit
            baseTime = arrival
            jitterTime = arrival
            return
        }
        let leaked = baseTransit + Self.baseLeak * max(arrival - baseTime, 0)
        baseTime = max(baseTime, arrival)
        if transit < baseTransit - configuration.resyncThreshold
            || transit > leaked + configuration.resyncThreshold
        {
            // The sender re-based its timestamps: start the base afresh, not as jitter.
            counters.resyncs += 1
            baseTransit = transit
            return
        }
        baseTransit = min(leaked, transit)
        let excess = transit - baseTransit
        let decay = pow(0.5, max(arrival - jitterTime, 0) / configuration.jitterHalfLife)
        jitter = min(max(excess, jitter * decay), configuration.maximumDelay)
        jitterTime = max(jitterTime, arrival)
    }
}
