import Glibc

/// Ports for tests, always from the OS: nothing in a test names a port number.

/// What a port is checked free for.
public enum PortKind: Sendable { case udp, tcp }

/// Why no free port could be had.
public struct NoFreePort: Error, CustomStringConvertible {
    public let description: String
}

/// True when nothing is bound to `port` for `kind` on any address of either family: a
/// dual-stack bind of [::] without SO_REUSEADDR fails when 127.0.0.1, ::1 or any other address
/// holds the port (SIPp binds its media on ::1 in the IPv6 tests, so 127.0.0.1 alone is not enough).
public func isPortFree(_ port: Int, _ kind: PortKind) -> Bool {
    let type = Int32((kind == .udp ? SOCK_DGRAM : SOCK_STREAM).rawValue)
    let fd = socket(AF_INET6, type, 0)
    guard fd >= 0 else { return isLoopbackPortFree(port, type: type) }
    defer { close(fd) }
    var off: Int32 = 0
    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
    var sa = sockaddr_in6()
    sa.sin6_family = sa_family_t(AF_INET6)
    sa.sin6_port = in_port_t(UInt16(port).bigEndian)
    sa.sin6_addr = in6addr_any
    return withUnsafePointer(to: &sa) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    } == 0
}

/// The IPv4-only check, for a machine without IPv6.
private func isLoopbackPortFree(_ port: Int, type: Int32) -> Bool {
    let fd = socket(AF_INET, type, 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var sa = loopback(port: port)
    return withUnsafePointer(to: &sa) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// 127.0.0.1:`port` as a C socket address.
public func loopback(port: Int) -> sockaddr_in {
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = in_port_t(UInt16(port).bigEndian)
    sa.sin_addr.s_addr = inet_addr("127.0.0.1")
    return sa
}

/// A free port on 127.0.0.1 for UDP and TCP: the OS picks one for a UDP socket, we check that
/// TCP can bind it too, then release both.
public func freePort() throws -> Int {
    for _ in 0..<20 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw NoFreePort(description: "socket: errno \(errno)") }
        var sa = loopback(port: 0)
        let bound = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        close(fd)
        guard bound == 0 else { continue }
        let port = Int(UInt16(bigEndian: sa.sin_port))
        if isPortFree(port, .tcp) { return port }
    }
    throw NoFreePort(description: "no free port")
}

/// An even UDP port with the next three free too (SIPp's audio and video RTP/RTCP).
public func freeMediaPorts() throws -> Int {
    for _ in 0..<50 {
        let p = try freePort() & ~1
        if p + 3 <= 65_535, (p...(p + 3)).allSatisfy({ isPortFree($0, .udp) }) { return p }
    }
    throw NoFreePort(description: "no free media ports")
}

/// The first of `count` UDP ports, all free now: from an OS-chosen even port, the first
/// block at or above it whose every port is checked free. For a media engine's port range
/// or the gateway's `--rtp-ports` (they skip a pair another process takes later).
public func freePortBlock(count: Int) throws -> Int {
    for _ in 0..<10 {
        var base = try freePort() & ~1
        while base + count <= 65_535 {
            guard let taken = (base..<(base + count)).last(where: { !isPortFree($0, .udp) }) else {
                return base
            }
            base = (taken + 2) & ~1
        }
    }
    throw NoFreePort(description: "no block of \(count) free UDP ports")
}

/// `freePortBlock` as a media engine's port range.
public func freePortRange(count: Int) throws -> ClosedRange<UInt16> {
    let base = try freePortBlock(count: count)
    return UInt16(base)...UInt16(base + count - 1)
}
