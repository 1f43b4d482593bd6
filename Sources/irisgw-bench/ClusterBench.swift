import Foundation
import Glibc
import IrisAPI
import Synchronization
import WebClient

/// `BENCH cluster`: three `irisgw serve` nodes in cluster mode on one redis-server, SIPp's
/// `uas` as the carrier (its message trace read for the BYEs' times), all in one run:
/// - setup rate through node 1 alone against round-robin over the three nodes' APIs;
/// - `GET /v1/sessions/{roomId}` of node 1's sessions on node 1 (the holder) and on node 2;
/// - the delay of node 1's events to an event socket on node 3 (`at` to arrival);
/// - `kills` times: answered calls on node 1, SIGKILL, time to the carrier's last BYE with
///   `gateway node lost`, calls offered through nodes 2 and 3 meanwhile; node 1 restarted.
enum ClusterBench {
    struct Settings {
        var timing = ClusterNodesUnderTest.Timing()
        var kills = 5
        var callsPerKill = 10
        /// Calls a second offered through nodes 2 and 3 from the kill to a second after the last BYE.
        var offeredPerSecond = 5.0
        var setupSessions = 200
        var setupRounds = 2
        var workers = 16
        var apiSessions = 20
        var apiRounds = 10
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `BENCH cluster` line and its `BENCH cluster-detail` line; one `skipped` line when
    /// the cluster could not be run. Every child is stopped either way.
    static func run(irisgw: String, settings: Settings = Settings()) -> [String] {
        do {
            return try measure(irisgw: irisgw, settings)
        } catch {
            return ["BENCH cluster skipped=\"\(error)\""]
        }
    }

    private static func measure(irisgw: String, _ settings: Settings) throws -> [String] {
        let redis = try RedisChild()
        defer { redis.stop() }
        let carrierPort = CallRateBench.freeUDPPort() ?? 45_060
        // IRISGW_BENCH_SIPP_TRACE=FILE keeps the carrier's message trace there.
        let kept = ProcessInfo.processInfo.environment["IRISGW_BENCH_SIPP_TRACE"].map { URL(fileURLWithPath: $0) }
        let trace =
            kept ?? FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-\(getpid())-sipp.log")
        defer { if kept == nil { try? FileManager.default.removeItem(at: trace) } }
        let carrier = try BridgeBench.startCarrier(
            port: carrierPort, timeout: 900, arguments: ["-trace_msg", "-message_file", trace.path])
        defer {
            carrier.terminate()
            carrier.waitUntilExit()
        }
        // Node 3's stream: every event with its delay from the stamp, by room.
        let delays = EventDelays()
        let nodes = try ClusterNodesUnderTest(
            irisgw: irisgw, redis: redis, carrierPort: carrierPort, timing: settings.timing,
            observe: { index in index == 2 ? delays.record : nil })
        defer { nodes.stop() }
        guard nodes.waitForMembers(3, on: 0) else {
            throw Failure(description: "the three nodes did not see each other")
        }

        let setup = setupRates(nodes, settings)
        let api = try apiLatency(nodes, settings)
        let eventDelays = delays.of(api.rooms)
        let kills = try killRounds(nodes, trace: trace, settings)
        // Every copy of the takeover BYEs the carrier got (it answers each with 200 OK).
        let copies = SIPpMessageLog.byes(read(trace, from: 0), reason: "gateway node lost").values.map(\.count)

        func ms(_ v: Double) -> String { String(format: "%.0f", v) }
        func ms1(_ v: Double) -> String { String(format: "%.1f", v) }
        let p = GatewayProbe.percentile
        let forwardedOK = api.forwardedStatuses.allSatisfy { $0 == 200 }
        let ratio = forwardedOK ? String(format: "%.2f", p(api.forwarded, 0.99) / p(api.holder, 0.99)) : "skipped"
        var line = "BENCH cluster nodes=3 heartbeat_interval_s=\(settings.timing.heartbeatIntervalSec)"
        line +=
            " node_ttl_s=\(settings.timing.nodeTTLSec) kills=\(settings.kills) calls_per_kill=\(settings.callsPerKill)"
        line +=
            " death_to_last_bye_p50_ms=\(ms(p(kills.lastBye, 0.5))) death_to_last_bye_p99_ms=\(ms(p(kills.lastBye, 0.99)))"
        line += " byes_missing=\(kills.byesMissing)"
        line += " offered_during_kill=\(kills.offered) failed_during_kill=\(kills.failed) target_failed_during_kill=0"
        line += " api_holder_p50_ms=\(ms1(p(api.holder, 0.5))) api_holder_p99_ms=\(ms1(p(api.holder, 0.99)))"
        line +=
            " api_forwarded_p50_ms=\(ms1(p(api.forwarded, 0.5))) api_forwarded_p99_ms=\(ms1(p(api.forwarded, 0.99)))"
        line += " api_forwarded_status=\(Set(api.forwardedStatuses).sorted().map(String.init).joined(separator: ","))"
        line += " api_ratio_p99=\(ratio) target_api_ratio_p99_max=1.5"
        line += " event_delay_p50_ms=\(ms(p(eventDelays, 0.5))) event_delay_p99_ms=\(ms(p(eventDelays, 0.99)))"
        line += " event_samples=\(eventDelays.count)"
        line += " one_node_sessions_per_sec=\(ms(setup.one)) three_nodes_sessions_per_sec=\(ms(setup.three))"
        line += " setup_ratio=\(String(format: "%.2f", setup.three / setup.one)) setup_failed=\(setup.failed)"
        line += " workers=\(settings.workers) cores=\(ProcessInfo.processInfo.activeProcessorCount)"
        line += " setup_note=\(ProcessInfo.processInfo.activeProcessorCount <= 2 ? "overhead_not_scaling" : "scaling")"
        line += " load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
        func list(_ values: [Double]) -> String { values.map(ms).joined(separator: ",") }
        var detail = "BENCH cluster-detail death_to_last_bye_ms=\(list(kills.lastBye))"
        detail += " death_to_first_bye_ms=\(list(kills.firstBye)) rejoin_ms=\(list(kills.rejoin))"
        let meanCopies = Double(copies.reduce(0, +)) / Double(max(1, copies.count))
        detail +=
            " bye_copies_per_call_mean=\(String(format: "%.1f", meanCopies)) bye_copies_per_call_max=\(copies.max() ?? 0)"
        detail += " byes_per_kill=\(kills.byes.map(String.init).joined(separator: ","))"
        detail += " failed_during_kill_why=\(kills.why.isEmpty ? "none" : kills.why.joined(separator: ";"))"
        return [line, detail]
    }

