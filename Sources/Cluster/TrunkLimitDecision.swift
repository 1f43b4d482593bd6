/// What the cluster says to a new call on a trunk direction.
public enum TrunkLimitDecision: Sendable, Equatable {
    /// Counted against the trunk's limits; release it when the call ends.
    case counted
    /// The trunk has `maxConcurrentCalls` calls up across the cluster.
    case atConcurrentLimit
    /// `callsPerSecond` calls started on the trunk in this second across the cluster.
    case atRateLimit
    /// Redis did not answer: the node decides alone (by its share of the limits).
    case unavailable
}
