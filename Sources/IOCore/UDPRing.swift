import CLiburing
import Glibc

/// One event loop's UDP I/O through an io_uring (liburing): every watched socket has a
/// multishot `recvmsg` armed that fills buffers from a shared provided-buffer ring, sends are
/// queued as SQEs from a pool of send slots, and the loop waits in the ring itself
/// (`EventLoopWaiter`, its epoll set polled by the ring). One wait submits every send queued
/// since the last and reaps every completion, across all sockets: a batch of packets costs
/// one system call, not a wake-up, a `recvmsg` and a `sendto` each.
///
/// Confined to its loop's thread (the ring is set up single-issuer there). Nothing on the
/// per-packet path allocates.
public final class UDPRing: EventLoopWaiter {
    /// What a watched socket's datagrams go to: the payload (valid during the call only),
    /// its source address, and its age in seconds (SO_TIMESTAMPNS, 0 when unstamped).
    public typealias Handler = (UnsafeRawBufferPointer, UnsafePointer<sockaddr>, socklen_t, Double) -> Void

    /// Counters, for tests and the bench.
    public struct Statistics: Sendable {
        /// Waits (system calls that submitted and reaped a batch).
        public var waits = 0
        /// Datagrams received through the ring.
        public var received = 0
        /// Sends queued as SQEs, and those sent directly because no send slot was free.
        public var queuedSends = 0
        public var directSends = 0
        /// Completions with an error: sends (the datagram was lost), and receives (re-armed).
        public var sendErrors = 0
        public var receiveErrors = 0
        /// Multishot receives re-armed (the buffer ring ran dry, or the kernel ended one).
        public var rearms = 0
        /// Datagrams dropped because they did not fit a buffer.
        public var truncated = 0
    }

    public private(set) var statistics = Statistics()

    private let ring: UnsafeMutablePointer<io_uring>
    private let bufferRing: UnsafeMutablePointer<io_uring_buf_ring>
    private let buffers: UnsafeMutableRawPointer
    private let sendData: UnsafeMutableRawPointer
    private let sendAddresses: UnsafeMutablePointer<sockaddr_storage>
    private var freeSlots: [Int32]
    /// The recvmsg template of every armed receive: room for an IPv6 source and a stamp.
    private let receiveTemplate: UnsafeMutablePointer<msghdr>
    private let cqes: UnsafeMutablePointer<UnsafeMutablePointer<io_uring_cqe>?>

    private struct Watch {
        var fd: Int32 = -1
        var generation: UInt32 = 0
        var handler: Handler?
    }
    private var watches: [Watch] = []
    private var freeWatches: [Int] = []
    private var watchIndex: [Int32: Int] = [:]
    /// Each watched socket is also a registered file (slot = its watch's index), so no
    /// request looks its descriptor up; by descriptor, its slot + 1 (0: none).
    private var fileSlots: [Int32] = []
    private var pollArmed = false

    /// Receive buffers in the provided-buffer ring (a power of two).
    let bufferCount: UInt32
    static let bufferSize: UInt32 = 2048
    static let sendSlots = 1024
    static let fileSlots: UInt32 = 8192
    static let slotSize = 2048
    private static let bufferGroup: Int32 = 1
    private static let batch: UInt32 = 256

    // user_data: the kind in the top 2 bits, a watch's generation in the next 30, an index
    // (watch or send slot) in the low 32.
    private enum Kind: UInt64 {
        case receive = 0, send = 1, poll = 2, cancel = 3
    }

