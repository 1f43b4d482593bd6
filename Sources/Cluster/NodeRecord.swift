/// What a node publishes about itself in the cluster's shared state, renewed with each
/// heartbeat: where to reach it and how loaded it is. Kept as JSON in Redis.
public struct NodeRecord: Codable, Sendable, Equatable {
    /// The configured node id (`cluster.nodeId`), stable across restarts.
    public var id: String
    /// Random per process start: a node restarted under the same id is a new incarnation, and
    /// what the old one left (dialogs, call leases) is taken over like a dead node's.
    public var incarnation: String
    /// The node's control API base URL, for requests other nodes forward to it.
    public var api: String
    /// Sessions the node holds.
    public var sessions: Int
    /// The media engine's load, 0 (idle) to 1 (admission refuses new calls).
    public var mediaLoad: Double
    /// Draining: no new session is placed on it; its calls run to their end.
    public var draining: Bool

    public init(
        id: String, incarnation: String, api: String, sessions: Int = 0, mediaLoad: Double = 0, draining: Bool = false
    ) {
        self.id = id
        self.incarnation = incarnation
        self.api = api
        self.sessions = sessions
        self.mediaLoad = mediaLoad
        self.draining = draining
    }

    /// The node's member name in the cluster's keys: one per incarnation.
    public var member: String { NodeMember(id: id, incarnation: incarnation).name }

    /// Whether a new session may be placed here.
    public var takesSessions: Bool { !draining && mediaLoad < 1 }
}

/// A node incarnation as named in the cluster's keys: `id#incarnation`.
public struct NodeMember: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var incarnation: String

    public init(id: String, incarnation: String) {
        self.id = id
        self.incarnation = incarnation
    }

    /// Reads `id#incarnation` (the id itself may not hold `#`: `ClusterSettings` refuses it).
    public init?(name: String) {
        guard let cut = name.lastIndex(of: "#") else { return nil }
        id = String(name[..<cut])
        incarnation = String(name[name.index(after: cut)...])
        guard !id.isEmpty, !incarnation.isEmpty else { return nil }
    }

    public var name: String { "\(id)#\(incarnation)" }
    public var description: String { name }
}
