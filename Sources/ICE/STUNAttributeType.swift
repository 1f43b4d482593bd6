/// A STUN attribute type (RFC 8489 §14, §18.3; RFC 8445 §16.1). Types below 0x8000 are
/// comprehension-required: a request carrying one we do not know is answered 420.
public struct STUNAttributeType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 16-bit type number.
    public let rawValue: UInt16

    /// A type from its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0001 MAPPED-ADDRESS (RFC 8489 §14.1; kept for old clients, we never send it).
    public static let mappedAddress = STUNAttributeType(rawValue: 0x0001)
    /// 0x0006 USERNAME (§14.3).
    public static let username = STUNAttributeType(rawValue: 0x0006)
    /// 0x0008 MESSAGE-INTEGRITY (§14.5): HMAC-SHA1, 20 octets.
    public static let messageIntegrity = STUNAttributeType(rawValue: 0x0008)
    /// 0x0009 ERROR-CODE (§14.8).
    public static let errorCode = STUNAttributeType(rawValue: 0x0009)
    /// 0x000A UNKNOWN-ATTRIBUTES (§14.9).
    public static let unknownAttributes = STUNAttributeType(rawValue: 0x000A)
    /// 0x0014 REALM (§14.9; long-term credentials, not used by ICE).
    public static let realm = STUNAttributeType(rawValue: 0x0014)
    /// 0x0015 NONCE (§14.10; long-term credentials, not used by ICE).
    public static let nonce = STUNAttributeType(rawValue: 0x0015)
    /// 0x001C MESSAGE-INTEGRITY-SHA256 (§14.6): parsed, not checked (ICE uses SHA-1).
    public static let messageIntegritySHA256 = STUNAttributeType(rawValue: 0x001C)
    /// 0x001D PASSWORD-ALGORITHM (§14.11).
    public static let passwordAlgorithm = STUNAttributeType(rawValue: 0x001D)
    /// 0x001E USERHASH (§14.4).
    public static let userhash = STUNAttributeType(rawValue: 0x001E)
    /// 0x0020 XOR-MAPPED-ADDRESS (§14.2).
    public static let xorMappedAddress = STUNAttributeType(rawValue: 0x0020)
    /// 0x0024 PRIORITY (RFC 8445 §16.1).
    public static let priority = STUNAttributeType(rawValue: 0x0024)
    /// 0x0025 USE-CANDIDATE (RFC 8445 §16.1).
    public static let useCandidate = STUNAttributeType(rawValue: 0x0025)
    /// 0x8022 SOFTWARE (§14.14).
    public static let software = STUNAttributeType(rawValue: 0x8022)
    /// 0x8023 ALTERNATE-SERVER (§14.15).
    public static let alternateServer = STUNAttributeType(rawValue: 0x8023)
    /// 0x8028 FINGERPRINT (§14.7).
    public static let fingerprint = STUNAttributeType(rawValue: 0x8028)
    /// 0x8029 ICE-CONTROLLED (RFC 8445 §16.1).
    public static let iceControlled = STUNAttributeType(rawValue: 0x8029)
    /// 0x802A ICE-CONTROLLING (RFC 8445 §16.1).
    public static let iceControlling = STUNAttributeType(rawValue: 0x802A)

    /// True for 0x0000–0x7FFF: an agent that does not understand it must not process the
    /// message (RFC 8489 §14, §6.3.1).
    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    public var description: String {
        switch self {
        case .mappedAddress: "MAPPED-ADDRESS"
        case .username: "USERNAME"
        case .messageIntegrity: "MESSAGE-INTEGRITY"
        case .errorCode: "ERROR-CODE"
        case .unknownAttributes: "UNKNOWN-ATTRIBUTES"
        case .realm: "REALM"
        case .nonce: "NONCE"
        case .messageIntegritySHA256: "MESSAGE-INTEGRITY-SHA256"
        case .passwordAlgorithm: "PASSWORD-ALGORITHM"
        case .userhash: "USERHASH"
        case .xorMappedAddress: "XOR-MAPPED-ADDRESS"
        case .priority: "PRIORITY"
        case .useCandidate: "USE-CANDIDATE"
        case .software: "SOFTWARE"
        case .alternateServer: "ALTERNATE-SERVER"
        case .fingerprint: "FINGERPRINT"
        case .iceControlled: "ICE-CONTROLLED"
        case .iceControlling: "ICE-CONTROLLING"
        default: "attribute 0x" + String(String(rawValue, radix: 16)).leftPadded(to: 4)
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
