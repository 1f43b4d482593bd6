/// Failed digest authentications per source, so a password guesser is banned (through
/// `SourceGuard.ban`, the one ban mechanism) after a few tries. A plain value, time passed
/// in. The table is bounded: when full, entries whose window is over go first, then the
/// oldest.
public struct AuthFailureCounter: Sendable {
    private struct Entry: Sendable {
        var windowStart: Double
        var failures: Int
    }

    /// Failures allowed within `window`; the next one says ban.
    public private(set) var limit: Int
    /// Seconds over which failures are counted.
    public private(set) var window: Double
    public let capacity: Int
    private var entries: [String: Entry] = [:]

    public init(limit: Int, window: Double, capacity: Int = 65_536) {
        self.limit = max(1, limit)
        self.window = max(1, window)
        self.capacity = max(1, capacity)
    }

    /// A new limit and window (a configuration reload); failures counted so far stay.
    public mutating func retune(limit: Int, window: Double) {
        self.limit = max(1, limit)
        self.window = max(1, window)
    }

    /// Sources with failures remembered now.
    public var trackedCount: Int { entries.count }

    /// Counts one failure of `source` at `now`; true when it goes over `limit` (ban it). The
    /// count starts again after a ban, so a source back from one has `limit` tries again.
    public mutating func failed(_ source: String, now: Double) -> Bool {
        var e = entries[source] ?? Entry(windowStart: now, failures: 0)
        if now - e.windowStart >= window { e = Entry(windowStart: now, failures: 0) }
        e.failures += 1
        guard e.failures <= limit else {
            entries[source] = nil
            return true
        }
        if entries[source] == nil, entries.count >= capacity { evict(now: now) }
        entries[source] = e
        return false
    }

    /// A source that authenticated starts from zero.
    public mutating func succeeded(_ source: String) { entries[source] = nil }

    private mutating func evict(now: Double) {
        entries = entries.filter { now - $0.value.windowStart < window }
        guard entries.count >= capacity else { return }
        for (key, _) in entries.sorted(by: { $0.value.windowStart < $1.value.windowStart }).prefix(max(1, capacity / 4))
        {
            entries[key] = nil
        }
    }
}
