/// Why a STUN message could not be written.
public enum STUNBuildError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An address attribute whose host is not a numeric IPv4 or IPv6 address.
    case addressNotNumeric(String)
    /// An attribute value longer than its limit (65535 octets, or the RFC's own limit).
    case valueTooLong(type: STUNAttributeType, length: Int)
    /// The whole message would exceed the 16-bit length field.
    case messageTooLong(Int)

    public var description: String {
        switch self {
        case .addressNotNumeric(let host): "STUN address \(host) is not a numeric IP address"
        case .valueTooLong(let type, let length): "\(type) value of \(length) octets is too long"
        case .messageTooLong(let length): "STUN message of \(length) octets exceeds 65535"
        }
    }
}
