import Glibc

/// A socket address in its C form, built once so sending to it costs no conversion.
///
/// Two addresses are equal when they name the same endpoint: the same host and port, with an
/// IPv4 address and its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`, what a dual-stack socket
/// reports) taken as one host. Comparing reads a few words, never the whole storage: it runs
/// for every media packet.
public struct RawSocketAddress: Equatable, @unchecked Sendable {
    public var storage = sockaddr_storage()
    public var length: socklen_t = 0

    public init() {}

    public init?(_ address: SocketAddress) {
        var s = sockaddr_storage()
        let len: socklen_t? = address.withSockAddr { sa, len in
            withUnsafeMutableBytes(of: &s) { $0.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: Int(len))) }
            return len
        }
        guard let len else { return nil }
        storage = s
        length = len
    }

    public var address: SocketAddress? {
        var s = storage
        return SocketAddress(storage: &s)
    }

    /// The host as an IPv6 address (IPv4 mapped), its scope and the port; nil for another family.
    private var endpoint: (high: UInt64, low: UInt64, scope: UInt32, port: UInt16)? {
        withUnsafeBytes(of: storage) { raw in
            switch Int32(storage.ss_family) {
            case AF_INET:
                let port = raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self)
                // The last 8 bytes of ::ffff:a.b.c.d, read as sockaddr_in6's would be.
                let bytes = (UInt8(0), UInt8(0), UInt8(0xFF), UInt8(0xFF), raw[4], raw[5], raw[6], raw[7])
                let mapped = withUnsafeBytes(of: bytes) { $0.loadUnaligned(as: UInt64.self) }
                return (0, mapped, 0, port)
            case AF_INET6:
                let port = raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self)
                let high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let low = raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
                let scope = raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self)
                return (high, low, scope, port)
            default:
                return nil
            }
        }
    }

    public static func == (a: RawSocketAddress, b: RawSocketAddress) -> Bool {
        guard let x = a.endpoint, let y = b.endpoint else { return a.length == 0 && b.length == 0 }
        return x.port == y.port && x.high == y.high && x.low == y.low && x.scope == y.scope
    }

    /// True when both name the same host, whatever the ports.
    public func isSameHost(as other: RawSocketAddress) -> Bool {
        guard let x = endpoint, let y = other.endpoint else { return false }
        return x.high == y.high && x.low == y.low && x.scope == y.scope
    }
}
