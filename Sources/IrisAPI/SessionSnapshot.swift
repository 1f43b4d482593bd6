/// `GET /v1/sessions/{roomId}`: where a session is now.
public struct SessionSnapshot: Codable, Sendable, Equatable {
    public struct LegStats: Codable, Sendable, Equatable {
        public var packetsReceived: Int
        public var packetsSent: Int
        public var packetsLost: Int64
        public var jitterMs: Double
        public var roundTripMs: Double?
        /// The SRTP suite when the leg is encrypted (`AES_CM_128_HMAC_SHA1_80`, ...); absent for plain RTP.
        public var srtp: String?
        /// SRTP/SRTCP packets dropped because they failed authentication (tampered, wrong key); SRTP legs only.
        public var srtpAuthFailures: Int?
        /// SRTP/SRTCP packets dropped as replayed or too old; SRTP legs only.
        public var srtpReplays: Int?
        /// How what this leg receives reaches the other: `relay` (same codec), `arrival`
        /// (transcoded as each packet arrives), `buffered` (through the jitter buffer: jitter
        /// seen), `mixing` (a merged call).
        public var playout: String?
        /// The RTP payload type this leg's SDP negotiated for audio.
        public var payloadType: Int?
        /// Packets dropped because their payload type was not one the SDP gave this leg (a
        /// carrier sending another codec than it answered, a stray stream).
        public var otherPayloadTypes: Int?
        /// The payload type of the last of those packets.
        public var otherPayloadType: Int?
        /// Packets (RTP, RTCP; DTLS and STUN on WebRTC) dropped because they did not come from
        /// the leg's peer (docs/media.md, "Who may send media").
        public var sourceDropped: Int?
        /// Digits dropped: received faster than a person presses, or with the queue toward
        /// the other leg full.
        public var dtmfDropped: Int?
        public init(
            packetsReceived: Int, packetsSent: Int, packetsLost: Int64, jitterMs: Double, roundTripMs: Double?,
            srtp: String? = nil, srtpAuthFailures: Int? = nil, srtpReplays: Int? = nil, playout: String? = nil,
            payloadType: Int? = nil, otherPayloadTypes: Int? = nil, otherPayloadType: Int? = nil,
            sourceDropped: Int? = nil, dtmfDropped: Int? = nil
        ) {
            self.packetsReceived = packetsReceived
            self.packetsSent = packetsSent
            self.packetsLost = packetsLost
            self.jitterMs = jitterMs
            self.roundTripMs = roundTripMs
            self.srtp = srtp
            self.srtpAuthFailures = srtpAuthFailures
            self.srtpReplays = srtpReplays
            self.playout = playout
            self.payloadType = payloadType
            self.otherPayloadTypes = otherPayloadTypes
            self.otherPayloadType = otherPayloadType
            self.sourceDropped = sourceDropped
            self.dtmfDropped = dtmfDropped
        }
    }
    public var roomId: String
    public var traceId: String
    public var direction: String
    public var status: SessionStatus
    public var sourceTN: String
    public var targetTN: String
    public var profile: String
    public var routingId: String?
    public var earlyMedia: Bool
    public var muted: Bool
    public var sip: SIPDetails?
    public var codec: String?
    public var ended: EndReason?
    public var trunk: LegStats?
    public var platform: LegStats?
    /// The last event's `seq`: subscribe with `since=` this plus one to see only new events.
    public var lastSeq: Int
    /// Inbound: what the carrier's INVITE said beyond the numbers, as in `onNotification`.
    public var carrier: CarrierCallInfo?
    /// The platform leg's Opus encoder settings in effect, every key given (`maxBandwidth`
    /// as the band the call codes when automatic); absent when that leg is not Opus (PCMU
    /// passthrough) or not negotiated yet (an inbound call before `join`).
    public var opus: OpusOptions?

    public init(
        roomId: String, traceId: String, direction: String, status: SessionStatus, sourceTN: String, targetTN: String,
        profile: String, routingId: String?, earlyMedia: Bool, muted: Bool, sip: SIPDetails?, codec: String?,
        ended: EndReason?, trunk: LegStats?, platform: LegStats?, lastSeq: Int, carrier: CarrierCallInfo? = nil,
        opus: OpusOptions? = nil
    ) {
        self.roomId = roomId
        self.traceId = traceId
        self.direction = direction
        self.status = status
        self.sourceTN = sourceTN
        self.targetTN = targetTN
        self.profile = profile
        self.routingId = routingId
        self.earlyMedia = earlyMedia
        self.muted = muted
        self.sip = sip
        self.codec = codec
        self.ended = ended
        self.trunk = trunk
        self.platform = platform
        self.lastSeq = lastSeq
        self.carrier = carrier
        self.opus = opus
    }
}

/// `GET /v1/sessions`.
public struct SessionList: Codable, Sendable, Equatable {
    public var sessions: [SessionSnapshot]
    public init(sessions: [SessionSnapshot]) { self.sessions = sessions }
}
