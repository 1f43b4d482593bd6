import Glibc

/// An IPv4 or IPv6 socket address, as a value.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// Numeric host, without brackets.
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var isIPv6: Bool { host.utf8.contains(0x3A) }

    /// True for a numeric IPv4 or IPv6 address (no brackets), false for a name.
    public static func isNumericHost(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// True for the any-address a socket binds to on every interface (0.0.0.0, ::).
    public static func isWildcard(_ host: String) -> Bool {
        host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0"
    }

    /// `host:port`, with brackets around IPv6 hosts.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `host:port`, `[v6]:port` or a bare host (with `defaultPort`).
    public static func parse(_ text: String, defaultPort: Int = 5060) -> SocketAddress? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return SocketAddress(host: host, port: defaultPort) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (0...65535).contains(port) else { return nil }
            return SocketAddress(host: host, port: port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 1 { return SocketAddress(host: text, port: defaultPort) }
        guard parts.count == 2, let port = Int(parts[1]), (0...65535).contains(port) else { return nil }
        return SocketAddress(host: String(parts[0]), port: port)
    }

    /// Calls `body` with a `sockaddr` for this address; nil when the host is not numeric.
    public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
        if isIPv6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, host, &sa.sin6_addr) == 1 else { return nil }
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &sa.sin_addr) == 1 else { return nil }
        return withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    public init?(storage: UnsafePointer<sockaddr_storage>) {
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.pointee.ss_family) {
        case AF_INET:
            let sin = UnsafeRawPointer(storage).assumingMemoryBound(to: sockaddr_in.self)
            var addr = sin.pointee.sin_addr
            inet_ntop(AF_INET, &addr, &buf, socklen_t(buf.count))
            self.init(
                host: String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self),
                port: Int(UInt16(bigEndian: sin.pointee.sin_port)))
        case AF_INET6:
            let sin6 = UnsafeRawPointer(storage).assumingMemoryBound(to: sockaddr_in6.self)
            var addr = sin6.pointee.sin6_addr
            inet_ntop(AF_INET6, &addr, &buf, socklen_t(buf.count))
            self.init(
                host: String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self),
                port: Int(UInt16(bigEndian: sin6.pointee.sin6_port)))
        default:
            return nil
        }
    }

    /// The local address a socket is bound to.
    public static func local(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { return nil }
        return SocketAddress(storage: &storage)
    }
}

/// A socket-level failure, with the errno text.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }
    public var description: String {
        "\(operation): \(String(decoding: Array(UnsafeBufferPointer(start: strerror(code), count: strlen(strerror(code)))).map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    }
}
