import IOCore
import Testing

/// `EventLoop.run`: async callers get a loop's result without blocking a thread.
@Suite struct EventLoopRunTests {
    @Test func runsTheWorkOnTheLoopAndReturnsItsResult() async throws {
        let loop = try EventLoop()
        loop.start(name: "run-test")
        defer { loop.stop() }
        let (onLoop, value) = await loop.run { (loop.isInLoop, 6 * 7) }
        #expect(onLoop)
        #expect(value == 42)
        #expect(!loop.isInLoop)
    }

    @Test func manyWaitersAtOnceEachGetTheirOwnResult() async throws {
        let loop = try EventLoop()
        loop.start(name: "run-test")
        defer { loop.stop() }
        // More waiters than the pool has threads: a blocking wait would deadlock here.
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for i in 0..<64 {
                group.addTask { (i, await loop.run { i * i }) }
            }
            var all: [Int: Int] = [:]
            for await (i, square) in group { all[i] = square }
            return all
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0.value == $0.key * $0.key })
    }
}
