// RFC 7983 §7 (updating RFC 5764 §5.1.2): one UDP port carries STUN, DTLS and SRTP/SRTCP
// (and ZRTP, TURN channels), told apart by the first octet.
//
//                  +----------------+
//                  |        [0..3] -+--> forward to STUN
//                  |                |
//                  |      [16..19] -+--> forward to ZRTP
//                  |                |
//      packet -->  |      [20..63] -+--> forward to DTLS
//                  |                |
//                  |      [64..79] -+--> forward to TURN Channel
//                  |                |
//                  |    [128..191] -+--> forward to RTP/RTCP
//                  +----------------+

/// What a datagram on a WebRTC media port is, from its first octet (RFC 7983 §7).
public enum PacketKind: Sendable, Hashable, CaseIterable {
    /// 0–3: STUN (ICE checks, consent).
    case stun
    /// 16–19: ZRTP.
    case zrtp
    /// 20–63: DTLS (the DTLS-SRTP handshake).
    case dtls
    /// 64–79: a TURN channel.
    case turnChannel
    /// 128–191: RTP or RTCP (SRTP/SRTCP).
    case rtp
    /// Anything else (and an empty datagram): drop it.
    case unknown

    /// The kind of a datagram whose first octet is `firstByte`.
    @inline(__always)
    public init(firstByte: UInt8) {
        switch firstByte {
        case 0...3: self = .stun
        case 16...19: self = .zrtp
        case 20...63: self = .dtls
        case 64...79: self = .turnChannel
        case 128...191: self = .rtp
        default: self = .unknown
        }
    }

    /// The kind of `datagram` (`.unknown` when it is empty).
    public init(datagram: some Collection<UInt8>) {
        guard let first = datagram.first else { self = .unknown; return }
        self.init(firstByte: first)
    }

    /// True when the first octet says STUN (0–3).
    @inline(__always)
    public static func isSTUN(firstByte: UInt8) -> Bool { firstByte <= 3 }

    /// True when the first octet says DTLS (20–63).
    @inline(__always)
    public static func isDTLS(firstByte: UInt8) -> Bool { (20...63).contains(firstByte) }

    /// True when the first octet says RTP or RTCP (128–191).
    @inline(__always)
    public static func isRTP(firstByte: UInt8) -> Bool { (128...191).contains(firstByte) }
}
