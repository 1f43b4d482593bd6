import Foundation
import Glibc
import IOCore
import Synchronization
import WebClient

/// `BENCH flood`: INVITE floods at the highest rate SIPp reaches against a release
/// `irisgw serve` whose trunk (a SIPp UAS) may send from 127.0.0.1 only, while the bench
/// places legitimate outbound calls through the control API and watches the API, /healthz
/// and the process's memory.
///
/// - `trusted-unrouted`: one source inside `allowFrom` (127.0.0.1, a spoofed trunk address)
///   to a DID without a route (404).
/// - `trusted-routed`: the same to a routed DID (the trunk's inbound budget answers 503
///   beyond 10 calls per second; the calls it admits ring 3 s, then 480).
/// - `untrusted`: 39 sources outside every `allowFrom` (127.0.0.2 ... 127.0.0.40; every
///   127/8 address is loopback on Linux): no answer, banned after 50 requests in a second.
///
/// The trusted flooder ACKs the final responses it gets and never retransmits; the
/// untrusted one sends INVITEs only. Both run at nice 19 (`--flooder-idle`: as SCHED_IDLE):
/// on this 2-core machine the attacker shares the CPU with its target, and without it the
/// figures would measure the scheduler more than the gateway. At nice 19 the scheduler still
/// takes a CPU that runs SIPp for busy when it places a thread that wakes; a SCHED_IDLE
/// task's CPU counts as idle (docs/benchmarks.md, "`BENCH flood`", for what it changed).
/// The setup rate of legitimate calls during a flood is set against the mean of the same
/// measurement before the first flood and after the last, in the same gateway.
enum FloodBench {
    struct Flood {
        var name: String
        var did: String
        var sources: [String]
        var ack: Bool
        /// Seconds a flood call waits for a final response (dropped requests get none).
        var answerTimeout: Double
    }

    static let floods = [
        Flood(name: "trusted-unrouted", did: "+15550009999", sources: ["127.0.0.1"], ack: true, answerTimeout: 1),
        Flood(name: "trusted-routed", did: "+15550001000", sources: ["127.0.0.1"], ack: true, answerTimeout: 4),
        Flood(
            name: "untrusted", did: "+15550001000", sources: (2...40).map { "127.0.0.\($0)" }, ack: false,
            answerTimeout: 0)
    ]

    /// Legitimate calls measured in each window: this many sessions, by this many clients.
    static let legitSessions = 300, legitWorkers = 4
    /// Seconds each flood lasts; the legitimate calls start 0.5 s in.
    static let floodSeconds = 7.0

    static func profile(carrierPort: Int) -> String {
        BridgeBench.profile(
            carrierPort: carrierPort,
            inbound: """
                { allowFrom: ["127.0.0.1/32"], routes: [{ did: "+15550001000", routingId: "flood-in" }], ringTimeoutSec: 3,
                  maxConcurrentCalls: 100, callsPerSecond: 10 }
                """)
    }

