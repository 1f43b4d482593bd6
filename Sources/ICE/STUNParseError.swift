/// Why bytes are not a STUN message we accept (RFC 8489 §5, §6.3, §14). A malformed message
/// is dropped (or answered 400 when it is a request whose header parsed), never a crash.
public enum STUNParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than the 20 octets of the header.
    case truncatedHeader(length: Int)
    /// One of the two most significant bits is set: not STUN (RTP, DTLS ... RFC 7983).
    case notSTUN(firstByte: UInt8)
    /// The magic cookie is not 0x2112A442 (an RFC 3489 message, or not STUN).
    case badMagicCookie(UInt32)
    /// The length field is not a multiple of 4 (§5: attributes are padded).
    case lengthNotMultipleOfFour(Int)
    /// The length field and the datagram disagree (one datagram holds one message).
    case lengthMismatch(declared: Int, available: Int)
    /// An attribute's header or value runs past the message.
    case attributeBeyondMessage(type: STUNAttributeType, offset: Int)
    /// A known attribute with a value of the wrong size or content.
    case invalidAttribute(type: STUNAttributeType, reason: String)
    /// An attribute follows FINGERPRINT, which must be last (§14.7).
    case attributeAfterFingerprint(STUNAttributeType)

    /// True when the bytes are not STUN at all (another protocol on the same port), rather
    /// than a broken STUN message.
    public var isNotSTUN: Bool {
        switch self {
        case .notSTUN, .badMagicCookie, .truncatedHeader: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .truncatedHeader(let length): "STUN message of \(length) octets is shorter than the 20-octet header"
        case .notSTUN(let byte): "first octet 0x\(String(byte, radix: 16)) is not STUN (top two bits must be 0)"
        case .badMagicCookie(let cookie): "magic cookie 0x\(String(cookie, radix: 16)) is not 0x2112a442"
        case .lengthNotMultipleOfFour(let length): "STUN length \(length) is not a multiple of 4"
        case .lengthMismatch(let declared, let available):
            "STUN length says \(declared) octets of attributes but \(available) follow the header"
        case .attributeBeyondMessage(let type, let offset): "\(type) at offset \(offset) runs past the message"
        case .invalidAttribute(let type, let reason): "invalid \(type): \(reason)"
        case .attributeAfterFingerprint(let type): "\(type) follows FINGERPRINT, which must be last"
        }
    }
}
