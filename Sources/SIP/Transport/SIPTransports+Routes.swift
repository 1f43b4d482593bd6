import CLinux
import Glibc

// Which local address the kernel uses toward a peer: connect(2) on a UDP socket picks a
// route and a source address without sending anything. A wildcard listener cannot name
// itself (0.0.0.0 in a Contact reaches nobody), and with several listeners the one bound to
// that source address is the one whose replies the peer (and any NAT) expects.

extension SIPTransports {
    /// The source address the kernel would use toward `peer`, cached per destination host
    /// (bounded; the table is forgotten when full). nil when there is no route.
    func routeSource(toward peer: SocketAddress) -> String? {
        if let known = routeSources[peer.host] { return known }
        guard let source = Self.kernelSource(toward: peer) else { return nil }
        if routeSources.count >= Self.maxRouteSources { routeSources.removeAll(keepingCapacity: true) }
        routeSources[peer.host] = source
        return source
    }

    /// Routes cached at most; a table this size costs well under a megabyte.
    static let maxRouteSources = 4096

    static func kernelSource(toward peer: SocketAddress) -> String? {
        guard let fd = try? StreamSocket.make(for: peer, type: SOCK_DGRAM) else { return nil }
        defer { close(fd) }
        // Any port will do for a route lookup; port 0 is refused by some kernels.
        let probe = SocketAddress(host: peer.host, port: peer.port == 0 ? 9 : peer.port)
        guard probe.withSockAddr({ Glibc.connect(fd, $0, $1) }) == 0 else { return nil }
        return SocketAddress.local(of: fd)?.host
    }

    /// The UDP socket to send to `peer` from: the same family, bound to the kernel's source
    /// address toward it first, then a wildcard one, then any.
    func udpSocket(toward peer: SocketAddress) -> UDPSocket? {
        if udpSockets.count == 1 { return udpSockets[0] }
        let family = udpSockets.filter { $0.local.isIPv6 == peer.isIPv6 }
        guard family.count > 1 else { return family.first ?? udpSockets.first }
        if let source = routeSource(toward: peer), let bound = family.first(where: { $0.local.host == source }) {
            return bound
        }
        return family.first { SocketAddress.isWildcard($0.local.host) } ?? family[0]
    }
}