    /// Sets up the ring on the calling thread (the loop's: it becomes the only submitter).
    /// Throws when io_uring is unavailable: an old kernel, seccomp in a container,
    /// `kernel.io_uring_disabled`, or no multishot receive with provided buffers.
    /// `bufferCount`: receive buffers shared by every watched socket (a power of two).
    public init(bufferCount: UInt32 = 2048) throws {
        self.bufferCount = bufferCount
        ring = .allocate(capacity: 1)
        let rc = CLiburing_queue_init(ring, 1024, 16_384)
        guard rc == 0 else {
            ring.deallocate()
            throw SocketError("io_uring_queue_init", code: -rc)
        }
        buffers = .allocate(byteCount: Int(bufferCount * Self.bufferSize), alignment: 64)
        var err: Int32 = 0
        guard
            let br = CLiburing_setup_buf_ring(
                ring, bufferCount, Self.bufferGroup, buffers.assumingMemoryBound(to: UInt8.self),
                Self.bufferSize, &err)
        else {
            io_uring_queue_exit(ring)
            ring.deallocate()
            buffers.deallocate()
            throw SocketError("io_uring provided buffer ring", code: -err)
        }
        bufferRing = br
        let files = io_uring_register_files_sparse(ring, Self.fileSlots)
        guard files == 0 else {
            CLiburing_free_buf_ring(ring, bufferRing, bufferCount, Self.bufferGroup)
            io_uring_queue_exit(ring)
            ring.deallocate()
            buffers.deallocate()
            throw SocketError("io_uring_register_files_sparse", code: -files)
        }
        sendData = .allocate(byteCount: Self.sendSlots * Self.slotSize, alignment: 64)
        sendAddresses = .allocate(capacity: Self.sendSlots)
        sendAddresses.initialize(repeating: sockaddr_storage(), count: Self.sendSlots)
        freeSlots = (0..<Int32(Self.sendSlots)).reversed()
        receiveTemplate = .allocate(capacity: 1)
        receiveTemplate.initialize(to: msghdr())
        receiveTemplate.pointee.msg_namelen = socklen_t(MemoryLayout<sockaddr_in6>.size)
        receiveTemplate.pointee.msg_controllen = Int(CLiburing_timestamp_control_size())
        cqes = .allocate(capacity: Int(Self.batch))
    }

    deinit {
        CLiburing_free_buf_ring(ring, bufferRing, bufferCount, Self.bufferGroup)
        io_uring_queue_exit(ring)
        ring.deallocate()
        buffers.deallocate()
        sendData.deallocate()
        sendAddresses.deallocate()
        receiveTemplate.deallocate()
        cqes.deallocate()
    }

    // MARK: Receive

    /// Arms a multishot receive on `fd`; its datagrams go to `handler` on this thread. The
    /// socket must stay open until `unwatch`.
    public func watch(fd: Int32, handler: @escaping Handler) {
        let index = freeWatches.popLast() ?? watches.count
        if index == watches.count { watches.append(Watch()) }
        let registered = index < Self.fileSlots && CLiburing_set_file(ring, Int32(index), fd) == 1
        if fd >= fileSlots.count { fileSlots += repeatElement(0, count: Int(fd) + 1 - fileSlots.count) }
        fileSlots[Int(fd)] = registered ? Int32(index) + 1 : 0
        watches[index].fd = fd
        watches[index].generation &+= 1
        watches[index].handler = handler
        watchIndex[fd] = index
        arm(index)
    }

    /// Cancels `fd`'s receive and lets the kernel drop its reference now, so the caller may
    /// close the socket (and its port is free) when this returns. Completions still on
    /// their way for it are ignored.
    public func unwatch(fd: Int32) {
        guard let index = watchIndex.removeValue(forKey: fd) else { return }
        watches[index].fd = -1
        watches[index].handler = nil
        watches[index].generation &+= 1
        freeWatches.append(index)
        let slot = fileSlots[Int(fd)] - 1
        fileSlots[Int(fd)] = 0
        if slot >= 0 {
            _ = CLiburing_prep_cancel_slot(ring, slot, Kind.cancel.rawValue << 62)
            _ = io_uring_submit_and_get_events(ring)
            _ = CLiburing_set_file(ring, slot, -1)
        } else {
            _ = CLiburing_prep_cancel_fd(ring, fd, Kind.cancel.rawValue << 62)
        }
        _ = io_uring_submit_and_get_events(ring)
    }

    private func arm(_ index: Int) {
        let data = Kind.receive.rawValue << 62 | UInt64(watches[index].generation & 0x3FFF_FFFF) << 32 | UInt64(index)
        let fd = watches[index].fd
        _ = CLiburing_arm_recvmsg(ring, fd, fileSlots[Int(fd)] - 1, receiveTemplate, Self.bufferGroup, data)
    }

    // MARK: Send

