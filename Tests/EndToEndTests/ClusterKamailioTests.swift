import Foundation
import Glibc
import IrisAPI
import IrisClient
import TestSupport
import Testing

/// A cluster behind Kamailio: three nodes on one Redis, the carrier (SIPp) on its own address
/// of lo reaching them only through Kamailio, records in PostgreSQL.
extension GatewaySuites {
    @Suite(
        .enabled(if: Kamailio.isInstalled && SIPp.isInstalled, "needs kamailio and SIPp"),
        .timeLimit(.minutes(3)))
    struct ClusterKamailioTests {
        /// A node holding answered calls is killed: a survivor's BYEs reach the carrier
        /// through Kamailio (the route the dialogs were record-routed along) with the Reason,
        /// and the dead node's rows in the shared PostgreSQL table are closed `node-lost`.
        @Test func aKilledNodesCallsAreEndedThroughKamailio() async throws {
            let calls = 4
            let redis = try await RedisServer()
            defer { redis.stop() }
            let postgres = try await PostgresServer.start()
            let database = try await postgres.createDatabase()
            let carrier = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer(recordRoute: true)), calls: calls, timeout: 60,
                arguments: ["-i", ClusterHosts.carrier])
            defer { carrier.stop() }
            let port = try freePort()
            let nodes = try await ClusterNodes.start(
                3, redis: redis, profile: KamailioTests.trunk(carrierPort: carrier.port),
                extra: """
                    records: "\(postgres.url(database: database))",
                    sip: { trustedProxies: ["\(ClusterHosts.kamailio)"], edgeProxy: "sip:\(ClusterHosts.kamailio):\(port)" }
                    """)
            defer { for n in nodes { n.stop() } }
            let k = try await Kamailio(nodes: nodes.map(\.sipPeer), host: ClusterHosts.kamailio, port: port)
            defer { k.stop() }
            #expect(await ClusterNodes.waitForMembers(nodes[1], 3))
            var sessions: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { sessions.forEach { $0.0.stop() } }
            for _ in 0..<calls { sessions.append(try await placedSession(nodes[0])) }
            let via = "Via: SIP/2.0/UDP \(ClusterHosts.kamailio):\(port);branch="
            #expect(carrier.messages.contains(via), "the INVITEs came through Kamailio: \(carrier.report)")

            #expect(await nodes[0].signal(SIGKILL) != nil)
            #expect(await carrier.waitForExit(timeout: 30) == 0, carrier.report)
            let byes = carrier.messages.components(separatedBy: "BYE sip:").dropFirst()
            #expect(byes.count == calls, carrier.report)
            #expect(byes.allSatisfy { $0.contains(via) && $0.contains("gateway node lost") }, carrier.report)
            var rows = ""
            #expect(
                await eventually(timeout: 10) {
                    rows =
                        (try? await postgres.psql(
                            "SELECT end_reason FROM call_records WHERE ended_at IS NOT NULL", database: database)) ?? ""
                    return rows.components(separatedBy: "node-lost").count - 1 == calls
                }, "the dead node's records are closed node-lost: \(rows)")
            for n in nodes { n.stop() }
            await postgres.stop()
        }
    }
}
