/// Per-source request counting and temporary bans: a plain value, time passed in, no socket.
///
/// Each source IP has a token bucket that refills at its rate (`requestsPerSecond`, or
/// `trustedRequestsPerSecond` for a trusted source) and holds `burst(rate)` tokens. A request
/// with no token left bans an untrusted source for `banSeconds` (every datagram dropped
/// unread meanwhile); a trusted one only loses that request. A bucket, unlike a one-second
/// window, spreads what it admits over the second: a window let a trusted flood's 2,000
/// requests in within a few milliseconds, and while the SIP loop worked through them the
/// socket's receive queue overflowed, legitimate responses with it.
///
/// The table is bounded: when it is full, entries whose bucket is full again and whose ban
/// is over go first, then the oldest.
public struct SourceGuard: Sendable {
    public enum Verdict: Sendable, Equatable {
        case admit
        /// Over the rate: this request is dropped.
        case drop
        /// Over the rate (or a scanner): dropped, and the source is banned from now on.
        case ban
    }

    private struct Entry: Sendable {
        var tokens: Double
        /// When `tokens` was last brought up to date (the last request seen).
        var updated: Double
        var bannedUntil: Double
    }

    public private(set) var requestsPerSecond: Int
    public private(set) var trustedRequestsPerSecond: Int
    public private(set) var banSeconds: Double
    public let capacity: Int
    private var entries: [String: Entry] = [:]

    public init(
        requestsPerSecond: Int, trustedRequestsPerSecond: Int? = nil, banSeconds: Double, capacity: Int = 65_536
    ) {
        self.requestsPerSecond = max(1, requestsPerSecond)
        self.trustedRequestsPerSecond = max(1, trustedRequestsPerSecond ?? requestsPerSecond)
        self.banSeconds = banSeconds
        self.capacity = max(1, capacity)
    }

    /// The requests a bucket of `rate` per second lets through at once: a second's worth up
    /// to 50, a tenth of a second's beyond (2000/s: 200 at once).
    public static func burst(_ rate: Int) -> Double { max(Double(min(rate, 50)), Double(rate) / 10) }

    /// New rates and ban length (a configuration reload): what is tracked stays (buckets
    /// refill at the new rate, bans run out as they were set).
    public mutating func retune(requestsPerSecond: Int, trustedRequestsPerSecond: Int? = nil, banSeconds: Double) {
        self.requestsPerSecond = max(1, requestsPerSecond)
        self.trustedRequestsPerSecond = max(1, trustedRequestsPerSecond ?? requestsPerSecond)
        self.banSeconds = banSeconds
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
        let rate = trusted ? trustedRequestsPerSecond : requestsPerSecond
        let burst = Self.burst(rate)
        var e = entries[source] ?? Entry(tokens: burst, updated: now, bannedUntil: 0)
        if now < e.bannedUntil { return .drop }
        e.tokens = min(burst, e.tokens + max(0, now - e.updated) * Double(rate))
        e.updated = now
        var verdict = Verdict.admit
        if e.tokens >= 1 {
            e.tokens -= 1
        } else if trusted {
            verdict = .drop
        } else {
            e.bannedUntil = now + banSeconds
            verdict = .ban
        }
        store(source, e, now: now)
        return verdict
    }

    /// Counts one ACK from a trusted `source`. ACKs have a bucket of their own at the trusted
    /// rate: every request the source's bucket admits is answered, and a final answer is
    /// retransmitted until its ACK comes (RFC 3261 §17.2.1). Counted with the requests, a
    /// flood's ACKs were dropped with the INVITEs over the rate, and each admitted INVITE's
    /// answer went out about ten times until Timer H. An ACK never opens a transaction, so its
    /// own bucket bounds what ACKs alone can cost.
    public mutating func admitAcknowledgement(_ source: String, now: Double) -> Verdict {
        admit(source + " ACK", trusted: true, now: now)
    }

    /// Bans `source` from `now` (a scanner was recognised).
    public mutating func ban(_ source: String, now: Double) {
        var e = entries[source] ?? Entry(tokens: 0, updated: now, bannedUntil: 0)
        e.bannedUntil = now + banSeconds
        e.updated = now
        store(source, e, now: now)
    }

    private mutating func store(_ source: String, _ entry: Entry, now: Double) {
        if entries[source] == nil, entries.count >= capacity { evict(now: now) }
        entries[source] = entry
    }

    /// Makes room: forgets every source with nothing left to remember (not banned, and idle
    /// long enough for any bucket to be full again), or else a quarter of the table, unbanned
    /// and oldest first (one pass, so a flood of new sources costs O(1) per request on
    /// average, and cannot wash a ban out).
    private mutating func evict(now: Double) {
        let refill = max(
            Self.burst(trustedRequestsPerSecond) / Double(trustedRequestsPerSecond),
            Self.burst(requestsPerSecond) / Double(requestsPerSecond))
        entries = entries.filter { now < $0.value.bannedUntil || now - $0.value.updated < refill }
        guard entries.count >= capacity else { return }
        let oldest = entries.sorted { a, b in
            let (aBanned, bBanned) = (now < a.value.bannedUntil, now < b.value.bannedUntil)
            return aBanned != bBanned ? !aBanned : a.value.updated < b.value.updated
        }.prefix(max(1, capacity / 4))
        for (key, _) in oldest { entries[key] = nil }
    }
}
