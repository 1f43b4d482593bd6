import Glibc

/// A socket address in its C form, built once so sending to it costs no conversion.
///
/// Two addresses are equal when they name the same endpoint: the same host and port, with an
/// IPv4 address and its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`, what a dual-stack socket
/// reports) taken as one host. Comparing reads a few words, never the whole storage: it runs
/// for every media packet.
// plain bytes: `sockaddr_storage` is a C struct Swift does not mark Sendable
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

    /// Copies `length` bytes of a C address (a received datagram's source) in place.
    @inline(__always)
    public mutating func set(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let n = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: n)) }
        self.length = socklen_t(n)
    }

    public var address: SocketAddress? {
        var s = storage
        return SocketAddress(storage: &s)
    }

    /// The endpoint this address names; nil for a family other than IPv4 and IPv6.
    @inline(__always)
    public var endpoint: SocketEndpoint? {
        withUnsafeBytes(of: storage) { raw in
            switch Int32(raw.loadUnaligned(as: sa_family_t.self)) {
            case AF_INET:
                // The last 8 bytes of ::ffff:a.b.c.d, read as sockaddr_in6's would be.
                let bytes = (UInt8(0), UInt8(0), UInt8(0xFF), UInt8(0xFF), raw[4], raw[5], raw[6], raw[7])
                let mapped = withUnsafeBytes(of: bytes) { $0.loadUnaligned(as: UInt64.self) }
                return SocketEndpoint(
                    high: 0, low: mapped, scope: 0, port: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
            case AF_INET6:
                return SocketEndpoint(
                    high: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                    low: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                    scope: raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self),
                    port: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
            default:
                return nil
            }
        }
    }

    public static func == (a: RawSocketAddress, b: RawSocketAddress) -> Bool {
        guard let x = a.endpoint, let y = b.endpoint else { return a.length == 0 && b.length == 0 }
        return x == y
    }

}

/// What identifies a UDP or TCP endpoint, in 24 bytes that copy and compare as words: the
/// host as an IPv6 address (an IPv4 one mapped, `::ffff:a.b.c.d`), its scope and the port
/// (both as they are in memory, network order). The media path compares one per packet.
public struct SocketEndpoint: Hashable, Sendable {
    public var high: UInt64
    public var low: UInt64
    public var scope: UInt32
    public var port: UInt16

    public init(high: UInt64, low: UInt64, scope: UInt32, port: UInt16) {
        self.high = high
        self.low = low
        self.scope = scope
        self.port = port
    }

    /// True when both name the same host, whatever the ports.
    @inline(__always)
    public func isSameHost(as other: SocketEndpoint) -> Bool {
        high == other.high && low == other.low && scope == other.scope
    }
}
