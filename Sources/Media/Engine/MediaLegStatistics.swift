import IOCore

/// Counters of one leg, for RTCP, `/metrics` and tests.
public struct MediaLegStatistics: Sendable, Equatable {
    public var packetsReceived = 0
    public var packetsSent = 0
    public var bytesReceived = 0
    public var packetsLost: Int64 = 0
    public var jitterMs = 0.0
    public var concealed = 0
    public var late = 0
    public var malformed = 0
    /// Packets with a payload type the SDP did not give this leg (RTCP sent to the RTP
    /// port, a stray stream): dropped before they can latch symmetric RTP.
    public var otherPayloadTypes = 0
    /// The payload type of the last packet counted in `otherPayloadTypes`.
    public var lastOtherPayloadType: UInt8?
    public var dtmfDigits = 0
    /// Digits dropped: reported faster than `dtmfRate` allows, or with the queue toward the
    /// other leg full.
    public var dtmfDropped = 0
    /// Packets (RTP and RTCP) dropped because they came from an address the source policy
    /// does not take: not the peer's (RTPSourcePolicy).
    public var sourceDropped = 0
    /// Packets dropped because they came before the peer's SDP named an address.
    public var beforeSDP = 0
    /// SRTP/SRTCP packets dropped because they did not authenticate (tampered, or another key).
    public var srtpAuthFailures = 0
    /// SRTP/SRTCP packets dropped as replays (seen already, or behind the replay window).
    public var srtpReplays = 0
    /// How what this leg receives is played out now.
    public var playout = MediaPlayout.relay
    /// Whether what this leg receives is played the moment it arrives.
    public var onArrival: Bool { playout == .arrival }
    /// Times this leg's playout moved between arrival and the jitter buffer (both ways).
    public var playoutSwitches = 0
    /// Frames dropped to keep the delay from growing: the buffer's delay let go when the
    /// stream returned to playout on arrival.
    public var staleDropped = 0
    /// Extra frames played (two in one tick) to catch up after the media thread missed ticks.
    public var caughtUp = 0
    /// The jitter buffer's depth, in milliseconds (0 while on arrival).
    public var bufferMs = 0
    /// From the peer's RTCP report blocks about our stream.
    public var roundTripMs: Double?
    public var remoteFractionLost: Double?
    /// Where RTP currently goes (after symmetric latching).
    public var remote: SocketAddress?
}
