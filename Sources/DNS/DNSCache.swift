/// Answers kept for their TTL, failures for a short fixed time. A plain value: `now` comes in
/// with every call, so its tests need no clock.
public struct DNSCache: Sendable {
    struct Entry: Sendable {
        var answer: DNSAnswer
        var expires: Double
    }

    /// Seconds a failure (NXDOMAIN, no data, SERVFAIL, timeout) is kept, so a dead name or
    /// server costs one lookup per this time rather than one per call.
    public var negativeTTL: Double
    /// Longest a positive answer is kept, whatever its TTL says.
    public var maxTTL: Double
    /// Entries at most; past it the expired go first, then the ones closest to expiry.
    public var capacity: Int
    private var entries: [DNSQuestion: Entry] = [:]

    public init(negativeTTL: Double = 30, maxTTL: Double = 86_400, capacity: Int = 10_000) {
        self.negativeTTL = negativeTTL
        self.maxTTL = maxTTL
        self.capacity = capacity
    }

    /// The live entry for `question`, or nil when there is none or it expired.
    public func answer(for question: DNSQuestion, now: Double) -> DNSAnswer? {
        guard let e = entries[question], e.expires > now else { return nil }
        return e.answer
    }

    /// Keeps `answer` for its TTL (records) or `negativeTTL` (a failure). A TTL of 0 is not
    /// kept: the next question asks again, as the zone wants.
    public mutating func store(_ answer: DNSAnswer, for question: DNSQuestion, now: Double) {
        let ttl: Double
        switch answer {
        case .success(let records): ttl = min(Double(records.ttl), maxTTL)
        case .failure(let failure):
            // A resolver that cannot run is not the name's fault: nothing to remember.
            if case .resolverUnavailable = failure { return }
            ttl = negativeTTL
        }
        guard ttl > 0 else {
            entries[question] = nil
            return
        }
        if entries.count >= capacity, entries[question] == nil { evict(now: now) }
        entries[question] = Entry(answer: answer, expires: now + ttl)
    }

    /// Entries held now (expired ones included until they are evicted).
    public var count: Int { entries.count }

    private mutating func evict(now: Double) {
        entries = entries.filter { $0.value.expires > now }
        guard entries.count >= capacity else { return }
        // Still full of live entries: drop the tenth that expires soonest.
        let drop = entries.sorted { $0.value.expires < $1.value.expires }.prefix(max(1, capacity / 10))
        for (key, _) in drop { entries[key] = nil }
    }
}
