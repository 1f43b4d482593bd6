import Foundation
import Glibc
import IrisAPI
import WebClient

/// Three (or `count`) release `irisgw serve` nodes in cluster mode on one redis-server, routed
/// to one carrier, each with its own data directory, RTP port range and event stream. A node
/// can be SIGKILLed and started again under its name on the data it left. `stop()` ends every
/// node still running and removes their directories.
final class ClusterNodesUnderTest {
    /// The cluster settings of every node; short, so a death is seen within seconds.
    struct Timing {
        var heartbeatIntervalSec = 1
        var nodeTTLSec = 2
    }

    let irisgw: String
    let redis: RedisChild
    let carrierPort: Int
    let timing: Timing
    private(set) var gateways: [BridgeBench.Gateway?]
    private(set) var routers: [BridgeBench.EventRouter?]
    /// Sees every event of node `index`'s stream with its arrival time (Unix ms).
    private let observe: (Int) -> (@Sendable (SessionEvent, Double) -> Void)?

    init(
        irisgw: String, redis: RedisChild, carrierPort: Int, count: Int = 3, timing: Timing = Timing(),
        observe: @escaping (Int) -> (@Sendable (SessionEvent, Double) -> Void)? = { _ in nil }
    ) throws {
        self.irisgw = irisgw
        self.redis = redis
        self.carrierPort = carrierPort
        self.timing = timing
        self.observe = observe
        gateways = Array(repeating: nil, count: count)
        routers = Array(repeating: nil, count: count)
        do {
            // One after the other: the first gives the cluster its secrets.
            for i in 0..<count { try start(i) }
        } catch {
            stop()
            throw error
        }
    }

    var count: Int { gateways.count }

    /// `gw1`, `gw2` ...
    static func nodeId(_ index: Int) -> String { "gw\(index + 1)" }

    /// Node `index`, started (again, on its data directory when `restart`) with its event stream.
    func start(_ index: Int, restart: Bool = false) throws {
        let config = """
            { cluster: { redis: "\(redis.url)", nodeId: "\(Self.nodeId(index))", heartbeatIntervalSec: \(timing.heartbeatIntervalSec), nodeTTLSec: \(timing.nodeTTLSec) } }
            """
        // 3,000 RTP ports each, apart, so the nodes never contend for one.
        let base = 30_000 + index * 3_000
        let gw = try BridgeBench.startGateway(
            irisgw: irisgw, carrierPort: carrierPort, config: config,
            name: "irisgw-bench-\(getpid())-\(Self.nodeId(index))",
            rtpPorts: "\(base)-\(base + 2_998)", keepDirectory: restart)
        gateways[index] = gw
        routers[index] = try BridgeBench.EventRouter(api: gw.api, key: gw.key, observe: observe(index))
    }

    /// Node `index` and its event stream.
    func node(_ index: Int) -> (BridgeBench.Gateway, BridgeBench.EventRouter) { (gateways[index]!, routers[index]!) }

    /// SIGKILL to node `index`, waited for; its directory stays for `start(_:restart:)`.
    func kill(_ index: Int) {
        guard let gw = gateways[index] else { return }
        Glibc.kill(gw.pid, SIGKILL)
        gw.process.waitUntilExit()
        routers[index]?.close()
        gateways[index] = nil
        routers[index] = nil
    }

    /// Whether node `index` counts `members` live nodes (its `/metrics`) within `timeout` seconds.
    func waitForMembers(_ members: Int, on index: Int, timeout: Double = 30) -> Bool {
        guard let gw = gateways[index],
            let client = try? HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
        else { return false }
        return GatewayProbe.waitFor(timeout: timeout) {
            GatewayProbe.metrics(client)?["irisgw_cluster_members"] == Double(members)
        }
    }

    /// Every node still running: SIGINT, SIGKILL after 15 s; then their directories go.
    func stop() {
        for i in gateways.indices {
            routers[i]?.close()
            routers[i] = nil
            guard let gw = gateways[i] else { continue }
            gw.process.interrupt()
            if !GatewayProbe.waitFor(timeout: 15, { !gw.process.isRunning }) { Glibc.kill(gw.pid, SIGKILL) }
            gw.process.waitUntilExit()
            gateways[i] = nil
        }
        for i in gateways.indices {
            try? FileManager.default.removeItem(
                at: FileManager.default.temporaryDirectory.appendingPathComponent(
                    "irisgw-bench-\(getpid())-\(Self.nodeId(i))"))
        }
    }
}
