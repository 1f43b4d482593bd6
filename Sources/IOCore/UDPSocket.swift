import CLinux
import Glibc

/// A non-blocking UDP socket for the media path: receive into and send from caller buffers,
/// no allocation per packet.
public final class UDPSocket: Sendable {
    public let fd: Int32
    public let local: SocketAddress

    /// Binds `address` (port 0: the OS picks one).
    public init(bind address: SocketAddress, bufferBytes: Int32 = 1 << 20) throws {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var size = bufferBytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        guard let rc = address.withSockAddr({ Glibc.bind(fd, $0, $1) }), rc == 0 else {
            let code = errno
            close(fd)
            throw SocketError("bind \(address)", code: code)
        }
        self.fd = fd
        self.local = SocketAddress.local(of: fd) ?? address
    }

    deinit { close(fd) }

    /// Receives one datagram into `buffer`; returns its size (nil when none is waiting) and
    /// fills `from`.
    @inline(__always)
    public func receive(into buffer: UnsafeMutableRawBufferPointer, from: inout RawSocketAddress) -> Int? {
        from.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &from.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fd, buffer.baseAddress, buffer.count, 0, $0, &from.length)
            }
        }
        return n >= 0 ? n : nil
    }

    /// Asks the kernel to stamp each datagram with its arrival (for `receive(into:from:age:)`).
    public func enableReceiveTimestamps() { _ = CLinux_enable_rx_timestamps(fd) }

    /// `receive(into:from:)`, and `age`: seconds since the kernel received the datagram (0
    /// when unstamped). A thread that reads late still learns when the packet came, so its
    /// own delay is not taken for network jitter.
    @inline(__always)
    public func receive(
        into buffer: UnsafeMutableRawBufferPointer, from: inout RawSocketAddress, age: inout Double
    ) -> Int? {
        from.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var ns: Int64 = 0
        let n = withUnsafeMutablePointer(to: &from.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                CLinux_recv_aged(fd, buffer.baseAddress, buffer.count, $0, &from.length, &ns)
            }
        }
        age = Double(ns) / 1e9
        return n >= 0 ? n : nil
    }

    /// Sends `bytes` to `to`; true when the kernel took the whole datagram.
    @inline(__always)
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to: RawSocketAddress) -> Bool {
        var storage = to.storage
        let n = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes.baseAddress, bytes.count, 0, $0, to.length)
            }
        }
        return n == bytes.count
    }
}

/// A timerfd that fires every `interval` seconds (the media threads' playout tick).
public final class PeriodicTimer: Sendable {
    public let fd: Int32

    public init(interval: Double) throws {
        fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw SocketError("timerfd_create") }
        let ns = Int(interval * 1e9)
        var spec = itimerspec()
        spec.it_interval.tv_sec = ns / 1_000_000_000
        spec.it_interval.tv_nsec = ns % 1_000_000_000
        spec.it_value = spec.it_interval
        guard timerfd_settime(fd, 0, &spec, nil) == 0 else {
            close(fd)
            throw SocketError("timerfd_settime")
        }
    }

    deinit { close(fd) }

    /// Expirations since the last read (more than 1 means ticks were missed).
    public func read() -> UInt64 {
        var count: UInt64 = 0
        let n = Glibc.read(fd, &count, 8)
        return n == 8 ? count : 0
    }
}
