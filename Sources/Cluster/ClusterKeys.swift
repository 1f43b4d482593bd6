/// The names of everything the cluster keeps in Redis, under one prefix (`cluster.keyPrefix`).
/// A "member" is a node incarnation (`NodeMember.name`).
///
/// | key | type | holds |
/// |---|---|---|
/// | `P:nodes` | sorted set | live members, scored by the Unix ms their TTL runs out |
/// | `P:takeovers` | sorted set | dead members being taken over, scored by when the claim runs out |
/// | `P:node:M` | string (TTL) | member M's `NodeRecord` as JSON |
/// | `P:reaped:M` | string (TTL 10 min) | M was counted dead: its next heartbeat learns it |
/// | `P:sessions` | hash | room id → the member holding the session |
/// | `P:ended:R` | string (TTL: the history's) | the member that held session R, which ended: its answers stay the holder's |
/// | `P:held:M` | hash | room id → what a survivor needs to end M's session (JSON) |
/// | `P:dialogs:M` | hash | room id → the answered dialog (JSON), for the BYE after M's death |
/// | `P:leases:M` | set | M's call leases, `trunkCallsKey\ncallKey`, freed at its death |
/// | `P:trunk:T:D:calls` | hash | the calls counted against trunk T's direction D limit → member |
/// | `P:trunk:T:D:cps:S` | counter (TTL 2 s) | calls started on T in direction D in Unix second S |
/// | `P:reglock:T` | string (TTL) | the member registering trunk T |
/// | `P:secrets` | hash | the cluster's API key and token secrets |
/// | `P:events` | stream | every session event of every node |
/// | `P:once:K` | string (TTL) | a thing done once in the cluster (an inbound call's webhook) |
///
/// The scripts build some keys from the prefix inside Redis, so the keys of one cluster must
/// live on one Redis server (not a Redis Cluster).
public struct ClusterKeys: Sendable {
    public let prefix: String

    public init(prefix: String) {
        self.prefix = prefix
    }

    public var nodes: String { "\(prefix):nodes" }
    public var takeovers: String { "\(prefix):takeovers" }
    public var sessions: String { "\(prefix):sessions" }
    public var secrets: String { "\(prefix):secrets" }
    public var events: String { "\(prefix):events" }
    public func node(_ m: NodeMember) -> String { "\(prefix):node:\(m.name)" }
    public func ended(_ roomId: String) -> String { "\(prefix):ended:\(roomId)" }
    public func held(_ m: NodeMember) -> String { "\(prefix):held:\(m.name)" }
    public func dialogs(_ m: NodeMember) -> String { "\(prefix):dialogs:\(m.name)" }
    public func leases(_ m: NodeMember) -> String { "\(prefix):leases:\(m.name)" }
    public func trunkCalls(_ trunk: String, _ direction: String) -> String {
        "\(prefix):trunk:\(trunk):\(direction):calls"
    }
    /// Without the second: the script appends `:S` from Redis's clock.
    public func trunkRate(_ trunk: String, _ direction: String) -> String {
        "\(prefix):trunk:\(trunk):\(direction):cps"
    }
    public func registrationLock(_ trunk: String) -> String { "\(prefix):reglock:\(trunk)" }
    public func once(_ key: String) -> String { "\(prefix):once:\(key)" }
}
