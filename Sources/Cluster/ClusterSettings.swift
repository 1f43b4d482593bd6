/// Cluster mode of `irisgw serve` (`--cluster redis://HOST:PORT --node-id NAME`, or the
/// serve keys `cluster.redis` and `cluster.nodeId`). Without it the gateway is one process
/// with nothing shared.
public struct ClusterSettings: Sendable, Equatable {
    /// The Redis holding the cluster's shared state: `redis://[:password@]host:port[/db]`.
    /// Never logged (it can hold a password).
    public var redis: String
    /// This node's name, unique in the cluster and stable across restarts
    /// (letters, digits, `-`, `_`, `.`; at most 64).
    public var nodeId: String
    /// Seconds between heartbeats. Default 1.
    public var heartbeatInterval: Double = 1
    /// Seconds after its last heartbeat that a node counts as dead and a survivor ends its
    /// calls. Default 5: with the 1 s check, a dead node's calls end within about 7 s.
    public var nodeTTL: Double = 5
    /// Seconds between checks for dead nodes. Default 1.
    public var reapInterval: Double = 1
    /// Seconds a survivor has to finish taking over a dead node before another may. Default 30.
    public var takeoverTTL: Double = 30
    /// The prefix of every key the cluster writes, so clusters can share one Redis. Default `irisgw`.
    public var keyPrefix: String = "irisgw"

    public init(redis: String, nodeId: String) {
        self.redis = redis
        self.nodeId = nodeId
    }

    /// Why a node id cannot be used.
    public static func nodeIdProblem(_ id: String) -> String? {
        if id.isEmpty { return "is empty" }
        if id.utf8.count > 64 { return "is longer than 64 characters" }
        let allowed = id.unicodeScalars.allSatisfy {
            (("a"..."z").contains($0) || ("A"..."Z").contains($0)
                || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == ".")
        }
        return allowed ? nil : "may hold only letters, digits, '-', '_' and '.'"
    }
}
