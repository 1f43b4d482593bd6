/// Settings of a ``JitterBuffer``. All durations are in seconds, like the `now` and
/// `arrival` times the buffer is given.
public struct JitterBufferConfiguration: Sendable, Equatable {
    /// RTP clock rate of the stream, in Hz: 8000 for G.711 and for G.722 (which is
    /// signalled at 8000 although it samples at 16 kHz), 48000 for Opus. Default 8000.
    public var clockRate: Int
    /// Slots in the ring, in frames: the hard memory bound. Default 50 (1 s of 20 ms frames).
    public var capacity: Int
    /// Largest payload a slot holds, in bytes; larger payloads are refused. Default 1500.
    public var maxPayloadSize: Int
    /// Lowest target depth. The depth counts the frame about to be played, so 40 ms keeps
    /// one 20 ms frame of margin for jitter. Default 0.040.
    public var minimumDelay: Double
    /// Highest target depth, and the bound on the depth itself: frames beyond it are
    /// dropped from the head on arrival. Default 0.200.
    public var maximumDelay: Double
    /// Frame duration assumed until the stream's own is seen (two consecutive packets
    /// agreeing). Default 0.020.
    public var defaultFrameDuration: Double
    /// Time after which the jitter estimate has halved when no larger jitter is seen:
    /// how slowly the target comes down after a burst. Default 2.0.
    public var jitterHalfLife: Double
    /// Length of the window over which the buffer must have held a spare frame before one
    /// frame is skipped to lower the delay. Default 2.0.
    public var shrinkWindow: Double
    /// Pops of packet-loss concealment while the buffer is empty before it answers
    /// `.silence` instead (the sender has probably gone quiet). Default 3.
    public var maxUnderrunConcealment: Int
    /// Payload type of comfort noise (RFC 3389): after such a frame an empty buffer is an
    /// expected silence, not an underrun. Default 13; `nil` for none.
    public var comfortNoisePayloadType: UInt8?
    /// A change in transit time (arrival minus RTP time) larger than this is a timeline
    /// jump (the sender re-based its timestamps) rather than network jitter. Default 0.5.
    public var resyncThreshold: Double

    /// A configuration; every argument has the documented default.
    public init(
        clockRate: Int = 8_000,
        capacity: Int = 50,
        maxPayloadSize: Int = 1_500,
        minimumDelay: Double = 0.040,
        maximumDelay: Double = 0.200,
        defaultFrameDuration: Double = 0.020,
        jitterHalfLife: Double = 2.0,
        shrinkWindow: Double = 2.0,
        maxUnderrunConcealment: Int = 3,
        comfortNoisePayloadType: UInt8? = 13,
        resyncThreshold: Double = 0.5
    ) {
        self.clockRate = clockRate
        self.capacity = capacity
        self.maxPayloadSize = maxPayloadSize
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.defaultFrameDuration = defaultFrameDuration
        self.jitterHalfLife = jitterHalfLife
        self.shrinkWindow = shrinkWindow
        self.maxUnderrunConcealment = maxUnderrunConcealment
        self.comfortNoisePayloadType = comfortNoisePayloadType
        self.resyncThreshold = resyncThreshold
    }

    /// The configuration with nonsensical values brought into range (a capacity of 2 to
    /// 32768, a positive clock rate, minimum ≤ maximum, ...), so no setting can crash.
    var sanitized: JitterBufferConfiguration {
        var c = self
        c.clockRate = max(c.clockRate, 1)
        // Sequence numbers extend within ±32768, and no UDP payload exceeds 65535 bytes.
        c.capacity = min(max(c.capacity, 2), 32_768)
        c.maxPayloadSize = min(max(c.maxPayloadSize, 0), 65_535)
        c.defaultFrameDuration = c.defaultFrameDuration > 0 ? c.defaultFrameDuration : 0.020
        c.minimumDelay = max(c.minimumDelay.isFinite ? c.minimumDelay : 0, 0)
        c.maximumDelay = max(c.maximumDelay.isFinite ? c.maximumDelay : 0, c.minimumDelay)
        c.jitterHalfLife = c.jitterHalfLife > 0 ? c.jitterHalfLife : 2.0
        c.shrinkWindow = c.shrinkWindow > 0 ? c.shrinkWindow : 2.0
        c.maxUnderrunConcealment = max(c.maxUnderrunConcealment, 0)
        c.resyncThreshold = c.resyncThreshold > 0 ? c.resyncThreshold : 0.5
        return c
    }
}
