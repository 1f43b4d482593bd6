import CLinux
import Foundation
import Glibc
import IOCore

/// The load generator's datagram I/O over its per-leg sockets. Through io_uring (IOCore's
/// `UDPRing`: every socket's multishot receive, sends queued as SQEs) a turn of the generator
/// costs one system call for all its sends and receives; without io_uring (or with
/// `--io epoll`) it is what the generator always did: a `sendto` per packet, and per ready
/// socket an `epoll_wait` report and a `recvmsg`. Either way every datagram reaches the
/// caller with the kernel's receive time (SO_TIMESTAMPNS), so what the generator measures is
/// the same on both.
///
/// Confined to the thread that made it (the ring is single-issuer).
final class GeneratorIO {
    /// Which path: `automatic` takes io_uring when the kernel allows it.
    enum Preference: String, Sendable, CaseIterable {
        case automatic, uring, epoll
    }

    /// What a datagram goes to: the index of the socket it came in on, its bytes (valid during
    /// the call only), its source port, and its arrival (CLOCK_REALTIME seconds).
    typealias Receive = (Int, UnsafeRawBufferPointer, UInt16, Double) -> Void

    let sockets: [UDPSocket]
    /// The path taken ("uring" or "epoll"), and why io_uring was not (nil when it was, or was
    /// not asked for).
    let path: String
    let uringUnavailable: String?
    private let ring: UDPRing?
    /// The ring polls an epoll set (its loop's, in the media engine): here an empty one. In
    /// the epoll path, every socket's.
    private let epfd: Int32
    private var events = [epoll_event](repeating: epoll_event(), count: 1024)
    private let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    private let control = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
    /// The receiver of the ring's datagrams during `poll`, and the time its batch was read.
    private var receiver: Receive?
    private var batchNow = 0.0

    /// `sockets` must have receive timestamps on (SO_TIMESTAMPNS).
    init(sockets: [UDPSocket], preference: Preference) throws {
        self.sockets = sockets
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epfd >= 0 else { throw SocketError("epoll_create1") }
        var ring: UDPRing?
        var unavailable: String?
        if preference != .epoll {
            do {
                // Enough buffers for every socket's packets of a few turns at the largest steps.
                ring = try UDPRing(bufferCount: 4096)
            } catch {
                if preference == .uring {
                    close(epfd)
                    throw error
                }
                unavailable = "\(error)"
            }
        }
        self.ring = ring
        uringUnavailable = unavailable
        path = ring == nil ? "epoll" : "uring"
        if let ring {
            for (j, s) in sockets.enumerated() {
                ring.watch(fd: s.fd) { [unowned self] payload, from, _, age in
                    // The ring gives the datagram's age against the time it read the batch:
                    // that time, within the microseconds between reaping and this first call.
                    if batchNow == 0 { batchNow = MediaLoadGenerator.Run.realNow() }
                    let port = UInt16(bigEndian: UnsafeRawPointer(from).load(fromByteOffset: 2, as: UInt16.self))
                    receiver?(j, payload, port, batchNow - age)
                }
            }
        } else {
            for (j, s) in sockets.enumerated() {
                var ev = epoll_event()
                ev.events = EPOLLIN.rawValue
                ev.data.u64 = UInt64(j)
                epoll_ctl(epfd, EPOLL_CTL_ADD, s.fd, &ev)
            }
        }
    }

    deinit {
        if let ring { for s in sockets { ring.unwatch(fd: s.fd) } }
        close(epfd)
        rx.deallocate()
        control.deallocate()
    }

    /// Sends `bytes` on socket `j` to `to`: queued for the next `poll` on the ring, at once
    /// otherwise.
    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer, on j: Int, to: RawSocketAddress) {
        if let ring {
            ring.send(bytes, on: sockets[j], to: to)
        } else {
            sockets[j].send(bytes, to: to)
        }
    }

    /// Sends what is queued and hands every datagram waiting to `receive`, without waiting
    /// (the generator polls). Returns how many datagrams it handed over.
    func poll(_ receive: Receive) -> Int {
        guard let ring else { return pollEpoll(receive) }
        let before = ring.statistics.received
        withoutActuallyEscaping(receive) { r in
            receiver = r
            batchNow = 0
            _ = ring.wait(epollFD: epfd, timeoutMs: 0)
            receiver = nil
        }
        return ring.statistics.received - before
    }

    private func pollEpoll(_ receive: Receive) -> Int {
        let ready = epoll_wait(epfd, &events, Int32(events.count), 0)
        guard ready > 0 else { return 0 }
        var handed = 0
        var source = sockaddr_in()
        for e in 0..<Int(ready) {
            let j = Int(events[e].data.u64)
            var iov = iovec(iov_base: rx.baseAddress, iov_len: rx.count)
            var msg = msghdr()
            let got: Int = withUnsafeMutablePointer(to: &source) { src in
                withUnsafeMutablePointer(to: &iov) { iovp in
                    msg.msg_name = UnsafeMutableRawPointer(src)
                    msg.msg_namelen = socklen_t(MemoryLayout<sockaddr_in>.size)
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    msg.msg_control = control.baseAddress
                    msg.msg_controllen = control.count
                    return recvmsg(sockets[j].fd, &msg, 0)
                }
            }
            guard got >= 0 else { continue }
            // The kernel's receive time (SCM_TIMESTAMPNS), else now.
            var arrival = 0.0
            var offset = 0
            while offset + 32 <= msg.msg_controllen {
                let len = control.load(fromByteOffset: offset, as: Int.self)
                let level = control.load(fromByteOffset: offset + 8, as: Int32.self)
                let type = control.load(fromByteOffset: offset + 12, as: Int32.self)
                if level == SOL_SOCKET && type == 35 {
                    arrival =
                        Double(control.load(fromByteOffset: offset + 16, as: Int.self))
                        + Double(control.load(fromByteOffset: offset + 24, as: Int.self)) / 1e9
                    break
                }
                guard len > 0 else { break }
                offset += (len + 7) & ~7
            }
            if arrival == 0 { arrival = MediaLoadGenerator.Run.realNow() }
            handed += 1
            receive(j, UnsafeRawBufferPointer(rebasing: rx[0..<got]), UInt16(bigEndian: source.sin_port), arrival)
        }
        return handed
    }
}
