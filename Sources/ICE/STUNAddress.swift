import Glibc
import IOCore

// The address attributes (RFC 8489 §14.1, §14.2): a family, a port and 4 or 16 address
// octets; XOR-MAPPED-ADDRESS XORs the port with the cookie's top 16 bits and the address
// with the cookie (IPv4) or cookie ‖ transaction ID (IPv6).
//
//     0                   1                   2                   3
//     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |0 0 0 0 0 0 0 0|    Family     |         X-Port                |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                X-Address (Variable)
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

enum STUNAddress {
    static let familyIPv4: UInt8 = 0x01
    static let familyIPv6: UInt8 = 0x02

    /// The 16 octets XORed over an address: the magic cookie, then the transaction ID.
    @inline(__always)
    static func mask(_ index: Int, _ transactionID: STUNTransactionID) -> UInt8 {
        index < 4
            ? UInt8(truncatingIfNeeded: STUNMessage.magicCookie >> (24 - 8 * UInt32(index)))
            : transactionID.byte(at: index - 4)
    }

    /// Decodes an address value; `xor` for XOR-MAPPED-ADDRESS.
    static func decode(
        _ value: ArraySlice<UInt8>, type: STUNAttributeType, xor: Bool, transactionID: STUNTransactionID
    ) throws(STUNParseError) -> SocketAddress {
        let v = Array(value)
        guard v.count >= 4 else { throw .invalidAttribute(type: type, reason: "\(v.count) octets, need 8 or 20") }
        var port = UInt16(v[2]) << 8 | UInt16(v[3])
        if xor { port ^= UInt16(truncatingIfNeeded: STUNMessage.magicCookie >> 16) }
        var address = Array(v[4...])
        switch v[1] {
        case familyIPv4:
            guard address.count == 4 else {
                throw .invalidAttribute(type: type, reason: "IPv4 with \(v.count) octets, need 8")
            }
        case familyIPv6:
            guard address.count == 16 else {
                throw .invalidAttribute(type: type, reason: "IPv6 with \(v.count) octets, need 20")
            }
        default:
            throw .invalidAttribute(type: type, reason: "unknown address family \(v[1])")
        }
        if xor { for index in address.indices { address[index] ^= mask(index, transactionID) } }
        return SocketAddress(host: format(address), port: Int(port))
    }

    /// Appends an address value (family, port, address) to `out`.
    static func encode(
        _ address: SocketAddress, type: STUNAttributeType, xor: Bool, transactionID: STUNTransactionID,
        into out: inout [UInt8]
    ) throws(STUNBuildError) {
        guard var octets = numeric(address.host), (0...65535).contains(address.port) else {
            throw .addressNotNumeric(address.host)
        }
        var port = UInt16(address.port)
        if xor {
            port ^= UInt16(truncatingIfNeeded: STUNMessage.magicCookie >> 16)
            for index in octets.indices { octets[index] ^= mask(index, transactionID) }
        }
        out.append(0)
        out.append(octets.count == 4 ? familyIPv4 : familyIPv6)
        out.append(UInt8(port >> 8))
        out.append(UInt8(port & 0xFF))
        out.append(contentsOf: octets)
    }

    /// The 4 or 16 octets of a numeric host; nil for a name or garbage.
    static func numeric(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// The numeric text of 4 or 16 octets ("192.0.2.1", "2001:db8::1").
    static func format(_ octets: [UInt8]) -> String {
        if octets.count == 4 { return octets.map(String.init).joined(separator: ".") }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: octets) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        _ = inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count))
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
