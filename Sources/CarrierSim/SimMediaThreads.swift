import Foundation
import IOCore
import Synchronization

/// A small fixed pool of media threads, each an IOCore `EventLoop` with a 20 ms
/// `PeriodicTimer`, shared by every call (never a thread per call). A leg is pinned to one
/// thread for its life, round robin.
public final class SimMediaThreads: Sendable {
    let threads: [SimMediaThread]
    private let next = Atomic<Int>(0)
    private let legIDs = Atomic<Int>(0)

    /// Starts `count` threads (at least one).
    public init(count: Int = 2) throws {
        threads = try (0..<max(count, 1)).map { try SimMediaThread(name: "sim-media-\($0)") }
    }

    func pick() -> SimMediaThread {
        threads[next.add(1, ordering: .relaxed).oldValue % threads.count]
    }

    /// A new leg's name on its thread, never reused (a closed leg's late command finds nothing).
    func nextLegID() -> Int { legIDs.add(1, ordering: .relaxed).newValue }

    /// Stops every thread; legs still open are dropped.
    public func stop() {
        for t in threads { t.stop() }
    }
}

/// One media thread: the legs pinned to it get `tick()` every 20 ms and read their sockets
/// here.
final class SimMediaThread: Sendable {
    let loop: EventLoop
    private let timer: PeriodicTimer
    /// Touched on `loop` only (checked in debug builds).
    private let legs: LoopBoundBox<[Int: SimMediaWorker]>

    init(name: String) throws {
        loop = try EventLoop()
        timer = try PeriodicTimer(interval: 0.020)
        legs = LoopBoundBox([:], loop: loop)
        loop.start(name: name)
        loop.execute { [self] in loop.register(fd: timer.fd) { [self] in onTimer() } }
    }

    func stop() {
        // Once its thread is gone the loop is the caller's: no wait on the loop's queue.
        loop.stop()
        for worker in legs.value.values { loop.unregister(fd: worker.socket.fd) }
        legs.value.removeAll()
        loop.unregister(fd: timer.fd)
    }

    /// On the loop (asserted in debug builds).
    func add(_ worker: SimMediaWorker, id: Int) {
        loop.assertInLoop()
        legs.value[id] = worker
        loop.register(fd: worker.socket.fd) { [worker] in worker.onReadable() }
    }

    /// The leg `id`'s worker, while it is open. On the loop (asserted in debug builds).
    func worker(_ id: Int) -> SimMediaWorker? { legs.value[id] }

    /// On the loop (asserted in debug builds).
    func remove(_ id: Int) {
        loop.assertInLoop()
        guard let worker = legs.value.removeValue(forKey: id) else { return }
        loop.unregister(fd: worker.socket.fd)
    }

    private func onTimer() {
        // A few missed ticks are caught up so streams keep time; a long stall is dropped.
        let expirations = min(timer.read(), 3)
        let now = EventLoop.now()
        for _ in 0..<expirations {
            for worker in legs.value.values { worker.tick(now: now) }
        }
    }
}
