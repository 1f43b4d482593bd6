import CLinux
import Glibc

/// Datagrams read from a `UDPSocket` by one `recvmmsg` call into buffers allocated once:
/// a socket under a flood costs one system call per batch instead of one per datagram, and
/// no allocation for a datagram that is refused before it is parsed. On one thread at a time;
/// what `datagram(_:)` gives stays valid until the next `read`.
public final class UDPDatagramBatch {
    /// Datagrams one `read` takes at most (the C side's limit too).
    public let capacity: Int
    /// Bytes per datagram slot: a longer datagram is cut (and counted in `truncated`).
    public let slotBytes: Int
    /// Datagrams the last `read` filled.
    public private(set) var count = 0
    /// Datagrams cut to `slotBytes` since this batch was made (they are skipped).
    public private(set) var truncated = 0

    // Untouched until the kernel writes into them: a 64 KiB slot costs memory only for the
    // pages its datagrams reach.
    private let buffers: UnsafeMutablePointer<UInt8>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let sourceLengths: UnsafeMutablePointer<socklen_t>
    private let lengths: UnsafeMutablePointer<UInt32>
    private let cut: UnsafeMutablePointer<UInt8>

    /// `capacity` slots (at most 64) of `slotBytes` each; the default slot takes any UDP datagram.
    public init(capacity: Int = 64, slotBytes: Int = 65_536) {
        self.capacity = max(1, min(64, capacity))
        self.slotBytes = slotBytes
        buffers = .allocate(capacity: self.capacity * slotBytes)
        sources = .allocate(capacity: self.capacity)
        sourceLengths = .allocate(capacity: self.capacity)
        lengths = .allocate(capacity: self.capacity)
        cut = .allocate(capacity: self.capacity)
    }

    deinit {
        buffers.deallocate()
        sources.deallocate()
        sourceLengths.deallocate()
        lengths.deallocate()
        cut.deallocate()
    }

    /// Reads what `socket` has waiting, up to `capacity` datagrams; returns how many (0: the
    /// socket is empty, or it failed).
    @discardableResult
    public func read(_ socket: UDPSocket) -> Int {
        let n = CLinux_recv_batch(
            socket.fd, buffers, slotBytes, UInt32(capacity), sources, sourceLengths, lengths, cut)
        count = max(0, Int(n))
        for i in 0..<count where cut[i] != 0 { truncated += 1 }
        return count
    }

    /// The bytes of datagram `i` (empty for one that was cut); valid until the next `read`.
    @inline(__always)
    public func datagram(_ i: Int) -> UnsafeRawBufferPointer {
        guard cut[i] == 0 else { return UnsafeRawBufferPointer(start: buffers, count: 0) }
        return UnsafeRawBufferPointer(start: buffers + i * slotBytes, count: Int(lengths[i]))
    }

    /// Where datagram `i` came from.
    @inline(__always)
    public func source(_ i: Int) -> RawSocketAddress {
        var a = RawSocketAddress()
        sources.advanced(by: i).withMemoryRebound(to: sockaddr.self, capacity: 1) {
            a.set($0, length: sourceLengths[i])
        }
        return a
    }
}
