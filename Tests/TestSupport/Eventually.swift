import Foundation

/// Polls `condition` until it holds or `timeout` seconds pass; true when it held. Suspends
/// (`Task.sleep`) between polls, so a waiting test never holds a thread of the cooperative
/// pool that other tests need. The one polling wait of the test targets: waits for something
/// specific (a port listening, an event, a process exit) are built on it.
public func eventually(timeout: Double, pollInterval: Double = 0.01,
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
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
