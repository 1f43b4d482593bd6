import IOCore

/// The two sides of a bridged call.
public enum MediaLeg: String, Sendable, CaseIterable {
    /// Toward the carrier: G.711 or G.722.
    case trunk
    /// Toward the platform (the app): Opus, or PCMU when the app offers it.
    case platform

    var other: MediaLeg { self == .trunk ? .platform : .trunk }
}

/// One leg's RTP settings, from the SDP offer/answer.
public struct MediaLegConfiguration: Sendable {
    public var codec: AudioCodec
    public var payloadType: UInt8
    /// RFC 4733 telephone-event payload type, when negotiated.
    public var telephoneEventPayloadType: UInt8?
    /// Where to send; nil until the SDP is known (symmetric RTP latches the real source).
    public var remote: SocketAddress?
    /// Listen for DTMF tones in the audio this leg receives (carriers without RFC 4733) and
    /// report them like RFC 4733 digits. Transcoding calls only: passthrough never decodes.
    /// Default false.
    public var inbandDTMF: Bool
    /// SRTP keys from the SDES exchange (RFC 4568); nil (the default) is plain RTP. Every
    /// packet sent is protected and every packet received must authenticate, RTCP included.
    /// A `reconfigure` with other keys starts fresh sessions (a re-INVITE's new a=crypto).
    public var srtp: SRTPConfiguration?
    /// WebRTC on this leg (ICE-lite, DTLS-SRTP keyed from the handshake, rtcp-mux); `srtp` is
    /// then unused. nil: plain RTP, or SDES SRTP.
    public var webrtc: WebRTCMediaConfiguration?
    /// Who may send RTP into a plain or SDES leg (docs/media.md, "Who may send media").
    public var sourcePolicy = RTPSourcePolicyConfiguration()
    /// The same for its RTCP socket.
    public var rtcpSourcePolicy = RTPSourcePolicyConfiguration.rtcp
    /// Whether the source policy is applied. Default true; false accepts every source (the
    /// bench's baseline for what the check costs, never a gateway setting).
    public var checksSources = true
    /// How fast digits received on this leg may be reported (RFC 4733 and in-band alike).
    public var dtmfRate = DTMFRateLimit.Configuration()
    /// Digits that may wait to be sent on this leg (regenerated from the other leg, or asked
    /// for by the app); more are dropped and counted. Default 64.
    public var dtmfQueueLimit = 64

    public init(
        codec: AudioCodec, payloadType: UInt8, telephoneEventPayloadType: UInt8? = nil, remote: SocketAddress? = nil,
        inbandDTMF: Bool = false, srtp: SRTPConfiguration? = nil
    ) {
        self.codec = codec
        self.payloadType = payloadType
        self.telephoneEventPayloadType = telephoneEventPayloadType
        self.remote = remote
        self.inbandDTMF = inbandDTMF
        self.srtp = srtp
    }
}

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

/// What a call's media reports, off the media thread (never per packet).
public enum MediaEvent: Sendable, Equatable {
    /// The first RTP packet arrived on a leg (early media on the trunk before answer).
    case firstPacket(MediaLeg)
    /// A DTMF digit finished on a leg (RFC 4733 or in-band).
    case dtmf(MediaLeg, digit: Character, durationMs: Int)
    /// No RTP for the configured timeout on a leg.
    case timeout(MediaLeg)
    /// A WebRTC leg's ICE check nominated a pair and DTLS keyed SRTP: media flows.
    case webrtcConnected(MediaLeg)
    /// A WebRTC leg gave up (no ICE check, a failed or stalled DTLS handshake, a wrong
    /// fingerprint, consent lost): it sends nothing more.
    case webrtcFailed(MediaLeg, String)
}

/// How a leg's received audio reaches the other leg.
public enum MediaPlayout: String, Sendable, Equatable {
    /// Same codec both sides: packets relayed as they arrive, never decoded.
    case relay
    /// Transcoded the moment each packet arrives (calm network).
    case arrival
    /// Through the jitter buffer on the 20 ms tick (jitter or reordering seen).
    case buffered
    /// Through the jitter buffer into the mix of a merged call.
    case mixing
}

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
