import Foundation
import Glibc
import IrisAPI
import Synchronization
import WebClient

/// `BENCH transfer`: one release `irisgw serve` and one `irisgw carrier-sim` (its delays
/// scaled down by `--time-scale`), both sessions through the raw control API:
/// - setup: `calls` concurrent sessions to the answering number, each timed from its create
///   request to the arrival of `Connected`; closed again;
/// - transfers: `calls` concurrent sessions to the transfer-accept number, connected, then all
///   transferred at once (blind, to the answering number), each timed from its transfer
///   request to the arrival of `onSessionTransfer` `succeeded`.
///
/// The ratios transfer : setup say what a transfer costs against a call setup through the
/// same gateway in the same run. A setup is an INVITE transaction (100, 180, 200, ACK); a
/// transfer is a REFER (202), three NOTIFYs (100, 180, 200) each answered by the gateway, and
/// the BYE that ends the transferred leg. With the simulator's own delays (its answer delay,
/// the 0.5 s between NOTIFYs) scaled to about a millisecond, what is left is the gateway's
/// and the loopback's work; about 2 would mean a transfer costs what two setups do.
enum TransferBench {
    struct Settings {
        var calls = 100
        /// The simulator's `--time-scale`: its 1 s answer delay becomes 1 ms, its 0.5 s between
        /// NOTIFYs 0.5 ms.
        var timeScale = 0.001
        /// Answers after the simulator's `answerDelay` (docs/carrier-testing.md).
        var answering = "+15550100001"
        /// `transfer-accept`: takes the REFER, NOTIFYs 100, 180 and the target's final status.
        var transferAccepting = "+15550100024"
        /// Seconds any one step (connected, transfer over, session ended) may take.
        var stepTimeout = 20.0
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `BENCH transfer` line; `BENCH transfer skipped="<why>"` when the run could not be
    /// made. The gateway and the simulator are stopped either way.
    static func run(irisgw: String, settings: Settings = Settings()) -> String {
        do {
            return try measure(irisgw: irisgw, settings)
        } catch {
            return "BENCH transfer skipped=\"\(error)\""
        }
    }

    private static func measure(irisgw: String, _ s: Settings) throws -> String {
        let sim = try CarrierSimChild(irisgw: irisgw, timeScale: s.timeScale)
        defer { sim.stop() }
        // Every call's requests come from this one address, all at once (docs/operations.md,
        // "Control API bounds": the default 64 a source would reset some at accept).
        let gw = try BridgeBench.startGateway(
            irisgw: irisgw, carrierPort: sim.port,
            config: "{ apiLimits: { maxConnectionsPerSource: \(4 * s.calls + 64) } }",
            name: "irisgw-bench-\(getpid())-transfer")
        defer { gw.stop() }
        let arrivals = Arrivals()
        let router = try BridgeBench.EventRouter(api: gw.api, key: gw.key, observe: arrivals.record)
        defer { router.close() }
        let client = try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
        let phases = Phases(client: client, router: router, arrivals: arrivals, settings: s)

        let setup = phases.setups()
        let afterSetup = refusals(client)
        let transfers = phases.transfers()
        // A transferred session ends (`transferred`): one that does not, or is still listed, is stuck.
        let ended = together(transfers.rooms) { room in
            router.wait(room, timeout: s.stepTimeout) { $0.event == .onSessionEnded }
        }
        let left = try liveSessions(client)
        let atEnd = refusals(client)
        for (room, over) in zip(transfers.rooms, ended) where !over {
            _ = BridgeBench.close(client, roomId: room, within: 5)
        }

        let p = GatewayProbe.percentile
        func ms(_ v: Double) -> String { String(format: "%.1f", v) }
        func ratio(_ q: Double) -> String {
            setup.ms.isEmpty || transfers.ms.isEmpty
                ? "skipped" : String(format: "%.2f", p(transfers.ms, q) / p(setup.ms, q))
        }
        func counts(_ c: [String: Int]) -> String {
            let nonzero = c.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            return nonzero.isEmpty ? "none" : nonzero.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        }
        var line = "BENCH transfer concurrent=\(s.calls)"
        line += " transfer_p50_ms=\(ms(p(transfers.ms, 0.5))) transfer_p99_ms=\(ms(p(transfers.ms, 0.99)))"
        line += " setup_p50_ms=\(ms(p(setup.ms, 0.5))) setup_p99_ms=\(ms(p(setup.ms, 0.99)))"
        line += " ratio_p50=\(ratio(0.5)) ratio_p99=\(ratio(0.99)) failed=\(s.calls - transfers.ms.count)"
        line += " time_scale=\(s.timeScale) setup_failed=\(s.calls - setup.ms.count)"
        // Over T1 (500 ms): waited for a retransmission, of a NOTIFY the gateway shed, say.
        line += " transfers_over_500ms=\(transfers.ms.filter { $0 > 500 }.count)"
        line += " not_ended=\(ended.filter { !$0 }.count) sessions_left=\(left)"
        line += " failed_why=\(counts(setup.why.merging(transfers.why, uniquingKeysWith: +)))"
        line += " setup_refused=\(counts(afterSetup))"
        line += " transfer_refused=\(counts(atEnd.merging(afterSetup) { $0 - $1 }))"
        line += " load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
        return line
    }

