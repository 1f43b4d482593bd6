import Foundation
import IOCore
import Synchronization

/// A small fixed pool of media threads, each an IOCore `EventLoop` with a 20 ms
/// `PeriodicTimer`, shared by every call (never a thread per call). A leg is pinned to one
/// thread for its life, round robin.
public final class SimMediaThreads: Sendable {
    let threads: [SimMediaThread]
    private let next = Atomic<Int>(0)

    /// Starts `count` threads (at least one).
    public init(count: Int = 2) throws {
        threads = try (0..<max(count, 1)).map { try SimMediaThread(name: "sim-media-\($0)") }
    }

    func pick() -> SimMediaThread {
        threads[next.add(1, ordering: .relaxed).oldValue % threads.count]
    }

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
    private let legs: LoopBoundBox<[ObjectIdentifier: SimMediaWorker]>

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
    func add(_ worker: SimMediaWorker) {
        loop.assertInLoop()
        legs.value[ObjectIdentifier(worker)] = worker
        loop.register(fd: worker.socket.fd) { [worker] in worker.onReadable() }
    }

    /// On the loop (asserted in debug builds).
    func remove(_ worker: SimMediaWorker) {
        loop.assertInLoop()
        guard legs.value.removeValue(forKey: ObjectIdentifier(worker)) != nil else { return }
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
