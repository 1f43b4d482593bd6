import IOCore

/// One STUN attribute (RFC 8489 §14, RFC 8445 §16.1), decoded. Each attribute on the wire is
/// a type-length-value padded to a multiple of 4 octets:
///
///     0                   1                   2                   3
///     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |         Type                  |            Length             |
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |                         Value (variable)                ....
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// MESSAGE-INTEGRITY and FINGERPRINT appear here when parsed (with the value received); to
/// send them, pass a key or `fingerprint: true` to `STUNMessage.serialized`, which computes
/// them over the bytes it wrote.
public enum STUNAttribute: Sendable, Hashable {
    /// USERNAME (§14.3): for ICE, "receiver-ufrag:sender-ufrag" (RFC 8445 §7.2.2).
    case username(String)
    /// MESSAGE-INTEGRITY (§14.5): the 20-octet HMAC-SHA1, as received.
    case messageIntegrity([UInt8])
    /// MESSAGE-INTEGRITY-SHA256 (§14.6): as received, not verified.
    case messageIntegritySHA256([UInt8])
    /// FINGERPRINT (§14.7): the CRC-32 value as received (already XORed with 0x5354554e).
    case fingerprint(UInt32)
    /// XOR-MAPPED-ADDRESS (§14.2): the reflexive transport address, un-XORed.
    case xorMappedAddress(SocketAddress)
    /// MAPPED-ADDRESS (§14.1): the same, not XORed (old servers).
    case mappedAddress(SocketAddress)
    /// ERROR-CODE (§14.8).
    case errorCode(STUNErrorCode)
    /// UNKNOWN-ATTRIBUTES (§14.9): the types a 420 response says were not understood.
    case unknownAttributes([STUNAttributeType])
    /// SOFTWARE (§14.14): the agent's name and version.
    case software(String)
    /// PRIORITY (RFC 8445 §7.1.1): the priority a peer-reflexive candidate would get.
    case priority(UInt32)
    /// USE-CANDIDATE (RFC 8445 §7.1.2): the controlling agent nominates this pair.
    case useCandidate
    /// ICE-CONTROLLING (RFC 8445 §7.1.3): the sender is controlling; its tie-breaker.
    case iceControlling(tieBreaker: UInt64)
    /// ICE-CONTROLLED (RFC 8445 §7.1.3): the sender is controlled; its tie-breaker.
    case iceControlled(tieBreaker: UInt64)
    /// Any other attribute, kept as type and value (comprehension-optional ones are
    /// ignored; comprehension-required ones make a request fail with 420).
    case other(type: STUNAttributeType, value: [UInt8])

    /// The attribute's type.
    public var type: STUNAttributeType {
        switch self {
        case .username: .username
        case .messageIntegrity: .messageIntegrity
        case .messageIntegritySHA256: .messageIntegritySHA256
        case .fingerprint: .fingerprint
        case .xorMappedAddress: .xorMappedAddress
        case .mappedAddress: .mappedAddress
        case .errorCode: .errorCode
        case .unknownAttributes: .unknownAttributes
        case .software: .software
        case .priority: .priority
        case .useCandidate: .useCandidate
        case .iceControlling: .iceControlling
        case .iceControlled: .iceControlled
        case .other(let type, _): type
        }
    }
}
