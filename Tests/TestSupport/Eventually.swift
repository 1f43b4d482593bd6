import Foundation

/// Polls `condition` until it holds or `timeout` seconds pass; true when it held. Suspends
/// (`Task.sleep`) between polls, so a waiting test never holds a thread of the cooperative
/// pool that other tests need. The one polling wait of the test targets: waits for something
/// specific (a port listening, an event, a process exit) are built on it.
public func eventually(
    timeout: Double, pollInterval: Double = 0.01,
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .nanoseconds(Int64(timeout * 1e9))
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline || Task.isCancelled { return false }
        try? await Task.sleep(nanoseconds: UInt64(pollInterval * 1e9))
    }
}

/// `eventually`, calling `drain` before each poll: for peers whose sockets the test itself
/// reads (the media tests' RTP peers).
public func eventually(timeout: Double, drain: () -> Void, _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: timeout) {
        drain()
        return condition()
    }
}

/// Runs `work`, which blocks (a socket read with its own deadline, say), on a thread of its
/// own and suspends until it returns: the cooperative pool's threads stay free for the other
/// tests, and `work` keeps the timing a blocking loop gives. Not on `DispatchQueue.global()`:
/// on Linux that pool is as wide as the cores and grows only when its monitor notices blocked
/// threads, so two long blocking jobs would hold up every other test's job for seconds.
public func offThePool<T>(_ work: @escaping () -> T) async -> T {
    let job = UncheckedSendable(work)
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedSendable<T>, Never>) in
        let thread = Thread { continuation.resume(returning: UncheckedSendable(job.value())) }
        thread.name = "test-off-the-pool"
        thread.start()
    }
    return result.value
}

/// `offThePool` for work that throws: the error comes back with its type.
public func offThePool<T, E: Error>(throwing work: @escaping () throws(E) -> T) async throws(E) -> T {
    try await offThePool { Result { () throws(E) -> T in try work() } }.get()
}

/// A value handed between threads by a test that knows only one of them uses it at a time.
public struct UncheckedSendable<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}
