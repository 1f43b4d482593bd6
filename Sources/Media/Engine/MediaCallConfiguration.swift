import IOCore

/// What a call's media needs: both legs, the jitter buffer policy, the RTP timeout.
public struct MediaCallConfiguration: Sendable {
    public var trunk: MediaLegConfiguration
    public var platform: MediaLegConfiguration
    /// Seconds without RTP on the trunk leg before `.timeout` (0 disables). Default 30.
    public var rtpTimeout: Double = 30
    /// Relay packets without decoding when both legs use the same codec. Default true.
    public var allowPassthrough = true
    /// Seconds between our RTCP reports on each leg (RFC 3550 §6.2 suggests 5). Default 5.
    public var rtcpInterval: Double = 5
    /// Transcode each packet the moment it arrives while the network is calm, bringing the
    /// jitter buffer in only for jitter or reordering (docs/media.md, "Playout"). false:
    /// always through the jitter buffer and the 20 ms tick. Default true.
    public var playoutOnArrival = true
    /// Seconds without jitter or reordering before a stream leaves the jitter buffer for
    /// playout on arrival again. Default 4.
    public var playoutCalmPeriod: Double = 4
    /// Gets a copy of every RTP and RTCP packet of the trunk leg (a capture, HEP); nil by
    /// default. A `MediaCall` keeps its tap through `reconfigure` and `merge`.
    public var trunkTap: (any MediaPacketTap)?

    public init(
        trunk: MediaLegConfiguration, platform: MediaLegConfiguration, rtpTimeout: Double = 30,
        allowPassthrough: Bool = true
    ) {
        self.trunk = trunk
        self.platform = platform
        self.rtpTimeout = rtpTimeout
        self.allowPassthrough = allowPassthrough
    }

    /// True when packets can be relayed as they are (same codec both sides).
    public var isPassthrough: Bool { allowPassthrough && trunk.codec.isSameCodec(as: platform.codec) }
}
