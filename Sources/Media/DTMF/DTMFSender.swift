/// The RFC 4733 send schedule for DTMF: queue digits, then call `tick(timestamp:)` once per
/// packet interval (20 ms) with the RTP timestamp of that interval's audio; it returns the
/// telephone-event report to send, if any.
///
/// Per digit (RFC 4733 §2.5.1):
/// - every report of one event carries the RTP timestamp of the tick the event started on;
/// - the first report has the marker bit, and a duration of one interval;
/// - each later report's duration grows by one interval up to the digit's duration;
/// - the report that reaches it has the E bit and is sent three times in all (on this and
///   the next two ticks), so a lost end packet does not leave the far end guessing;
/// - the next digit starts once the inter-digit gap has passed after the tone's end and
///   the end retransmissions are out;
/// - an event longer than 0xFFFF units is cut into segments (§2.5.1.3): the next segment's
///   timestamp is the previous one's plus 0xFFFF, without a marker, and only the last
///   segment ends with the E bit.
///
/// Durations follow the timestamps passed in, so a skipped tick does not stretch a digit.
/// The caller owns the RTP header: payload type, SSRC and sequence numbers (one per report,
/// retransmissions included), and should not send audio while `isSendingEvent`.
public struct DTMFSender: Sendable {
    /// Sender settings.
    public struct Configuration: Sendable, Equatable {
        /// The telephone-event RTP clock rate in Hz (equal to the audio's). Default 8000.
        public var clockRate: Int
        /// The packet interval in ms: how often `tick` is called. Default 20.
        public var packetIntervalMs: Int
        /// Each digit's tone length in ms unless `enqueue` says otherwise. Default 100.
        public var durationMs: Int
        /// The silence between digits in ms unless `enqueue` says otherwise. Default 50.
        public var gapMs: Int
        /// The volume field, in -dBm0. Default 10.
        public var volume: UInt8
        /// How many times the end report is sent. Default 3 (RFC 4733 §2.5.1.4).
        public var endReportCount: Int
        /// Digits that may wait in the queue; `enqueue` refuses more. Default 64.
        public var maxQueued: Int

        /// Settings with the documented defaults.
        public init(
            clockRate: Int = 8_000, packetIntervalMs: Int = 20, durationMs: Int = 100, gapMs: Int = 50,
            volume: UInt8 = 10, endReportCount: Int = 3, maxQueued: Int = 64
        ) {
            self.clockRate = max(clockRate, 1)
            self.packetIntervalMs = max(packetIntervalMs, 1)
            self.durationMs = durationMs
            self.gapMs = gapMs
            self.volume = min(volume, 63)
            self.endReportCount = max(endReportCount, 1)
            self.maxQueued = max(maxQueued, 1)
        }
    }

    /// One report to send: the payload, the RTP timestamp for its header, and the marker bit.
    public struct Packet: Sendable, Hashable {
        /// The telephone-event payload.
        public var report: TelephoneEvent
        /// The RTP timestamp: the event's (segment's) start, the same for all its reports.
        public var timestamp: UInt32
        /// The RTP marker bit: set on the first report of an event.
        public var marker: Bool

        /// A packet.
        public init(report: TelephoneEvent, timestamp: UInt32, marker: Bool) {
            self.report = report
            self.timestamp = timestamp
            self.marker = marker
        }
    }

    private struct Pending: Sendable {
        var digit: DTMFDigit
        var durationUnits: Int
        var gapUnits: Int
    }

    private struct Sending: Sendable {
        var pending: Pending
        var eventTimestamp: UInt32
        /// Units from the event's start to the current segment's start.
        var segmentStart: Int
        /// Units covered so far; never decreases, even if timestamps step back.
        var elapsed = 0
        var started = false
        var endReportsSent = 0
        var lastReport = TelephoneEvent(event: 0, duration: 0)
    }

    /// The settings in use.
    public let configuration: Configuration
    private var queue: [Pending] = []
    private var head = 0
    private var sending: Sending?
    /// The earliest timestamp the next digit may start at, once one has been sent.
    private var nextStart: UInt32?

