import Glibc

/// The socket calls every stream shares: a non-blocking, close-on-exec TCP socket of the
/// address's family (IPv6 ones IPv6-only, so a v4 and a v6 listener can share a port), bound.
public enum StreamSocket {
    /// A non-blocking socket of `type` (a stream by default; SIP probes routes with a datagram
    /// one) for `address`'s family.
    public static func make(for address: SocketAddress, type: __socket_type = SOCK_STREAM) throws(SocketError) -> Int32
    {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = Glibc.socket(family, Int32(type.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        if address.isIPv6 { setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        return fd
    }

    /// Binds `fd` to `address`; closes it and throws on failure.
    public static func bind(_ fd: Int32, _ address: SocketAddress) throws(SocketError) {
        guard let rc = address.withSockAddr({ Glibc.bind(fd, $0, $1) }) else {
            close(fd)
            throw SocketError("bind \(address): not a numeric address", code: EINVAL)
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw SocketError("bind \(address)", code: code)
        }
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var v = value
        setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
    }
}
