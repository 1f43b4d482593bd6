/// Per-trunk toll-fraud limits (docs/design.md, "Reliability and security"): concurrent outbound calls and new calls
/// per second, checked before any INVITE. A plain value; the gateway keeps one per profile
/// on the SIP loop and passes the time in.
public struct Admission: Sendable, Equatable {
    public var maxConcurrent: Int
    public var perSecond: Int
    public private(set) var active = 0
    /// Start times of the calls admitted in the last second.
    private var recent: [Double] = []

    public init(maxConcurrent: Int, perSecond: Int) {
        self.maxConcurrent = maxConcurrent
        self.perSecond = perSecond
    }

    public enum Refusal: Sendable, Equatable { case concurrency, rate }

    /// Admits one call at `now`, or says which limit refuses it (and changes nothing).
    public mutating func admit(now: Double) -> Refusal? {
        recent.removeAll { now - $0 >= 1 }
        if active >= maxConcurrent { return .concurrency }
        if recent.count >= perSecond { return .rate }
        active += 1
        recent.append(now)
        return nil
    }

    public mutating func release() { active = max(0, active - 1) }
}
