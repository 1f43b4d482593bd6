/// An IPv4 or IPv6 network in CIDR notation (RFC 4632, RFC 4291 section 2.3), used for the
/// inbound source allow-list.
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    /// The network address: 4 bytes for IPv4, 16 for IPv6, host bits zero.
    public let network: [UInt8]
    /// The number of leading bits that must match: 0...32 or 0...128.
    public let prefixLength: Int

    /// Parses `address/length` or a bare address (a full-length prefix, one host):
    ///
    /// ```
    /// cidr   = address [ "/" length ]
    /// length = 1*3DIGIT            ; 0-32 for IPv4, 0-128 for IPv6
    /// ```
    /// Host bits set beyond the prefix (`10.0.0.1/8`) are refused rather than masked: the
    /// writer most likely meant something else, and the error says what the network is.
    public init(parsing text: String) throws(CIDRError) {
        func fail(_ reason: String) -> CIDRError { CIDRError(input: text, reason: reason) }

        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = IPAddressBytes.parse(String(parts[0])) else {
            throw fail("\"\(parts[0])\" is not an IPv4 or IPv6 address")
        }
        let maxLength = bytes.count * 8
        var length = maxLength
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(parts[1]), value <= maxLength
            else {
                throw fail("the prefix length must be a number from 0 to \(maxLength)")
            }
            length = value
        }
        let masked = CIDR.mask(bytes, to: length)
        guard masked == bytes else {
            throw fail("host bits are set beyond /\(length); the network is \(IPAddressBytes.format(masked))/\(length)")
        }
        self.network = masked
        self.prefixLength = length
    }

    /// True for an IPv4 network.
    public var isIPv4: Bool { network.count == 4 }

    /// Whether `address` (IPv4 or IPv6 text, brackets allowed) lies in this network. An
    /// IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, as a dual-stack socket reports IPv4
    /// peers) matches IPv4 networks. Text that is not an address matches nothing.
    public func contains(_ address: String) -> Bool {
        var text = Substring(address)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        guard var bytes = IPAddressBytes.parse(String(text)) else { return false }
        if bytes.count == 16, isIPv4, bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
            bytes = Array(bytes.suffix(4))
        }
        guard bytes.count == network.count else { return false }
        return CIDR.mask(bytes, to: prefixLength) == network
    }

    /// `network/length`, the network in canonical text form (`2001:db8::/32`).
    public var description: String {
        "\(IPAddressBytes.format(network))/\(prefixLength)"
    }

    private static func mask(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bitsHere = min(max(length - index * 8, 0), 8)
            let mask: UInt8 = bitsHere == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
            return byte & mask
        }
    }
}

/// Why a text is not a CIDR network.
public struct CIDRError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text that was refused.
    public var input: String
    /// What is wrong with it.
    public var reason: String

    /// `not a CIDR network: "<input>" (<reason>)`.
    public var description: String { "not a CIDR network: \"\(input)\" (\(reason))" }
}