    /// Sessions per second through node 1 alone and round-robin over all three, alternated
    /// `setupRounds` times so drifting load hits both alike.
    private static func setupRates(
        _ nodes: ClusterNodesUnderTest, _ s: Settings
    ) -> (one: Double, three: Double, failed: Int) {
        var seconds = (0.0, 0.0), failed = 0
        for _ in 0..<s.setupRounds {
            let one = BridgeBench.setupRate([nodes.node(0)], sessions: s.setupSessions, workers: s.workers)
            let three = BridgeBench.setupRate(
                (0..<nodes.count).map(nodes.node), sessions: s.setupSessions, workers: s.workers)
            seconds.0 += Double(s.setupSessions) / one.rate
            seconds.1 += Double(s.setupSessions) / three.rate
            failed += one.failed + three.failed
        }
        let total = Double(s.setupSessions * s.setupRounds)
        return (total / seconds.0, total / seconds.1, failed)
    }

    /// `apiSessions` connected sessions on node 1, each read `apiRounds` times on node 1 and on
    /// node 2 in turn (milliseconds), then closed.
    private static func apiLatency(
        _ nodes: ClusterNodesUnderTest, _ s: Settings
    ) throws -> (holder: [Double], forwarded: [Double], forwardedStatuses: [Int], rooms: Set<String>) {
        let (holderNode, holderEvents) = nodes.node(0)
        let holder = try client(holderNode), other = try client(nodes.node(1).0)
        var rooms: [String] = []
        defer { closeAll(holder, holderEvents, rooms) }
        for _ in 0..<s.apiSessions {
            guard let session = BridgeBench.create(holder, mediaPort: 9),
                holderEvents.wait(session.roomId, timeout: 10, { $0.status == .connected })
            else { throw Failure(description: "a session on node 1 did not connect") }
            rooms.append(session.roomId)
        }
        var onHolder: [Double] = [], onOther: [Double] = [], statuses: [Int] = []
        func timed(_ c: HTTPClient, _ room: String) -> (ms: Double, status: Int) {
            let began = Date()
            let status = (try? c.request(method: "GET", path: "/v1/sessions/\(room)", timeout: 5))?.status ?? 0
            return (Date().timeIntervalSince(began) * 1000, status)
        }
        for _ in 0..<s.apiRounds {
            for room in rooms {
                let h = timed(holder, room)
                if h.status == 200 { onHolder.append(h.ms) }
                let o = timed(other, room)
                onOther.append(o.ms)
                statuses.append(o.status)
            }
        }
        return (onHolder, onOther, statuses, Set(rooms))
    }

    /// What the kill rounds measured.
    struct Kills {
        var lastBye: [Double] = [], firstBye: [Double] = [], rejoin: [Double] = []
        var byes: [Int] = []
        var byesMissing = 0, offered = 0, failed = 0
        var why: [String] = []
    }

