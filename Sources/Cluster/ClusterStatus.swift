/// Where a node's membership stands, for `/health`, `/metrics` and tests.
public struct ClusterStatus: Sendable, Equatable {
    /// This incarnation (nil while not joined).
    public var member: NodeMember?
    public var phase: ClusterNodeMachine.Phase
    public var draining: Bool
    /// Live members as of the last heartbeat, this one included when it is a member.
    public var liveNodes: Int
    public var statistics: ClusterStatistics
}

/// What the node counted since it started.
public struct ClusterStatistics: Sendable, Equatable {
    /// Dead members this node took over.
    public var takeovers = 0
    /// Times the cluster counted this node dead.
    public var lostMemberships = 0
    /// Heartbeats Redis did not answer.
    public var heartbeatFailures = 0
    /// Times the node wrote back what it holds after a Redis outage.
    public var republished = 0
    /// Events published to the stream, and those that could not be.
    public var eventsPublished = 0
    public var eventsLost = 0
    /// Other nodes' events read from the stream.
    public var eventsRead = 0
    /// Limit checks Redis could not answer (the node then admitted by its share).
    public var limitChecksUnanswered = 0
}
