import Glibc

/// Numeric host text to network-order bytes and back (inet_pton / inet_ntop).
enum IPAddressBytes {
    /// 4 bytes for an IPv4 host, 16 for an IPv6 host; nil when the host is not numeric.
    static func bytes(of host: String) -> [UInt8]? {
        if host.utf8.contains(0x3A) {
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, host, &v6) == 1 else { return nil }
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        var v4 = in_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 else { return nil }
        return withUnsafeBytes(of: &v4) { Array($0) }
    }

    /// 16 bytes for `host`: IPv6 as is, IPv4 mapped (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2),
    /// `::` when the host is not numeric.
    static func ipv6Bytes(of host: String) -> [UInt8] {
        guard let raw = bytes(of: host) else { return [UInt8](repeating: 0, count: 16) }
        if raw.count == 16 { return raw }
        return [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + raw
    }

    /// 4 bytes for an IPv4 `host`; 0.0.0.0 when it is not a numeric IPv4 address.
    static func ipv4Bytes(of host: String) -> [UInt8] {
        guard let raw = bytes(of: host), raw.count == 4 else { return [0, 0, 0, 0] }
        return raw
    }

    /// The text form (`inet_ntop`) of 4 or 16 network-order bytes.
    static func host<C: Collection>(from bytes: C) -> String where C.Element == UInt8 {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let raw = Array(bytes)
        let family = raw.count == 16 ? AF_INET6 : AF_INET
        raw.withUnsafeBytes { source in
            _ = inet_ntop(family, source.baseAddress, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