    /// Runs every flood in one gateway; returns the lines to print.
    static func run(irisgw: String, flooderIdle: Bool = false) throws -> [String] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-flood-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        return try BridgeBench.withBridge(irisgw: irisgw, profile: profile(carrierPort:)) { gw, router in
            let client = try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
            var lines: [String] = []
            // Warm up (first sessions pay for lazy set-up), then the rate without a flood.
            _ = BridgeBench.setupRate(gw, router, sessions: 50, workers: legitWorkers)
            let quiet = TimeLog()
            /// The rate without a flood, with the same probes running as during one.
            func baseline() throws -> (rate: Double, failed: Int) {
                let probes = try Probes(gw: gw, client: client, rssBefore: GatewayProbe.rssKiB(gw.pid))
                defer { probes.stop() }
                return BridgeBench.setupRate(
                    gw, router, sessions: legitSessions, workers: legitWorkers, durations: quiet.add)
            }
            let before = try baseline()
            var results: [Result] = []
            for flood in floods {
                results.append(
                    try run(flood, gw: gw, router: router, client: client, scenarios: dir, flooderIdle: flooderIdle))
            }
            let after = try baseline()
            let times = quiet.values
            let baseline = (before.rate + after.rate) / 2
            lines.append(
                "BENCH flood-baseline legit_sessions_per_sec_before=\(f0(before.rate)) legit_sessions_per_sec_after=\(f0(after.rate)) "
                    + "failed=\(before.failed + after.failed) sessions=\(legitSessions) workers=\(legitWorkers)"
                    + " legit_p50_ms=\(f0(GatewayProbe.percentile(times, 0.5) * 1000)) legit_p99_ms=\(f0(GatewayProbe.percentile(times, 0.99) * 1000))"
                    + quiet.phaseLine)
            for r in results { lines.append(r.line(baseline: baseline)) }
            return lines
        }
    }

    struct Result {
        var flood: Flood
        var seconds: Double
        var offered: Int
        var datagrams: Int
        var kernelDrops: Int
        var rssBefore: Int, rssPeak: Int, rssAfter: Int
        var settled: Bool
        var settleSeconds: Double
        var peakTransactions: Int
        var heapTrims: Int
        var apiLatencies: [Double]
        var apiFailed: Int
        var healthOK: Int, healthTotal: Int
        var legit: (rate: Double, failed: Int)
        /// Seconds from create to the end of each legitimate session.
        var legitTimes: [Double]
        var legitPhases: String
        var legitInside: Bool
        var gatewayCPU: Double
        var machineBusy: Double
        var refused: [String: Int]

        func line(baseline: Double) -> String {
            // SIPp makes calls for `floodSeconds`; the rates are over that time.
            var s = "BENCH flood name=\(flood.name) sources=\(flood.sources.count) seconds=\(f0(floodSeconds))"
            s +=
                " offered_cps=\(f0(Double(offered) / floodSeconds)) received_per_sec=\(f0(Double(datagrams - kernelDrops) / floodSeconds))"
            s += " kernel_drops=\(kernelDrops)"
            s +=
                " rss_kib_before=\(rssBefore) rss_kib_peak=\(rssPeak) rss_kib_after=\(rssAfter) settled=\(settled ? "yes" : "no") settle_s=\(f1(settleSeconds))"
            s += " peak_transactions=\(peakTransactions) heap_trims=\(heapTrims)"
            s +=
                " api_p50_ms=\(f1(GatewayProbe.percentile(apiLatencies, 0.5) * 1000)) api_p99_ms=\(f1(GatewayProbe.percentile(apiLatencies, 0.99) * 1000))"
            s +=
                " api_requests=\(apiLatencies.count + apiFailed) api_failed=\(apiFailed) healthz_ok=\(healthOK)/\(healthTotal)"
            s +=
                " legit_sessions_per_sec=\(f0(legit.rate)) legit_failed=\(legit.failed) legit_ratio=\(String(format: "%.2f", baseline > 0 ? legit.rate / baseline : 0))"
            s += " target_ratio_min=0.9 legit_inside_flood=\(legitInside ? "yes" : "no")"
            s +=
                " legit_p50_ms=\(f0(GatewayProbe.percentile(legitTimes, 0.5) * 1000)) legit_p99_ms=\(f0(GatewayProbe.percentile(legitTimes, 0.99) * 1000))"
            s += legitPhases
            s += " gateway_cpu_pct=\(f0(gatewayCPU * 100)) machine_busy_pct=\(f0(machineBusy * 100))"
            for (k, v) in refused.sorted(by: { $0.key < $1.key }) where v > 0 { s += " refused_\(k)=\(v)" }
            return s
        }
    }

    static func run(
        _ flood: Flood, gw: BridgeBench.Gateway, router: BridgeBench.EventRouter, client: HTTPClient, scenarios: URL,
        flooderIdle: Bool
    ) throws -> Result {
        let pid = gw.pid
        let m0 = GatewayProbe.metrics(client) ?? [:]
        let refused0 = GatewayProbe.refusals(m0)
        let trims0 = Int(m0["irisgw_heap_trims_total"] ?? 0)
        let drops0 = GatewayProbe.udpDrops(port: gw.sipPort)
        let rssBefore = GatewayProbe.rssKiB(pid)
        let cpu0 = GatewayProbe.cpuSeconds(pid), machine0 = GatewayProbe.machineJiffies()
        let start = Date()

        let file = scenarios.appendingPathComponent(flood.name + ".xml")
        try scenario(ack: flood.ack).write(to: file, atomically: true, encoding: .utf8)
        let sipps = try flood.sources.map { source in
            try startFlooder(
                source: source, gatewayPort: gw.sipPort, did: flood.did, scenario: file,
                perSourceRate: flood.sources.count == 1 ? 30_000 : 1000, answerTimeout: flood.answerTimeout,
                idle: flooderIdle)
        }

        // Samplers while the flood runs: memory (peak), transactions, the API, /healthz.
        let probes = try Probes(gw: gw, client: client, rssBefore: rssBefore)

        // Legitimate calls once the flood is at full rate.
        Thread.sleep(forTimeInterval: 0.5)
        let legitTimes = TimeLog()
        let legit = BridgeBench.setupRate(
            gw, router, sessions: legitSessions, workers: legitWorkers, durations: legitTimes.add)
        let legitInside = Date().timeIntervalSince(start) < floodSeconds
        // The samplers cover the flood (and the legitimate calls, if they took longer).
        let left = floodSeconds - Date().timeIntervalSince(start)
        if left > 0 { Thread.sleep(forTimeInterval: left) }
        probes.stop()
        let seconds = Date().timeIntervalSince(start)
        let cpu = GatewayProbe.cpuSeconds(pid) - cpu0
        let machine1 = GatewayProbe.machineJiffies()
        let busy = (machine1.busy - machine0.busy) / max(1, machine1.total - machine0.total)

        var offered = 0, datagrams = 0
        for s in sipps {
            let (invites, sent) = s.finish()
            offered += invites
            datagrams += sent
        }
        let kernelDrops = GatewayProbe.udpDrops(port: gw.sipPort) - drops0

        // After: every transaction of the flood has ended and (for a large peak) the heap was
        // trimmed, and no flood session is left.
        let peakTransactions = probes.txPeak.load(ordering: .relaxed)
        let floodEnd = Date()
        var trims = 0
        let settled = GatewayProbe.waitFor(timeout: 45) {
            guard let m = GatewayProbe.metrics(client) else { return false }
            let live = Int(m["irisgw_sip_transactions_active"] ?? 1e9)
            let sessions = Int(GatewayProbe.sum(m, "irisgw_sessions_active"))
            trims = Int(m["irisgw_heap_trims_total"] ?? 0) - trims0
            return live <= 16 && sessions == 0 && (peakTransactions < 512 || trims > 0)
        }
        let settleSeconds = Date().timeIntervalSince(floodEnd)
        Thread.sleep(forTimeInterval: 0.5)
        let rssAfter = GatewayProbe.rssKiB(pid)
        let refused1 = GatewayProbe.refusals(GatewayProbe.metrics(client) ?? [:])
        var refused: [String: Int] = [:]
        for (k, v) in refused1 { refused[k] = v - (refused0[k] ?? 0) }
        return Result(
            flood: flood, seconds: seconds, offered: offered, datagrams: datagrams, kernelDrops: kernelDrops,
            rssBefore: rssBefore, rssPeak: probes.rssPeak.load(ordering: .relaxed), rssAfter: rssAfter,
            settled: settled, settleSeconds: settleSeconds, peakTransactions: peakTransactions, heapTrims: trims,
            apiLatencies: probes.latencies.withLock { $0 }, apiFailed: probes.apiFailed.load(ordering: .relaxed),
            healthOK: probes.health.load(ordering: .relaxed), healthTotal: probes.healthTotal.load(ordering: .relaxed),
            legit: legit, legitTimes: legitTimes.values, legitPhases: legitTimes.phaseLine, legitInside: legitInside,
            gatewayCPU: cpu / seconds, machineBusy: busy, refused: refused)
    }

    /// What the bench watches while legitimate calls are measured: the gateway's memory (peak),
    /// its open transactions, `GET /v1/sessions` every 20 ms and /healthz every 100 ms. They run
    /// in the baseline too, so the legitimate rate during a flood is set against the same
    /// probing without one (they cost the API loop and the CPU something of their own).
    final class Probes: Sendable {
        let done = Atomic<Bool>(false)
        let rssPeak: Atomic<Int>, txPeak = Atomic<Int>(0)
        let latencies = Mutex<[Double]>([]), apiFailed = Atomic<Int>(0)
        let health = Atomic<Int>(0), healthTotal = Atomic<Int>(0)
        private let samplers = DispatchGroup()

        init(gw: BridgeBench.Gateway, client: HTTPClient, rssBefore: Int) throws {
            rssPeak = Atomic<Int>(rssBefore)
            let pid = gw.pid
            let anonymous = try HTTPClient(baseURL: gw.api)
            sampler(every: 0.05) { [self] in
                let rss = GatewayProbe.rssKiB(pid)
                if rss > rssPeak.load(ordering: .relaxed) { rssPeak.store(rss, ordering: .relaxed) }
            }
            sampler(every: 0.25) { [self] in
                if let tx = GatewayProbe.metrics(client)?["irisgw_sip_transactions_active"],
                    Int(tx) > txPeak.load(ordering: .relaxed)
                {
                    txPeak.store(Int(tx), ordering: .relaxed)
                }
            }
            sampler(every: 0.02) { [self] in
                let t0 = EventLoop.now()
                if let r = try? client.request(method: "GET", path: "/v1/sessions", timeout: 5), r.status == 200 {
                    let dt = EventLoop.now() - t0
                    latencies.withLock { $0.append(dt) }
                } else {
                    apiFailed.add(1, ordering: .relaxed)
                }
            }
            sampler(every: 0.1) { [self] in
                healthTotal.add(1, ordering: .relaxed)
                if (try? anonymous.request(method: "GET", path: "/healthz", timeout: 2))?.status == 200 {
                    health.add(1, ordering: .relaxed)
                }
            }
        }

        private func sampler(every interval: Double, _ body: @escaping @Sendable () -> Void) {
            DispatchQueue.global().async(group: samplers) { [self] in
                while !done.load(ordering: .relaxed) {
                    body()
                    usleep(UInt32(interval * 1e6))
                }
            }
        }

        /// Stops the samplers and waits for them.
        func stop() {
            done.store(true, ordering: .relaxed)
            samplers.wait()
        }
    }

    /// One SIPp flooding from `source` for `floodSeconds`.
    final class Flooder: Sendable {
        let process: Process
        /// What SIPp printed: written by the reader thread, read once `reader` is done.
        private let output = Mutex(Data())
        private let reader = DispatchGroup()
        init(_ process: Process, _ pipe: Pipe) {
            self.process = process
            reader.enter()
            Thread { [self] in
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                output.withLock { $0 = data }
                reader.leave()
            }.start()
        }

        /// Waits for SIPp to end; the INVITEs it sent and every datagram it sent.
        func finish() -> (invites: Int, datagrams: Int) {
            process.waitUntilExit()
            reader.wait()
            // The scenario screen: "      INVITE ---------->         59849     0".
            var invites = 0, datagrams = 0
            let text = output.withLock { String(decoding: $0, as: UTF8.self) }
            let screen = text.components(separatedBy: "------------------------------ Scenario Screen").last ?? text
            for line in screen.split(separator: "\n") where line.contains("---------->") {
                let fields = line.split(separator: " ")
                guard let arrow = fields.firstIndex(where: { $0.hasPrefix("---") }), arrow + 1 < fields.count,
                    let n = Int(fields[arrow + 1])
                else { continue }
                datagrams += n
                if fields.first == "INVITE" { invites += n }
            }
            return (invites, datagrams)
        }
    }

    static func startFlooder(
        source: String, gatewayPort: Int, did: String, scenario: URL, perSourceRate: Int, answerTimeout: Double,
        idle: Bool
    ) throws -> Flooder {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: idle ? "/usr/bin/chrt" : "/usr/bin/nice")
        let port = CallRateBench.freeUDPPort() ?? 46_000
        let media = CallRateBench.freeUDPPort() ?? 46_002
        p.arguments =
            (idle ? ["--idle", "0"] : ["-n", "19"]) + [
                "/usr/bin/sipp", "127.0.0.1:\(gatewayPort)", "-sf", scenario.path,
                "-s", did, "-i", source, "-p", String(port), "-mp", String(media),
                "-r", String(perSourceRate), "-rp", "1000", "-l", "200000", "-m", "100000000", "-nr",
                "-nostdin", "-timeout", "\(Int(floodSeconds))s", "-default_behaviors", "none"
            ]
        // SIPp's -timeout stops new calls, then waits for the calls in progress: a request the
        // gateway dropped is given up after this long.
        if answerTimeout > 0 { p.arguments! += ["-recv_timeout", String(Int(answerTimeout * 1000))] }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return Flooder(p, out)
    }

    /// The flooder's scenario: an INVITE with an SDP offer; with `ack`, the final response
    /// (whatever it is) gets its ACK; a request the gateway dropped is given up after
    /// `-recv_timeout`.
    static func scenario(ack: Bool) -> String {
        let invite = """
              <send>
                <![CDATA[
                  INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                  Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                  From: <sip:+15557654321@[local_ip]:[local_port]>;tag=[pid]F[call_number]
                  To: <sip:[service]@[remote_ip]:[remote_port]>
                  Call-ID: [call_id]
                  CSeq: 1 INVITE
                  Contact: <sip:flood@[local_ip]:[local_port]>
                  Max-Forwards: 70
                  User-Agent: irisgw-bench-flood
                  Content-Type: application/sdp
                  Content-Length: [len]

                  v=0
                  o=- 1 1 IN IP[local_ip_type] [local_ip]
                  s=-
                  c=IN IP[media_ip_type] [media_ip]
                  t=0 0
                  m=audio [media_port] RTP/AVP 0
                  a=rtpmap:0 PCMU/8000

                ]]>
              </send>
            """
        guard ack else {
            return
                "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<scenario name=\"flood\">\n\(invite)\n</scenario>\n"
        }
        let finals = [403, 404, 480, 486, 488, 500]
        var recvs = """
              <recv response="100" optional="true"/>
              <recv response="180" optional="true"/>
              <recv response="183" optional="true"/>

            """
        for code in finals { recvs += "  <recv response=\"\(code)\" optional=\"true\" next=\"ack\"/>\n" }
        recvs += "  <recv response=\"503\" next=\"ack\"/>\n"
        return """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="flood">
            \(invite)
            \(recvs)
              <label id="ack"/>
              <send>
                <![CDATA[
                  ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                  [last_Via:]
                  [last_From:]
                  [last_To:]
                  [last_Call-ID:]
                  CSeq: 1 ACK
                  Max-Forwards: 70
                  Content-Length: 0

                ]]>
              </send>
              <label id="end"/>
            </scenario>

            """
    }
}

/// Durations collected from several threads.
final class TimeLog: Sendable {
    private let log = Mutex<[BridgeBench.SessionPhases]>([])
    @Sendable func add(_ phases: BridgeBench.SessionPhases) { log.withLock { $0.append(phases) } }
    var values: [Double] { log.withLock { $0.map(\.total) } }
    var phases: [BridgeBench.SessionPhases] { log.withLock { $0 } }

    /// `legit_create_p99_ms=.. legit_connect_p99_ms=.. legit_end_p99_ms=..`: which step the slow sessions were slow in.
    var phaseLine: String {
        let p = phases
        return " legit_create_p99_ms=\(f0(GatewayProbe.percentile(p.map(\.create), 0.99) * 1000))"
            + " legit_connect_p99_ms=\(f0(GatewayProbe.percentile(p.map(\.connect), 0.99) * 1000))"
            + " legit_end_p99_ms=\(f0(GatewayProbe.percentile(p.map(\.end), 0.99) * 1000))"
    }
}

func f0(_ v: Double) -> String { String(format: "%.0f", v) }
func f1(_ v: Double) -> String { String(format: "%.1f", v) }
