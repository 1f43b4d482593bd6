import Foundation
import Glibc
import IrisAPI
import IrisClient
import Synchronization
import TestSupport
import Testing
import WebClient

/// Three `irisgw serve` nodes on one real Redis: a node SIGKILLed with answered calls has
/// them ended by a survivor (the carrier gets its BYEs, the apps their ended events on
/// another node), a trunk's limit holds across the cluster, and events of a session reach
/// sockets on other nodes.
extension GatewaySuites {
    @Suite struct ClusterEndToEndTests {
        /// Events read from an event socket, in the order they came.
        final class EventLog: Sendable {
            final class Store: Sendable {
                let events = Mutex<[SessionEvent]>([])
            }
            let store = Store()
            let reader: Task<Void, Never>

            init(_ ws: WebSocketClient) {
                let store = store
                reader = Task {
                    while !Task.isCancelled {
                        let text: String?
                        do {
                            text = try await ws.receive(timeout: 1)
                        } catch {
                            if case .timeout? = error as? IrisTransportError { continue }
                            return
                        }
                        guard let text else { return }
                        if let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8)) {
                            store.events.withLock { $0.append(e) }
                        }
                    }
                }
            }

            func of(_ room: String) -> [SessionEvent] { store.events.withLock { $0.filter { $0.roomId == room } } }
        }

        @Test func aKilledNodesCallsAreEndedBySurvivors() async throws {
            let calls = 6, during = 2
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer()), calls: calls + during, timeout: 60)
            defer { sipp.stop() }
            let nodes = try await ClusterNodes.start(3, redis: redis, profile: .init(proxies: [sipp.port]))
            defer { for n in nodes { n.stop() } }
            #expect(Set(nodes.map(\.apiKey)).count == 1, "every node has the cluster's API key")
            #expect(await ClusterNodes.waitForMembers(nodes[1], 3))
            let watcher = EventLog(try await ClusterNodes.events(nodes[1]))
            defer { watcher.reader.cancel() }
            var sessions: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { sessions.forEach { $0.0.stop() } }
            for _ in 0..<calls { sessions.append(try await placedSession(nodes[0])) }
            let rooms = sessions.compactMap(\.0.roomId)
            // The other node sees the sessions' events as they happen.
            #expect(
                await eventually(timeout: 10) {
                    rooms.allSatisfy { r in watcher.of(r).contains { $0.status == .connected } }
                })

            #expect(await nodes[0].signal(SIGKILL) != nil)
            // Calls placed on the survivors meanwhile connect.
            var placedDuring: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { placedDuring.forEach { $0.0.stop() } }
            for i in 0..<during { placedDuring.append(try await placedSession(nodes[1 + i % 2])) }

            // Within the TTL and a check, a survivor BYEs every call and says why.
            #expect(
                await eventually(timeout: 20) {
                    sipp.messages.components(separatedBy: "gateway node lost").count - 1 >= calls
                }, sipp.report)
            #expect(
                await eventually(timeout: 20) {
                    rooms.allSatisfy { r in watcher.of(r).contains { $0.event == .onSessionEnded } }
                }, "\(nodes[1].printed)\n\(nodes[2].printed)")
            for r in rooms {
                let ended = watcher.of(r).first { $0.event == .onSessionEnded }
                #expect(ended?.reason == .nodeLost, "\(r): \(watcher.of(r).map(\.event))")
                let seqs = watcher.of(r).map(\.seq)
                #expect(seqs == seqs.sorted(), "in order per session")
            }
            for (s, rec) in placedDuring {
                #expect(rec.ended == nil, "a call placed during the kill is up")
                try await s.close()
            }
        }

        @Test func aTrunkLimitHoldsAcrossTheCluster() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer()), calls: 5, timeout: 60)
            defer { sipp.stop() }
            var profile = GatewayProcess.Profile(proxies: [sipp.port])
            profile.maxConcurrentCalls = 4
            let nodes = try await ClusterNodes.start(3, redis: redis, profile: profile)
            defer { for n in nodes { n.stop() } }
            #expect(await ClusterNodes.waitForMembers(nodes[2], 3))
            var up: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { up.forEach { $0.0.stop() } }
            var refused: [String] = []
            for i in 0..<6 {
                do {
                    up.append(try await placedSession(nodes[i % 3]))
                } catch {
                    refused.append("\(error)")
                }
            }
            #expect(up.count == 4, "\(refused)")
            #expect(refused.count == 2)
            #expect(refused.allSatisfy { $0.contains("limit of 4 calls in the cluster") }, "\(refused)")
            // One ends: another node may place a call again.
            try await up.removeFirst().0.close()
            #expect(
                await eventually(timeout: 10) {
                    guard let placed = try? await placedSession(nodes[2]) else { return false }
                    up.append(placed)
                    return true
                })
        }

        /// A registrar granting 60 s to every REGISTER: each registrant (Call-ID) is a SIPp call.
        static let registrar = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="registrar">
              <recv request="REGISTER"/>
              <send><![CDATA[
            SIP/2.0 200 OK
            [last_Via:]
            [last_From:]
            [last_To:];tag=reg[call_number]
            [last_Call-ID:]
            [last_CSeq:]
            [last_Contact:];expires=60
            Content-Length: 0

            ]]></send>
            </scenario>
            """

        /// A registering trunk is registered by one node of the cluster (the holder of its
        /// lock); when that node is killed another registers within about a TTL.
        @Test func oneNodeRegistersATrunkAndAnotherTakesOver() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(.inline(name: "registrar", xml: Self.registrar), calls: 10, timeout: 60)
            defer { sipp.stop() }
            var profile = GatewayProcess.Profile(proxies: [sipp.port])
            profile.register = true
            let nodes = try await ClusterNodes.start(3, redis: redis, profile: profile)
            defer { for n in nodes { n.stop() } }
            #expect(await ClusterNodes.waitForMembers(nodes[2], 3))
            #expect(await eventually(timeout: 10) { sipp.received("REGISTER ") >= 1 }, sipp.report)
            // Several heartbeats later, still one registrant.
            #expect(!(await eventually(timeout: 3) { sipp.received("REGISTER ") > 1 }), sipp.report)
            let holder = try #require(await Self.registrant(nodes))
            #expect(await nodes[holder].signal(SIGKILL) != nil)
            #expect(await eventually(timeout: 15) { sipp.received("REGISTER ") == 2 }, sipp.report)
            let survivors = nodes.indices.filter { $0 != holder }.map { nodes[$0] }
            #expect(await eventually(timeout: 10) { await Self.registrant(survivors) != nil })
        }

        /// The node whose `/metrics` says it registered the trunk.
        static func registrant(_ nodes: [GatewayProcess]) async -> Int? {
            for (i, n) in nodes.enumerated() {
                guard
                    let r = try? await HTTPClient(baseURL: n.apiURL).request(
                        method: "GET", path: "/metrics", headers: ["Authorization": "Bearer " + n.apiKey], timeout: 2)
                else { continue }
                if String(decoding: r.body, as: UTF8.self).contains("irisgw_trunk_registered{profile=\"trunk\"} 1") {
                    return i
                }
            }
            return nil
        }

        /// Redis stopped with calls up: the calls go on, each node keeps serving its own
        /// sessions and places new ones by its share; Redis back (empty): the nodes rejoin and
        /// write back what they hold, so a node killed after that still has its calls ended.
        @Test func redisStoppedAndRestartedDuringCalls() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer()), calls: 4, timeout: 90)
            defer { sipp.stop() }
            let nodes = try await ClusterNodes.start(2, redis: redis, profile: .init(proxies: [sipp.port]))
            defer { for n in nodes { n.stop() } }
            #expect(await ClusterNodes.waitForMembers(nodes[1], 2))
            var sessions: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { sessions.forEach { $0.0.stop() } }
            for _ in 0..<2 { sessions.append(try await placedSession(nodes[0])) }

            await redis.stopped()
            #expect(await ClusterNodes.waitForMembers(nodes[0], nil, member: 0), "Redis away: not a member")
            let snapshot = try await sessions[0].0.connection.snapshot(roomId: try #require(sessions[0].0.roomId))
            #expect(snapshot.status == .connected, "the node serves its own session")
            sessions.append(try await placedSession(nodes[0]))  // by its share while Redis is away

            try await redis.restart()
            #expect(await ClusterNodes.waitForMembers(nodes[0], 2))
            #expect(await ClusterNodes.waitForMembers(nodes[1], 2))
            #expect(sessions.allSatisfy { $0.1.ended == nil }, "the calls went on")
            #expect(await nodes[0].signal(SIGKILL) != nil)
            #expect(
                await eventually(timeout: 20) {
                    sipp.messages.components(separatedBy: "gateway node lost").count - 1 >= 3
                }, sipp.report)
        }

        /// The cluster flags: one without the other, a bad URL or id is a usage error; a Redis
        /// nobody answers on stops the start with a message that names it and not its password.
        @Test func clusterFlagsAndAnUnreachableRedis() async throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-cl-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: dir) }
            let base = try GatewayCLITests.serveArguments(in: dir)
            let port = try freePort()
            for bad in [
                ["--cluster", "redis://127.0.0.1:\(port)"], ["--node-id", "gw1"],
                ["--cluster", "http://127.0.0.1:\(port)", "--node-id", "gw1"],
                ["--cluster", "redis://127.0.0.1:\(port)", "--node-id", "gw/1"]
            ] {
                #expect(try await GatewayCLITests.run(base + bad, timeout: 20).status == 2, "\(bad)")
            }
            let down = try GatewayCLITests.launch(
                base + ["--cluster", "redis://:hunter2@127.0.0.1:\(port)", "--node-id", "gw1"], mergeErrors: true)
            defer { down.stop() }
            #expect(await down.exit(timeout: 30) == 1)
            let text = down.output
            #expect(text.contains("cannot reach the cluster's Redis at 127.0.0.1:\(port)"), "\(text)")
            #expect(!text.contains("hunter2"))
        }

        /// A node dies while its outbound calls ring: a survivor CANCELs each INVITE with the
        /// INVITE's own Via branch (so the carrier matches it) and the Reason, and the callee
        /// stops ringing.
        @Test func aKilledNodesRingingCallsAreCancelled() async throws {
            let calls = 2
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.ringUntilCancel), calls: calls, timeout: 60)
            defer { sipp.stop() }
            let nodes = try await ClusterNodes.start(2, redis: redis, profile: .init(proxies: [sipp.port]))
            defer { for n in nodes { n.stop() } }
            #expect(await ClusterNodes.waitForMembers(nodes[1], 2))
            var sessions: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { sessions.forEach { $0.0.stop() } }
            for _ in 0..<calls { sessions.append(try await placedSession(nodes[0], status: .connecting)) }
            #expect(await nodes[0].signal(SIGKILL) != nil)
            #expect(await eventually(timeout: 20) { sipp.received("CANCEL ") >= calls }, sipp.report)
            let blocks = sipp.messages.components(separatedBy: "-----------------------------------------------")
            func branch(_ block: String) -> String? {
                guard let via = block.split(separator: "\n").first(where: { $0.contains("Via:") }),
                    let r = via.range(of: "branch=")
                else { return nil }
                return String(via[r.upperBound...].prefix { $0 != ";" && $0 != " " })
            }
            let invites = Set(blocks.filter { $0.contains("INVITE sip:") }.compactMap(branch))
            let cancels = blocks.filter { $0.contains("CANCEL sip:") }
            #expect(cancels.count == calls)
            for c in cancels {
                #expect(c.contains("gateway node lost"), "\(c)")
                #expect(branch(c).map(invites.contains) == true, "the CANCEL carries its INVITE's branch: \(c)")
            }
        }

        /// Every node restarted in turn (SIGTERM: drain, exit; then the same node id again)
        /// while calls are placed at a steady rate on the nodes that are up: no call fails,
        /// each call in progress on a draining node runs to the carrier's hang-up, and the
        /// cluster counts three members again after each restart.
        @Test func aRollingRestartUnderLoadFailsNoCall() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer(byeAfterMs: 1500)), calls: 200, timeout: 120)
            defer { sipp.stop() }
            let profile = GatewayProcess.Profile(proxies: [sipp.port])
            let drain = ["--drain-timeout", "15"]
            let first = try await ClusterNodes.start(3, redis: redis, profile: profile, arguments: drain)
            let up = Mutex<[GatewayProcess?]>(first.map { $0 })
            defer { for n in up.withLock({ $0 }) { n?.stop() } }
            #expect(await ClusterNodes.waitForMembers(first[0], 3))
            let placed = Mutex<[(IrisRtcAudioSession, SessionRecorder)]>([])
            let refused = Mutex<[String]>([])
            defer { placed.withLock { $0 }.forEach { $0.0.stop() } }
            let load = Task {
                var turn = 0
                while !Task.isCancelled {
                    let live = up.withLock { $0.compactMap { $0 } }
                    turn += 1
                    if !live.isEmpty {
                        do {
                            let call = try await placedSession(live[turn % live.count])
                            placed.withLock { $0.append(call) }
                        } catch {
                            refused.withLock { $0.append("\(error)") }
                        }
                    }
                    try? await Task.sleep(for: .milliseconds(300))
                }
            }
            for i in 0..<3 {
                // Calls up everywhere first, so the node drains some.
                let before = placed.withLock { $0.count }
                #expect(await eventually(timeout: 20) { placed.withLock { $0.count } >= before + 4 })
                let node = try #require(up.withLock { $0[i] })
                up.withLock { $0[i] = nil }  // the generator stops choosing it first, as a balancer would
                #expect(await node.signal(SIGTERM, timeout: 30) == 0, "node \(i + 1) drained and exited")
                node.stop()  // its folder, and the check of its records
                // The same node id on a fresh data directory (its records are its predecessor's
                // to keep; the API key comes from the cluster).
                let again = try await GatewayProcess(
                    profiles: [profile], extraArguments: drain, config: ClusterNodes.config(redis, id: "gw\(i + 1)"))
                up.withLock { $0[i] = again }
                #expect(await ClusterNodes.waitForMembers(again, 3))
            }
            load.cancel()
            _ = await load.value
            let calls = placed.withLock { $0 }
            #expect(calls.count >= 10, "the load ran")
            #expect(refused.withLock { $0 }.isEmpty, "\(refused.withLock { $0 })")
            #expect(
                await eventually(timeout: 20) { calls.allSatisfy { $0.1.ended != nil } }, "every call ended")
            for (_, rec) in calls {
                #expect(rec.ended?.reason == .completed, "\(rec.trace)")
            }
        }
    }
}
