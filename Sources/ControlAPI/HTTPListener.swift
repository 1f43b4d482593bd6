// The listening socket: "host:port" or "[v6]:port" parsed with IOCore's SocketAddress,
// bound non-blocking. "[::]" is dual-stack (IPv4 clients too); other IPv6 addresses are
// IPv6 only.

import Glibc
import IOCore

enum HTTPListener {
    /// The address `listen` names; a bare port means every IPv4 interface.
    static func address(_ listen: String) throws(HTTPServerError) -> SocketAddress {
        if !listen.isEmpty, listen.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let port = Int(listen),
           port <= 65_535 {
            return SocketAddress(host: "0.0.0.0", port: port)
        }
        guard let address = SocketAddress.parse(listen, defaultPort: -1), address.port >= 0, !address.host.isEmpty else {
            throw HTTPServerError("listen must be host:port or [v6]:port (got \"\(listen)\")")
        }
        return address
    }

    /// A bound, listening, non-blocking socket and the port it got.
    static func open(_ address: SocketAddress) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("cannot listen on \(address): \(SocketError("socket"))") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            var v6only: Int32 = address.host == "::" ? 0 : 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &v6only, socklen_t(MemoryLayout<Int32>.size))
        }
        guard let bound = address.withSockAddr({ bind(fd, $0, $1) }) else {
            close(fd)
            throw HTTPServerError("cannot listen on \(address): the host must be a numeric IPv4 or IPv6 address")
        }
        guard bound == 0, listen(fd, 511) == 0 else {
            let error = SocketError(bound == 0 ? "listen" : "bind")
            close(fd)
            throw HTTPServerError("cannot listen on \(address): \(error)")
        }
        guard let local = SocketAddress.local(of: fd) else {
            close(fd)
            throw HTTPServerError("cannot listen on \(address): getsockname failed")
        }
        return (fd, local.port)
    }
}