    /// A sender with an empty queue.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        queue.reserveCapacity(32)
    }

    /// Whether a digit's reports are being sent (send no audio meanwhile).
    public var isSendingEvent: Bool { sending != nil }

    /// Whether nothing is being sent or waiting to be.
    public var isIdle: Bool { sending == nil && head == queue.count }

    /// The number of digits queued and not yet started.
    public var queuedCount: Int { queue.count - head }

    /// Queues `digits` (0-9 * # A-D, lowercase accepted) behind any already queued, each
    /// lasting `durationMs` and followed by `gapMs` of silence (defaults from the
    /// configuration). All or nothing: throws, queuing nothing, on a bad digit, a duration
    /// outside 1...60000 ms, a negative gap, or more digits than `maxQueued` would wait.
    public mutating func enqueue(_ digits: String, durationMs: Int? = nil, gapMs: Int? = nil) throws(DTMFError) {
        let duration = durationMs ?? configuration.durationMs
        let gap = gapMs ?? configuration.gapMs
        guard (1...60_000).contains(duration) else { throw .invalidDuration(milliseconds: duration) }
        guard gap >= 0 else { throw .invalidGap(milliseconds: gap) }
        let keys = try DTMFDigit.digits(digits)
        guard queuedCount + keys.count <= configuration.maxQueued else {
            throw .queueFull(limit: configuration.maxQueued)
        }
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
        for key in keys {
            queue.append(Pending(digit: key, durationUnits: max(units(duration), 1), gapUnits: units(gap)))
        }
    }

    /// Drops the queued digits. A digit being sent is finished (its end reports still go
    /// out) so the far end does not hold a key down.
    public mutating func cancelQueued() {
        queue.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Called once per packet interval with the RTP timestamp this interval's audio would
    /// carry; returns the report to send now, or nil.
    public mutating func tick(timestamp: UInt32) -> Packet? {
        if sending == nil {
            guard head < queue.count else { return nil }
            if let nextStart, Int32(bitPattern: timestamp &- nextStart) < 0 { return nil }
            sending = Sending(pending: queue[head], eventTimestamp: timestamp, segmentStart: 0)
            head += 1
        }
        guard var state = sending else { return nil }
        defer { sending = state.endReportsSent >= configuration.endReportCount ? nil : state }

        if state.endReportsSent > 0 {
            state.endReportsSent += 1
            return Packet(
                report: state.lastReport, timestamp: state.eventTimestamp &+ UInt32(state.segmentStart), marker: false)
        }
        let total = state.pending.durationUnits
        // Units covered once this interval's audio has played.
        let sinceStart = max(Int(Int32(bitPattern: timestamp &- state.eventTimestamp)), 0)
        let elapsed = max(min(sinceStart + samplesPerInterval, total), state.elapsed)
        state.elapsed = elapsed
        let full = Int(UInt16.max)
        while elapsed - state.segmentStart > full { state.segmentStart += full }
        let isEnd = elapsed >= total
        let report = TelephoneEvent(
            digit: state.pending.digit, isEnd: isEnd, volume: configuration.volume,
            duration: UInt16(clamping: elapsed - state.segmentStart))
        let marker = !state.started
        state.started = true
        state.lastReport = report
        if isEnd {
            state.endReportsSent = 1
            nextStart = state.eventTimestamp &+ UInt32(truncatingIfNeeded: total + state.pending.gapUnits)
        }
        return Packet(report: report, timestamp: state.eventTimestamp &+ UInt32(state.segmentStart), marker: marker)
    }

    private var samplesPerInterval: Int { configuration.clockRate * configuration.packetIntervalMs / 1000 }

    private func units(_ milliseconds: Int) -> Int { milliseconds * configuration.clockRate / 1000 }
}

/// In-band DTMF for carriers that want the tones in the audio: queue digits, pull 20 ms
/// frames of 8 kHz PCM (spandsp's generator; it runs at 8 kHz only). Use the frames in
/// place of the caller's audio while `isActive`. Not thread-safe: one owner.
public final class InbandDTMFSender {
    /// Samples per 20 ms frame at 8 kHz.
    public static let frameSamples = 160
    private let generator: DTMFGenerator
    private var active = false

    /// A sender whose digits last `durationMs` with `gapMs` of silence after each
    /// (defaults 100 and 50, as for RFC 4733), at `level` dBm0 for the low tone.
    public init(durationMs: Int32 = 100, gapMs: Int32 = 50, level: Int32 = -10) throws(SpanDSPError) {
        generator = try DTMFGenerator(level: level, onMilliseconds: durationMs, offMilliseconds: gapMs)
    }

    /// Whether digit audio (tones or their gaps) is still being produced.
    public var isActive: Bool { active }

    /// Queues `digits` (0-9 * # A-D) behind any already queued; all or nothing.
    public func enqueue(_ digits: String) throws(SpanDSPError) {
        try generator.queue(digits)
        if !digits.isEmpty { active = true }
    }

    /// Writes the next 20 ms (160 samples) into `pcm` (contents replaced, storage reused);
    /// silence once the queue has run dry. Returns whether the frame held digit audio.
    @discardableResult
    public func nextFrame(into pcm: inout [Int16]) -> Bool {
        let produced = generator.generate(count: Self.frameSamples, into: &pcm)
        active = produced == Self.frameSamples
        return produced > 0
    }
}
