import Foundation
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

/// IOCore's io_uring (UDPRing) on a running loop: datagrams reach the watched socket's handler
/// with their source, sends queued on the ring go out with the loop's next wait, and a ring
/// whose few buffers run dry arms its receives again without losing what the socket holds.
struct UDPRingTests {
    @Test func receivesAreArmedAgainWhenTheBuffersRunDry() async throws {
        let loop = try EventLoop()
        let box = LoopBoundBox<UDPRing?>(nil, loop: loop)
        loop.start(name: "udpring-test")
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let peer = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        // The loop waits in a ring of 4 buffers with `socket` watched: each datagram's byte is
        // kept, and echoed to its source through the ring.
        let received = Mutex<[UInt8]>([])
        loop.sync {
            guard let ring = try? UDPRing(bufferCount: 4) else { return }
            box.value = ring
            loop.setWaiter(ring)
            ring.watch(fd: socket.fd) { [unowned ring] datagram, from, length, _ in
                received.withLock { $0.append(datagram.first ?? 0) }
                var source = RawSocketAddress()
                source.set(from, length: length)
                ring.send(datagram, on: socket, to: source)
            }
        }
        defer {
            loop.sync {
                box.value?.unwatch(fd: socket.fd)
                loop.setWaiter(nil)
                box.value = nil
            }
            loop.stop()
        }
        try #require(loop.sync { box.value != nil }, "io_uring is available here")
        // Held up while 100 datagrams wait in the socket: 4 buffers cannot take them at once.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        let to = try #require(RawSocketAddress(socket.local))
        for i in 0..<100 {
            var byte = UInt8(i)
            withUnsafeBytes(of: &byte) { _ = peer.send($0, to: to) }
        }
        release.signal()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { buffer.deallocate() }
        var echoed: [UInt8] = []
        var from = RawSocketAddress()
        let done = await eventually(timeout: 5) {
            while let n = peer.receive(into: buffer, from: &from), n == 1 { echoed.append(buffer[0]) }
            return echoed.count == 100
        }
        #expect(done, "echoed \(echoed.count)")
        #expect(received.withLock { $0 } == (0..<100).map { UInt8($0) }, "in order, none lost")
        #expect(echoed == (0..<100).map { UInt8($0) })
        let stats = loop.sync { box.value?.statistics }
        #expect((stats?.rearms ?? 0) > 0, "the buffers ran dry: \(String(describing: stats))")
        #expect(stats?.queuedSends == 100)
    }
}
