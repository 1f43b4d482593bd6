import Cluster
import Formats

extension ServeConfiguration {
    /// The `cluster` section's keys (docs/operations.md, "Running a cluster").
    static let clusterKeys = [
        "redis", "nodeId", "heartbeatIntervalSec", "nodeTTLSec", "takeoverTTLSec", "keyPrefix"
    ]

    /// `cluster: { redis: "redis://10.0.0.9:6379", nodeId: "gw1", heartbeatIntervalSec: 1,
    /// nodeTTLSec: 5, takeoverTTLSec: 30, keyPrefix: "irisgw" }`: `redis` and `nodeId` are
    /// required, the rest keep `ClusterSettings`' defaults. The Redis URL is never echoed in an
    /// error (it can hold a password).
    static func clusterSettings(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError) -> ClusterSettings {
        let o = try schema.object(value, at: path, keys: clusterKeys)
        guard let redis = try o.optional("redis", { (v, p) throws(ProfileError) in try schema.string(v, at: p) }) else {
            throw schema.fail("\(path).redis", "is required in cluster mode (redis://HOST:PORT)")
        }
        guard redis.hasPrefix("redis://") else {
            throw schema.fail("\(path).redis", "must be a redis:// URL")
        }
        guard let id = try o.optional("nodeId", { (v, p) throws(ProfileError) in try schema.string(v, at: p) }) else {
            throw schema.fail("\(path).nodeId", "is required in cluster mode")
        }
        if let problem = ClusterSettings.nodeIdProblem(id) { throw schema.fail("\(path).nodeId", problem) }
        var s = ClusterSettings(redis: redis, nodeId: id)
        if let v = try o.optional(
            "heartbeatIntervalSec", { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 1...60) })
        {
            s.heartbeatInterval = Double(v)
        }
        if let v = try o.optional(
            "nodeTTLSec", { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 2...600) })
        {
            s.nodeTTL = Double(v)
        }
        if let v = try o.optional(
            "takeoverTTLSec", { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 5...3600) })
        {
            s.takeoverTTL = Double(v)
        }
        if s.nodeTTL <= s.heartbeatInterval {
            throw schema.fail("\(path).nodeTTLSec", "must be longer than heartbeatIntervalSec")
        }
        if let v = try o.optional("keyPrefix", { (v, p) throws(ProfileError) in try schema.string(v, at: p) }) {
            guard !v.isEmpty, v.utf8.count <= 64, !v.contains(where: { $0 == " " || $0 == "\n" }) else {
                throw schema.fail("\(path).keyPrefix", "must be 1-64 characters without spaces")
            }
            s.keyPrefix = v
        }
        return s
    }
}
