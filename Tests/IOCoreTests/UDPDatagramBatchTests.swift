import Glibc
import IOCore
import Testing

/// `UDPDatagramBatch` on real sockets: one read takes at most its capacity of what waits, in
/// order, with each datagram's bytes and source; a datagram longer than a slot is skipped
/// and counted, never handed on cut.
struct UDPDatagramBatchTests {
    @Test func aReadTakesUpToItsCapacityInOrderWithSources() throws {
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let peer = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let to = try #require(RawSocketAddress(socket.local))
        // Loopback queues a datagram in the receiver's socket before `send` returns.
        for i in 0..<70 { _ = [UInt8](repeating: UInt8(i), count: i + 1).withUnsafeBytes { peer.send($0, to: to) } }
        let batch = UDPDatagramBatch(capacity: 64, slotBytes: 2048)
        var seen: [[UInt8]] = []
        #expect(batch.read(socket) == 64)
        for i in 0..<batch.count {
            seen.append(Array(batch.datagram(i)))
            #expect(batch.source(i).address == peer.local)
        }
        #expect(batch.read(socket) == 6)
        for i in 0..<batch.count { seen.append(Array(batch.datagram(i))) }
        #expect(batch.read(socket) == 0, "the socket is empty")
        #expect(seen == (0..<70).map { [UInt8](repeating: UInt8($0), count: $0 + 1) })
    }

    @Test func aDatagramLongerThanASlotIsSkippedAndCounted() throws {
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let peer = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let to = try #require(RawSocketAddress(socket.local))
        for size in [8, 64, 16] { _ = [UInt8](repeating: 7, count: size).withUnsafeBytes { peer.send($0, to: to) } }
        let batch = UDPDatagramBatch(capacity: 8, slotBytes: 32)
        #expect(batch.read(socket) == 3)
        #expect((0..<3).map { batch.datagram($0).count } == [8, 0, 16])
        #expect(batch.truncated == 1)
    }
}