    private static func killRounds(_ nodes: ClusterNodesUnderTest, trace: URL, _ s: Settings) throws -> Kills {
        var k = Kills()
        // Calls of earlier kills: their BYEs may still be retransmitted after the next kill.
        var earlier: Set<String> = []
        for _ in 0..<s.kills {
            let (victim, victimEvents) = nodes.node(0)
            let c = try client(victim)
            for _ in 0..<s.callsPerKill {
                guard let session = BridgeBench.create(c, mediaPort: 9),
                    victimEvents.wait(session.roomId, timeout: 10, { $0.status == .connected })
                else { throw Failure(description: "a call on node 1 did not connect") }
            }
            let offset = (try? FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int) ?? 0
            let offering = OfferedCalls(nodes: [nodes.node(1), nodes.node(2)], perSecond: s.offeredPerSecond)
            let killedAt = Date().timeIntervalSince1970
            nodes.kill(0)
            var byes: [String: [Double]] = [:]
            // The survivors' BYEs come within the TTL and a heartbeat or two; a call they miss
            // is ended only by the node itself when it restarts ("gateway restarted").
            _ = GatewayProbe.waitFor(timeout: Double(s.timing.nodeTTLSec + s.timing.heartbeatIntervalSec) + 10) {
                byes = SIPpMessageLog.byes(read(trace, from: offset), reason: "gateway node lost").filter {
                    $0.value[0] >= killedAt - 0.001 && !earlier.contains($0.key)
                }
                return byes.count >= s.callsPerKill
            }
            let firsts = byes.values.map { $0[0] }
            if let last = firsts.max(), let first = firsts.min() {
                k.lastBye.append((last - killedAt) * 1000)
                k.firstBye.append((first - killedAt) * 1000)
            }
            earlier.formUnion(byes.keys)
            k.byesMissing += max(0, s.callsPerKill - byes.count)
            k.byes.append(byes.count)
            usleep(1_000_000)
            let outcome = offering.finish()
            k.offered += outcome.offered
            k.failed += outcome.why.count
            k.why += outcome.why
            let restarted = Date()
            try nodes.start(0, restart: true)
            guard nodes.waitForMembers(3, on: 1) else { throw Failure(description: "node 1 did not join again") }
            k.rejoin.append(Date().timeIntervalSince(restarted) * 1000)
        }
        return k
    }

    /// The bytes of `file` from `offset` on.
    private static func read(_ file: URL, from offset: Int) -> String {
        guard let h = try? FileHandle(forReadingFrom: file) else { return "" }
        defer { try? h.close() }
        try? h.seek(toOffset: UInt64(offset))
        return String(decoding: (try? h.readToEnd()) ?? Data(), as: UTF8.self)
    }

    private static func client(_ gw: BridgeBench.Gateway) throws -> HTTPClient {
        try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
    }

    private static func closeAll(_ c: HTTPClient, _ events: BridgeBench.EventRouter, _ rooms: [String]) {
        for room in rooms where BridgeBench.close(c, roomId: room).closed {
            _ = events.wait(room, timeout: 10, { $0.event == .onSessionEnded })
            events.forget(room)
        }
    }
}

/// Each event an event socket got, with its delay from the stamp (`at`) to arrival, by room.
final class EventDelays: Sendable {
    private let delays = Mutex<[(room: String, ms: Double)]>([])

    @Sendable func record(_ event: SessionEvent, arrived: Double) {
        let ms = arrived - Double(event.at)
        delays.withLock { $0.append((event.roomId, ms)) }
    }

    /// The delays of the events of `rooms`, in milliseconds.
    func of(_ rooms: Set<String>) -> [Double] {
        delays.withLock { all in all.filter { rooms.contains($0.room) }.map(\.ms) }
    }
}

/// Calls placed at a steady rate, round-robin over `nodes`, each on a thread of its own:
/// `BridgeBench.session`; a step that fails is a failed call.
final class OfferedCalls: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let offered = Atomic<Int>(0)
    private let failures = Mutex<[String]>([])
    private let calls = DispatchGroup()
    private let pacer = DispatchGroup()

    init(nodes: [(BridgeBench.Gateway, BridgeBench.EventRouter)], perSecond: Double) {
        pacer.enter()
        Thread { [self] in
            defer { pacer.leave() }
            var next = Date()
            var index = 0
            while !stopping.load(ordering: .relaxed) {
                let (gw, events) = nodes[index % nodes.count]
                index += 1
                offered.add(1, ordering: .relaxed)
                calls.enter()
                Thread { [self] in
                    defer { calls.leave() }
                    if let why = Self.call(gw, events) { failures.withLock { $0.append(why) } }
                }.start()
                next += 1 / perSecond
                let wait = next.timeIntervalSinceNow
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
            }
        }.start()
    }

    /// Stops offering, waits for the calls under way; how many were offered and why each failure failed.
    func finish() -> (offered: Int, why: [String]) {
        stopping.store(true, ordering: .relaxed)
        pacer.wait()
        calls.wait()
        return (offered.load(ordering: .relaxed), failures.withLock { $0 })
    }

    private static func call(_ gw: BridgeBench.Gateway, _ events: BridgeBench.EventRouter) -> String? {
        guard let c = try? HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key]) else {
            return "client"
        }
        if case .failure(let step) = BridgeBench.session(c, events) { return step.rawValue }
        return nil
    }
}