    /// The gateway's `irisgw_refused_total` counts so far (none when `/metrics` did not answer).
    private static func refusals(_ client: HTTPClient) -> [String: Int] {
        GatewayProbe.metrics(client).map(GatewayProbe.refusals) ?? [:]
    }

    /// What a phase measured: each success's milliseconds and each failure's reason, counted.
    struct Outcome {
        var ms: [Double] = []
        var why: [String: Int] = [:]
        /// The rooms of the sessions that connected.
        var rooms: [String] = []
    }

    /// The two phases against one gateway, its event stream and the arrivals it stamps.
    struct Phases {
        let client: HTTPClient
        let router: BridgeBench.EventRouter
        let arrivals: Arrivals
        let settings: Settings

        /// `calls` sessions at once to `number`, each waited for until `Connected`.
        func connectAll(_ number: String) -> (calls: [(room: String, began: Double)], why: [String: Int]) {
            let (client, router, timeout) = (client, router, settings.stepTimeout)
            var calls: [(room: String, began: Double)] = [], why: [String: Int] = [:]
            for result in together(
                Array(repeating: number, count: settings.calls), { connect(client, router, $0, timeout) })
            {
                switch result {
                case .success(let c): calls.append(c)
                case .failure(let f): why[f.description, default: 0] += 1
                }
            }
            return (calls, why)
        }

        /// Setup: create to `Connected`, then every session closed (and ended) before the transfers.
        func setups() -> Outcome {
            let (calls, why) = connectAll(settings.answering)
            var o = Outcome(why: Dictionary(uniqueKeysWithValues: why.map { ("setup_" + $0.key, $0.value) }))
            o.rooms = calls.map(\.room)
            o.ms = calls.compactMap { c in arrivals.at(c.room, .connected).map { $0 - c.began } }
            let (client, router, timeout) = (client, router, settings.stepTimeout)
            _ = together(o.rooms) { room in
                BridgeBench.close(client, roomId: room).closed
                    && router.wait(room, timeout: timeout) { $0.event == .onSessionEnded }
            }
            return o
        }

        /// Transfers: every session connected first, then all asked at once; from the request
        /// to `onSessionTransfer` `succeeded`.
        func transfers() -> Outcome {
            let (calls, why) = connectAll(settings.transferAccepting)
            var o = Outcome(why: why)
            o.rooms = calls.map(\.room)
            let (client, router, timeout, target) = (client, router, settings.stepTimeout, settings.answering)
            let asked = together(o.rooms) { transfer(client, router, $0, to: target, timeout: timeout) }
            for (room, began) in zip(o.rooms, asked) {
                if let began, let at = arrivals.at(room, .succeeded) {
                    o.ms.append(at - began)
                } else {
                    let reason = began == nil ? "refused" : arrivals.at(room, .failed) != nil ? "failed" : "no_outcome"
                    o.why[reason, default: 0] += 1
                }
            }
            return o
        }
    }

    /// A session to `number` that reached `Connected`: its room and when its create request
    /// was sent (Unix ms); or why not, as a short key for `failed_why` (the create's status, or
    /// `not_connected` in time). A refused create's answer goes to stderr.
    private static func connect(
        _ client: HTTPClient, _ router: BridgeBench.EventRouter, _ number: String, _ timeout: Double
    ) -> Result<(room: String, began: Double), Failure> {
        let began = Date().timeIntervalSince1970 * 1000
        switch BridgeBench.creating(client, mediaPort: 9, targetTN: number) {
        case .failure(let refusal):
            FileHandle.standardError.write(Data("BENCH transfer: create \(number): \(refusal)\n".utf8))
            let status = refusal.description.prefix { $0.isNumber }
            return .failure(Failure(description: status.isEmpty ? "create_unanswered" : "create_\(status)"))
        case .success(let session):
            guard router.wait(session.roomId, timeout: timeout, { $0.status == .connected }) else {
                return .failure(Failure(description: "not_connected"))
            }
            return .success((session.roomId, began))
        }
    }

