/// What one media thread carries: the fraction of a CPU it was busy over the last second,
/// and its calls then and now (calls added since the measurement have not shown their cost).
public struct MediaThreadLoad: Sendable, Equatable {
    /// CPU time over wall time in the last measurement window, 0...1 (more when the
    /// measurement straddles a stall).
    public var busy: Double
    /// Calls on the thread now, including those being placed on it.
    public var calls: Int
    /// Calls on the thread when `busy` was measured.
    public var callsAtMeasurement: Int

    public init(busy: Double, calls: Int, callsAtMeasurement: Int) {
        self.busy = busy
        self.calls = calls
        self.callsAtMeasurement = callsAtMeasurement
    }
}

/// Admission and placement by media load: a new call goes to the thread with the lowest
/// predicted load, and is refused when even that one would pass the budget. Plain
/// functions of the measured loads, tested as tables.
public enum MediaAdmission {
    /// The cost of one call as a fraction of a core: what the threads' calls cost on
    /// average when at least `minimumCalls` were measured (fewer say little: the fixed
    /// 50 ticks a second dominate), `defaultCost` otherwise.
    public static func callCost(_ loads: [MediaThreadLoad], defaultCost: Double, minimumCalls: Int = 8) -> Double {
        let calls = loads.reduce(0) { $0 + $1.callsAtMeasurement }
        guard calls >= minimumCalls else { return defaultCost }
        return max(loads.reduce(0) { $0 + $1.busy } / Double(calls), defaultCost / 4)
    }

    /// A thread's load with `extra` more calls: the measured load, plus the cost of calls
    /// placed since the measurement (less that of calls ended since), plus the new ones.
    public static func predicted(_ load: MediaThreadLoad, cost: Double, extra: Int = 1) -> Double {
        max(0, load.busy + Double(load.calls - load.callsAtMeasurement) * cost) + Double(extra) * cost
    }

    /// The thread a new call goes to (lowest predicted load, then fewest calls), or nil
    /// when its predicted load would pass `budget`. `pending`: calls admitted elsewhere
    /// but not placed yet (inbound calls ringing toward the app), spread over the pool.
    public static func place(_ loads: [MediaThreadLoad], budget: Double?, defaultCost: Double, pending: Int = 0) -> Int?
    {
        guard !loads.isEmpty else { return nil }
        let cost = callCost(loads, defaultCost: defaultCost)
        let spread = Double(pending) / Double(loads.count)
        var best = 0
        for i in loads.indices.dropFirst() {
            let a = predicted(loads[i], cost: cost), b = predicted(loads[best], cost: cost)
            if a < b || (a == b && loads[i].calls < loads[best].calls) { best = i }
        }
        if let budget, predicted(loads[best], cost: cost) + spread * cost > budget { return nil }
        return best
    }
}

/// A new call refused because the media threads are at their load budget: the caller
/// answers 503 with `Retry-After` (SIP) or 503 / -503 (API) before any INVITE or answer.
public struct MediaOverloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The least loaded thread's predicted load with the new call, and the budget.
    public var predicted: Double
    public var budget: Double
    /// Seconds after which a retry may succeed (calls end, load falls).
    public var retryAfter: Int { 5 }

    public var description: String {
        "media load at its budget: \(Int((predicted * 100).rounded())) % predicted, budget \(Int((budget * 100).rounded())) %"
    }
}
