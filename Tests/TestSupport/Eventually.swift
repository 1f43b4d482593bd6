import Foundation

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass; true when it held.
/// The pause between polls suspends, so waiting never holds a thread of the test pool.
public func eventually(timeout: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let until = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= until { return false }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
}