    /// Asks for the blind transfer of `room` to `target` and waits for its outcome; when the
    /// request was sent (Unix ms), nil when it was refused.
    private static func transfer(
        _ client: HTTPClient, _ router: BridgeBench.EventRouter, _ room: String, to target: String,
        timeout: Double
    ) -> Double? {
        guard let body = try? JSONEncoder().encode(TransferRequest(targetTN: target)) else { return nil }
        let began = Date().timeIntervalSince1970 * 1000
        guard
            let r = try? client.request(
                method: "POST", path: "/v1/sessions/\(room)/transfer", body: Array(body), timeout: timeout),
            r.status == 202
        else { return nil }
        _ = router.wait(room, timeout: timeout) {
            $0.event == .onSessionTransfer && ($0.transfer?.state == .succeeded || $0.transfer?.state == .failed)
        }
        return began
    }

    /// How many sessions `GET /v1/sessions` still lists.
    private static func liveSessions(_ client: HTTPClient) throws -> Int {
        let r = try client.request(method: "GET", path: "/v1/sessions", timeout: 10)
        guard r.status == 200 else { throw Failure(description: "GET /v1/sessions: \(r.status)") }
        return try JSONDecoder().decode(SessionList.self, from: Data(r.body)).sessions.count
    }

    /// `body` of each of `items`, each on a thread of its own, all let go at the same moment
    /// once every thread is up (so the gateway sees them concurrently); the results in order.
    static func together<Item: Sendable, T: Sendable>(
        _ items: [Item], _ body: @escaping @Sendable (Item) -> T
    ) -> [T] {
        let count = items.count
        let results = Mutex<[Int: T]>([:])
        let up = DispatchGroup(), done = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for i in 0..<count {
            up.enter()
            done.enter()
            Thread {
                up.leave()
                gate.wait()
                let r = body(items[i])
                results.withLock { $0[i] = r }
                done.leave()
            }.start()
        }
        up.wait()
        for _ in 0..<count { gate.signal() }
        done.wait()
        return results.withLock { all in (0..<count).map { all[$0]! } }
    }

    /// When each room's milestones arrived on the event socket (Unix ms): stamped on the
    /// reading thread, so the waiting threads' wake-up is not counted.
    final class Arrivals: Sendable {
        enum Milestone: Hashable {
            case connected, succeeded, failed
        }

        private let times = Mutex<[String: [Milestone: Double]]>([:])

        @Sendable func record(_ event: SessionEvent, arrived: Double) {
            let milestone: Milestone? =
                switch (event.status, event.event, event.transfer?.state) {
                case (.connected?, _, _): .connected
                case (_, .onSessionTransfer, .succeeded?): .succeeded
                case (_, .onSessionTransfer, .failed?): .failed
                default: nil
                }
            guard let milestone else { return }
            times.withLock { all in
                if all[event.roomId]?[milestone] == nil { all[event.roomId, default: [:]][milestone] = arrived }
            }
        }

        func at(_ room: String, _ milestone: Milestone) -> Double? {
            times.withLock { $0[room]?[milestone] }
        }
    }
}

/// `irisgw carrier-sim` on a port from the OS, at `timeScale`; its per-call lines are drained
/// (to FILE with IRISGW_BENCH_SIM_LOG=FILE).
final class CarrierSimChild {
    let process = Process()
    private(set) var port = 0

    init(irisgw: String, timeScale: Double) throws {
        process.executableURL = URL(fileURLWithPath: irisgw)
        process.arguments = ["carrier-sim", "--listen", "127.0.0.1:0", "--time-scale", "\(timeScale)"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = BridgeBench.readyLines(process, out.fileHandleForReading, logEnvironment: "IRISGW_BENCH_SIM_LOG")
        let listening = text.split(separator: "\n").first { $0.hasPrefix("listening sip udp ") }
        guard text.contains("ready\n"), let p = listening?.split(separator: ":").last.flatMap({ Int($0) }) else {
            stop()
            throw TransferBench.Failure(
                description: "irisgw carrier-sim did not start: \(text.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        port = p
    }

    /// SIGINT (it ends its calls), SIGKILL when it still runs 5 s later.
    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
