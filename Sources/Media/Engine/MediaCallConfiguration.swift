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

    /// True when packets can be relayed as they are (same codec both sides: PCMU, PCMA,
    /// G.722 or Opus, whatever payload type each leg uses).
    public var isPassthrough: Bool { allowPassthrough && trunk.codec.isSameCodec(as: platform.codec) }

    /// The PCM rate a transcoded call runs at (and its taps hear).
    public var callSampleRate: Int { Self.callSampleRate(trunk: trunk.codec, platform: platform.codec) }

    /// 16 kHz when both legs are wideband (G.722 or Opus, in any pairing), so neither side
    /// loses its band; 8 kHz when either is G.711, whose band is all the call can carry.
    /// Opus runs at the call's rate (no resampler) unless its settings raise the encoder's
    /// (`AudioCodec.OpusSettings.sampleRate`: an upsampler in front of it, the call itself
    /// unchanged); G.722 decodes to 8 kHz on an 8 kHz call.
    public static func callSampleRate(trunk: AudioCodec, platform: AudioCodec) -> Int {
        trunk.isWideband && platform.isWideband ? 16_000 : 8000
    }
}
