/// Per-source request counting and temporary bans: a plain value, time passed in, no socket.
///
/// Each source IP has a one-second window count. Going over `requestsPerSecond` bans an
/// untrusted source for `banSeconds` (every datagram dropped unread meanwhile); a trusted one
/// only loses what goes over `trustedRequestsPerSecond`. The table is bounded: when it is full, entries whose window and
/// ban are over go first, then the oldest.
public struct SourceGuard: Sendable {
    public enum Verdict: Sendable, Equatable {
        case admit
        /// Over the rate: this request is dropped.
        case drop
        /// Over the rate (or a scanner): dropped, and the source is banned from now on.
        case ban
    }

    private struct Entry: Sendable {
        var windowStart: Double
        var count: Int
        var bannedUntil: Double
        var lastSeen: Double
    }

    public let requestsPerSecond: Int
    public let trustedRequestsPerSecond: Int
    public let banSeconds: Double
    public let capacity: Int
    private var entries: [String: Entry] = [:]

    public init(requestsPerSecond: Int, trustedRequestsPerSecond: Int? = nil, banSeconds: Double, capacity: Int = 65_536) {
        self.requestsPerSecond = max(1, requestsPerSecond)
        self.trustedRequestsPerSecond = max(1, trustedRequestsPerSecond ?? requestsPerSecond)
        self.banSeconds = banSeconds
        self.capacity = max(1, capacity)
    }

    /// Sources tracked now.
    public var trackedCount: Int { entries.count }

    /// True while `source` is banned: drop whatever it sends without reading it.
    public func isBanned(_ source: String, now: Double) -> Bool {
        guard let e = entries[source] else { return false }
        return now < e.bannedUntil
    }

    /// Counts one request from `source` at `now`.
    public mutating func admit(_ source: String, trusted: Bool, now: Double) -> Verdict {
        var e = entries[source] ?? Entry(windowStart: now, count: 0, bannedUntil: 0, lastSeen: now)
        if now < e.bannedUntil { return .drop }
        if now - e.windowStart >= 1 {
            e.windowStart = now
            e.count = 0
        }
        e.count += 1
        e.lastSeen = now
        var verdict = Verdict.admit
        if e.count > (trusted ? trustedRequestsPerSecond : requestsPerSecond) {
            if trusted {
                verdict = .drop
            } else {
                e.bannedUntil = now + banSeconds
                verdict = .ban
            }
        }
        store(source, e, now: now)
        return verdict
    }

    /// Bans `source` from `now` (a scanner was recognised).
    public mutating func ban(_ source: String, now: Double) {
        var e = entries[source] ?? Entry(windowStart: now, count: 0, bannedUntil: 0, lastSeen: now)
        e.bannedUntil = now + banSeconds
        e.lastSeen = now
        store(source, e, now: now)
    }

    private mutating func store(_ source: String, _ entry: Entry, now: Double) {
        if entries[source] == nil, entries.count >= capacity { evict(now: now) }
        entries[source] = entry
    }

    /// Makes room: forgets every source with nothing left to remember, or else a quarter of
    /// the table, unbanned and oldest first (one pass, so a flood of new sources costs O(1)
    /// per request on average, and cannot wash a ban out).
    private mutating func evict(now: Double) {
        entries = entries.filter { now < $0.value.bannedUntil || now - $0.value.windowStart < 1 }
        guard entries.count >= capacity else { return }
        let oldest = entries.sorted { a, b in
            let (aBanned, bBanned) = (now < a.value.bannedUntil, now < b.value.bannedUntil)
            return aBanned != bBanned ? !aBanned : a.value.lastSeen < b.value.lastSeen
        }.prefix(max(1, capacity / 4))
        for (key, _) in oldest { entries[key] = nil }
    }
}
