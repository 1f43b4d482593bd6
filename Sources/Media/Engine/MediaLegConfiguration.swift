import IOCore

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
