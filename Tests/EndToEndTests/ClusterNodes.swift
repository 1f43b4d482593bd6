import Foundation
import TestSupport
import WebClient

/// A cluster for end-to-end tests: gateway processes started with `--cluster` on one Redis,
/// with a 1 s heartbeat and a 2 s TTL so a death is seen within seconds.
enum ClusterNodes {
    /// The serve file of node `id`.
    /// `extra`: more keys of the file (`sip: { ... }`, `records: ...`).
    static func config(_ redis: RedisServer, id: String, extra: String = "") -> String {
        """
        { cluster: { redis: "\(redis.url)", nodeId: "\(id)", heartbeatIntervalSec: 1, nodeTTLSec: 2 }, \(extra) }
        """
    }

    /// Starts nodes `gw1`...`gwN` one after the other (the first gives the cluster its secrets).
    static func start(
        _ count: Int, redis: RedisServer, profile: GatewayProcess.Profile, arguments: [String] = [], extra: String = ""
    ) async throws -> [GatewayProcess] {
        var nodes: [GatewayProcess] = []
        do {
            for i in 1...count {
                nodes.append(
                    try await GatewayProcess(
                        profiles: [profile], extraArguments: arguments,
                        config: config(redis, id: "gw\(i)", extra: extra)))
            }
        } catch {
            for n in nodes { n.stop() }
            throw error
        }
        return nodes
    }

    /// Waits until `node` counts `members` live nodes (its `/metrics`) and says whether it is
    /// a member itself (`member`: 1 yes, 0 no: Redis away or joining).
    static func waitForMembers(
        _ node: GatewayProcess, _ members: Int?, member: Int = 1, timeout: Double = 15
    ) async -> Bool {
        await eventually(timeout: timeout, pollInterval: 0.1) {
            guard
                let r = try? await HTTPClient(baseURL: node.apiURL).request(
                    method: "GET", path: "/metrics", headers: ["Authorization": "Bearer " + node.apiKey], timeout: 2)
            else { return false }
            let text = String(decoding: r.body, as: UTF8.self)
            return (members.map { text.contains("irisgw_cluster_members \($0)\n") } ?? true)
                && text.contains("irisgw_cluster_member \(member)\n")
        }
    }

    /// An event socket on `node` (the API key's: every session's events).
    static func events(_ node: GatewayProcess, query: String = "") async throws -> WebSocketClient {
        try await offThePool(throwing: { () throws(IrisTransportError) in
            try WebSocketClient(
                url: node.apiURL.replacingOccurrences(of: "http", with: "ws") + "/v1/events" + query,
                headers: ["Authorization": "Bearer " + node.apiKey], timeout: 5)
        })
    }
}
