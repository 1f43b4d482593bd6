import Synchronization

/// Bytes of media all live captures may hold together (`capture.maxLiveMiB`). Captures
/// take from it on their media threads as they grow and give back when their session
/// ends (their media then counts against the ended captures' bound instead).
final class CaptureBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = max(0, limit) }

    /// Bytes taken now.
    var taken: Int { used.load(ordering: .relaxed) }

    /// Takes `bytes` when they fit; false (nothing taken) when they would pass the limit.
    func take(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        if used.add(bytes, ordering: .relaxed).newValue <= limit { return true }
        used.subtract(bytes, ordering: .relaxed)
        return false
    }

    func give(_ bytes: Int) {
        if bytes > 0 { used.subtract(bytes, ordering: .relaxed) }
    }
}