    /// Queues `bytes` to `to` on `fd` (copied: the caller's buffer is free on return); it goes
    /// out with the loop's next wait. With every send slot in flight it is sent at once.
    /// True when queued or sent (an error on completion is counted, not returned).
    @inline(__always)
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, on socket: UDPSocket, to: RawSocketAddress) -> Bool {
        guard bytes.count <= Self.slotSize, let slot = freeSlots.popLast() else {
            statistics.directSends += 1
            return socket.send(bytes, to: to)
        }
        let i = Int(slot)
        let data = sendData + i * Self.slotSize
        data.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        let address = UnsafeMutableRawPointer(sendAddresses + i)
        withUnsafeBytes(of: to.storage) { address.copyMemory(from: $0.baseAddress!, byteCount: Int(to.length)) }
        let fd = socket.fd
        let file = Int(fd) < fileSlots.count ? fileSlots[Int(fd)] - 1 : -1
        guard
            CLiburing_prep_sendto(
                ring, fd, file, data, bytes.count, address.assumingMemoryBound(to: sockaddr.self), to.length,
                Kind.send.rawValue << 62 | UInt64(i)) == 0
        else {
            freeSlots.append(slot)
            statistics.directSends += 1
            return socket.send(bytes, to: to)
        }
        statistics.queuedSends += 1
        return true
    }

    // MARK: Wait

    public func wait(epollFD: Int32, timeoutMs: Int32) -> Bool {
        if !pollArmed {
            pollArmed = CLiburing_prep_poll(ring, epollFD, Kind.poll.rawValue << 62) == 0
        }
        statistics.waits += 1
        _ = CLiburing_submit_and_wait(ring, Int64(timeoutMs) * 1_000_000)
        return reap()
    }

    /// Handles every completion in the queue; true when the epoll set polled ready.
    private func reap() -> Bool {
        var epollReady = false
        let now = CLiburing_realtime_ns()
        while true {
            let n = io_uring_peek_batch_cqe(ring, cqes, Self.batch)
            if n == 0 { break }
            for k in 0..<Int(n) {
                let cqe = cqes[k]!.pointee
                switch Kind(rawValue: cqe.user_data >> 62)! {
                case .receive: received(cqe, now: now)
                case .send:
                    freeSlots.append(Int32(truncatingIfNeeded: cqe.user_data & 0xFFFF_FFFF))
                    if cqe.res < 0 { statistics.sendErrors += 1 }
                case .poll:
                    epollReady = true
                    if cqe.flags & IORING_CQE_F_MORE == 0 { pollArmed = false }
                case .cancel: break
                }
            }
            io_uring_cq_advance(ring, n)
            if n < Self.batch { break }
        }
        if !pollArmed, epollReady {
            // A poll the kernel ended is re-armed by the next wait; say ready now so nothing waits.
            return true
        }
        return epollReady
    }

    @inline(__always)
    private func received(_ cqe: io_uring_cqe, now: Int64) {
        let index = Int(cqe.user_data & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: cqe.user_data >> 32) & 0x3FFF_FFFF
        let live = index < watches.count && watches[index].generation & 0x3FFF_FFFF == generation
        if cqe.flags & IORING_CQE_F_BUFFER != 0 {
            let bid = cqe.flags >> IORING_CQE_BUFFER_SHIFT
            let buffer = buffers + Int(bid * Self.bufferSize)
            if live, cqe.res >= 0, let handler = watches[index].handler {
                var payload: UnsafeMutableRawPointer?
                var name: UnsafeMutablePointer<sockaddr>?
                var nameLength: socklen_t = 0
                var age: Int64 = 0
                let length = CLiburing_recvmsg_parse(
                    buffer, cqe.res, receiveTemplate, &payload, &name, &nameLength, now, &age)
                if length >= 0, let payload, let name {
                    statistics.received += 1
                    handler(UnsafeRawBufferPointer(start: payload, count: length), name, nameLength, Double(age) / 1e9)
                } else {
                    statistics.truncated += 1
                }
            }
            CLiburing_recycle(
                bufferRing, buffers.assumingMemoryBound(to: UInt8.self), Self.bufferSize, bid, bufferCount)
        } else if cqe.res < 0, cqe.res != -ECANCELED, cqe.res != -ENOBUFS {
            statistics.receiveErrors += 1
        }
        // The kernel ends a multishot receive when the buffers ran dry or on an error: the
        // socket is armed again while it is still watched (a closed one is not).
        if cqe.flags & IORING_CQE_F_MORE == 0, live, cqe.res != -ECANCELED, cqe.res != -EBADF,
            cqe.res != -EINVAL
        {
            statistics.rearms += 1
            arm(index)
        }
    }
}
