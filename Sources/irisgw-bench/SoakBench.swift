import Foundation
import Glibc
import IOCore
import IrisAPI
import Media
import Synchronization
import WebClient

/// `BENCH soak` (`irisgw-bench soak [--minutes N] [--calls N] [--trace FILE]`, not in the
/// default run): `calls` concurrent outbound calls through a release `irisgw serve` to a
/// SIPp UAS that echoes RTP, for N minutes. Each call lasts 3-60 s (uniform) and is
/// replaced when it ends; the bench sends Opus at 20 ms into every platform leg and counts
/// what comes back (PCMU to SIPp, echoed, transcoded again).
///
/// Every second it reads `/metrics` (late frames, sessions, transactions) and the process's
/// RSS, descriptors and threads, and the media threads' CPU and run-queue wait
/// (/proc/PID/task/TID/schedstat): a late-frame step with a run-queue wait jump at the same
/// second is the scheduler (another process had the CPU); one with a jump in the thread's
/// own CPU time is work on the media thread. `--trace FILE` writes those rows as CSV.
enum SoakBench {
    struct Sample: Sendable {
        var t: Double
        var rss: Int, fds: Int, threads: Int
        var sessions: Int, transactions: Int
        var late: Int
        /// 20 ms ticks the bench's own RTP sender missed so far: the same lateness outside the
        /// gateway, at normal priority, a measure of how contended the machine was.
        var benchLateTicks: Int
        /// Per media thread (by name): CPU and run-queue wait seconds, cumulative.
        var media: [MediaThreadTimes]
        /// The machine's busy and total jiffies, cumulative.
        var jiffies: (busy: Double, total: Double)
        var load: Double
    }

    static func run(
        irisgw: String, minutes: Double, calls: Int, trace: String?, realtimePriority: Int? = nil
    ) throws -> [String] {
        var lines: [String] = []
        var recordLine = ""
        let runSeconds = minutes * 60
        let carrierTimeout = Int(runSeconds) + 600
        let body: (BridgeBench.Gateway, BridgeBench.EventRouter) throws -> [String] = { gw, router in
            try soak(gw, router, seconds: runSeconds, calls: calls, trace: trace, realtimePriority: realtimePriority)
        }
        let config = serveConfig(calls: calls, realtimePriority: realtimePriority)
        lines = try BridgeBench.withBridge(
            irisgw: irisgw, config: config, carrierTimeout: carrierTimeout,
            beforeRemoval: { data in
                recordLine = records(at: data.appendingPathComponent("calls.sqlite").path)
            }, body)
        // The record counts go on the summary line.
        if let i = lines.firstIndex(where: { $0.hasPrefix("BENCH soak ") }) { lines[i] += recordLine }
        return lines
    }

    /// The gateway's `--config`. The bench is one backend running `calls` sessions from one
    /// address: at the end every worker closes at once, so, as docs/operations.md asks of such
    /// a backend, the API's per-source cap is above that (the default 64 reset the rest at
    /// accept, and those calls were never closed).
    static func serveConfig(calls: Int, realtimePriority: Int?) -> String {
        var text = "{ apiLimits: { maxConnectionsPerSource: \(calls + 64), maxConnections: \(max(1024, calls + 128)) }"
        if let realtimePriority { text += ", mediaRealtimePriority: \(realtimePriority)" }
        return text + " }"
    }

    /// ` records=N records_ended=N records_by_reason=...` from the call records file.
    static func records(at path: String) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [
            path,
            "select count(*), count(ended_at) from call_records; select end_reason, count(*) from call_records group by 1;"
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return " records=unreadable" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let rows = text.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false) }
        guard let first = rows.first, first.count == 2 else { return " records=unreadable" }
        let reasons = rows.dropFirst().map { "\($0.first ?? ""):\($0.last ?? "")" }.joined(separator: ",")
        return " records=\(first[0]) records_ended=\(first[1]) records_by_reason=\(reasons)"
    }

    struct MediaThreadTimes: Sendable {
        var name: String
        var cpu: Double
        var wait: Double
    }

    /// A call's RTP target: the gateway's platform leg.
    struct Target {
        var address: RawSocketAddress
        var ssrc: UInt32
        var sequence: UInt16
        var timestamp: UInt32
    }

    static func soak(
        _ gw: BridgeBench.Gateway, _ router: BridgeBench.EventRouter, seconds: Double, calls: Int, trace: String?,
        realtimePriority: Int?
    ) throws -> [String] {
        let client = try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
        let pid = gw.pid
        var lines: [String] = []
        func emit(_ line: String) {
            print(line)
            fflush(nil)
        }

        // RTP: one socket for every platform leg (each latches it), a 20 ms tick.
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 16 << 20)
        let targets = Mutex<[Int: Target]>([:])
        let sent = Atomic<Int>(0), received = Atomic<Int>(0), senderLate = Atomic<Int>(0)
        let stopMedia = Atomic<Bool>(false)
        let (_, opusFrames) = try MediaBench.payloads()
        let mediaDone = DispatchSemaphore(value: 0)
        let rtp = Thread {
            defer { mediaDone.signal() }
            guard let timer = try? PeriodicTimer(interval: 0.020) else { return }
            var packet = [UInt8](repeating: 0, count: 1500)
            let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { rx.deallocate() }
            var from = RawSocketAddress()
            var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
            var tick = 0
            var batch: [Target] = []
            while !stopMedia.load(ordering: .relaxed) {
                while poll(&pfd, 1, 100) == 0 {}
                let expirations = timer.read()
                if expirations > 1 { senderLate.add(Int(expirations) - 1, ordering: .relaxed) }
                tick += 1
                batch.removeAll(keepingCapacity: true)
                targets.withLock { all in
                    for key in all.keys {
                        all[key]!.sequence &+= 1
                        all[key]!.timestamp &+= 960
                        batch.append(all[key]!)
                    }
                }
                let payload = opusFrames[tick % opusFrames.count]
                for t in batch {
                    packet.withUnsafeMutableBytes {
                        _ = try? RTPHeader(
                            payloadType: 111, sequenceNumber: t.sequence, timestamp: t.timestamp, ssrc: t.ssrc
                        ).write(into: $0)
                    }
                    for (j, b) in payload.enumerated() { packet[12 + j] = b }
                    packet.withUnsafeBytes {
                        if socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<(12 + payload.count)]), to: t.address) {
                            sent.add(1, ordering: .relaxed)
                        }
                    }
                }
                var n = 0
                while socket.receive(into: rx, from: &from) != nil { n += 1 }
                received.add(n, ordering: .relaxed)
            }
        }
        rtp.name = "soak-rtp"
        rtp.start()

        // Sampling every second.
        let samples = Mutex<[Sample]>([])
        let stopSampling = Atomic<Bool>(false)
        let samplingDone = DispatchSemaphore(value: 0)
        let t0 = EventLoop.now()
        @Sendable func sample() -> Sample {
            let m = GatewayProbe.metrics(client) ?? [:]
            let machine = GatewayProbe.machineJiffies()
            let media = GatewayProbe.threadTimes(pid).filter { $0.name.hasPrefix("irisgw-media") }.sorted {
                $0.name < $1.name
            }
            return Sample(
                t: EventLoop.now() - t0, rss: GatewayProbe.rssKiB(pid), fds: GatewayProbe.fds(pid),
                threads: GatewayProbe.threads(pid),
                sessions: Int(GatewayProbe.sum(m, "irisgw_sessions_active")),
                transactions: Int(m["irisgw_sip_transactions_active"] ?? 0),
                late: Int(m["irisgw_media_late_frames_total"] ?? 0),
                benchLateTicks: senderLate.load(ordering: .relaxed),
                media: media.map { MediaThreadTimes(name: $0.name, cpu: $0.cpu, wait: $0.runQueueWait) },
                jiffies: machine, load: GatewayProbe.loadAverage())
        }
        let idle = sample()
        samples.withLock { $0.append(idle) }
        let sampler = Thread {
            defer { samplingDone.signal() }
            var next = EventLoop.now() + 1
            while !stopSampling.load(ordering: .relaxed) {
                let wait = next - EventLoop.now()
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
                next += 1
                let s = sample()
                samples.withLock { $0.append(s) }
            }
        }
        sampler.start()

        // The calls: one worker per slot, each call replaced when it ends.
        let stop = Atomic<Bool>(false)
        let wake = NSCondition()
        let started = Atomic<Int>(0), ended = Atomic<Int>(0), failed = Atomic<Int>(0)
        // Of `failed`: calls not Connected within 10 s, and closes not followed by the end.
        let connectFailed = Atomic<Int>(0), closeFailed = Atomic<Int>(0), closeRetries = Atomic<Int>(0)
        let workers = DispatchGroup()
        let sdpPort = socket.local.port
        for slot in 0..<calls {
            workers.enter()
            let t = Thread {
                defer { workers.leave() }
                var rng = SystemRandomNumberGenerator()
                // Ramp: 20 new calls a second to the full count.
                usleep(UInt32(slot) * 50_000)
                guard
                    let worker = try? HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
                else { return }
                var callIndex = 0
                while !stop.load(ordering: .relaxed) {
                    callIndex += 1
                    guard let s = BridgeBench.create(worker, mediaPort: sdpPort) else {
                        failed.add(1, ordering: .relaxed)
                        usleep(500_000)
                        continue
                    }
                    started.add(1, ordering: .relaxed)
                    defer { router.forget(s.roomId) }
                    let connected = router.wait(s.roomId, timeout: 10, { $0.status == .connected })
                    if connected, let sdp = s.media?.sdp,
                        let port = sdp.split(separator: "\r\n").first(where: { $0.hasPrefix("m=audio ") })?.split(
                            separator: " ")[1],
                        let p = Int(port), let raw = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: p))
                    {
                        let ssrc = UInt32(slot + 1) << 16 | UInt32(callIndex & 0xFFFF)
                        targets.withLock {
                            $0[slot] = Target(
                                address: raw, ssrc: ssrc, sequence: UInt16.random(in: 0...UInt16.max, using: &rng),
                                timestamp: 0)
                        }
                        let duration = Double.random(in: 3...60, using: &rng)
                        let until = Date().addingTimeInterval(duration)
                        wake.lock()
                        while !stop.load(ordering: .relaxed), wake.wait(until: until) {}
                        wake.unlock()
                        targets.withLock { $0[slot] = nil }
                    } else {
                        failed.add(1, ordering: .relaxed)
                        connectFailed.add(1, ordering: .relaxed)
                    }
                    let closed = BridgeBench.close(worker, roomId: s.roomId) { _ in
                        closeRetries.add(1, ordering: .relaxed)
                    }
                    if closed.closed, router.wait(s.roomId, timeout: 15, { $0.event == .onSessionEnded }) {
                        ended.add(1, ordering: .relaxed)
                    } else {
                        failed.add(1, ordering: .relaxed)
                        closeFailed.add(1, ordering: .relaxed)
                    }
                }
            }
            t.stackSize = 256 << 10
            t.start()
        }

        // Every 30 s a sample line; the run ends after `seconds`.
        let end = t0 + seconds
        var nextLine = t0 + 30
        var full: Sample?
        while EventLoop.now() < end {
            usleep(200_000)
            if full == nil, EventLoop.now() - t0 >= Double(calls) * 0.05 + 12 {
                full = samples.withLock { $0.last }
            }
            if EventLoop.now() >= nextLine, let s = samples.withLock({ $0.last }) {
                nextLine += 30
                let line =
                    "BENCH soak-sample t=\(f0(s.t)) rss_kib=\(s.rss) fds=\(s.fds) threads=\(s.threads) sessions=\(s.sessions) "
                    + "transactions=\(s.transactions) late_frames=\(s.late) started=\(started.load(ordering: .relaxed)) packets_received=\(received.load(ordering: .relaxed))"
                emit(line)
                lines.append(line)
            }
        }
        let loaded = samples.withLock { $0.last! }
        stop.store(true, ordering: .relaxed)
        wake.lock()
        wake.broadcast()
        wake.unlock()
        workers.wait()
        // Idle again: ports out of quarantine (10 s), transactions over (Timer K/J).
        _ = GatewayProbe.waitFor(timeout: 60) {
            guard let m = GatewayProbe.metrics(client) else { return false }
            return GatewayProbe.sum(m, "irisgw_sessions_active") == 0 && (m["irisgw_sip_transactions_active"] ?? 1) == 0
        }
        Thread.sleep(forTimeInterval: 12)
        stopSampling.store(true, ordering: .relaxed)
        samplingDone.wait()
        stopMedia.store(true, ordering: .relaxed)
        mediaDone.wait()
        let idleEnd = sample()
        let m = GatewayProbe.metrics(client) ?? [:]
        let startedMetric = Int(m["irisgw_sessions_started_total"] ?? 0)
        let endedMetric = Int(GatewayProbe.sum(m, "irisgw_sessions_ended_total"))
        let activeEnd = Int(GatewayProbe.sum(m, "irisgw_sessions_active"))
        let apiRefused = Int(GatewayProbe.sum(m, "irisgw_http_refused_total"))

        // Late frames: the counter's steps, second by second.
        let all = samples.withLock { $0 }
        var steps: [(t: Double, frames: Int, cpu: Double, wait: Double)] = []
        var alongside = 0
        for (a, b) in zip(all, all.dropFirst()) where b.late > a.late {
            if b.benchLateTicks > a.benchLateTicks { alongside += 1 }
            // The media thread that moved most in the same second.
            let deltas = zip(a.media, b.media).map { (cpu: $1.cpu - $0.cpu, wait: $1.wait - $0.wait) }
            steps.append((b.t, b.late - a.late, deltas.map(\.cpu).max() ?? 0, deltas.map(\.wait).max() ?? 0))
        }
        let medianWait: Double = {
            let waits = zip(all, all.dropFirst()).flatMap { a, b in zip(a.media, b.media).map { $1.wait - $0.wait } }
            return GatewayProbe.percentile(waits, 0.5)
        }()
        let machine = busyShare(from: idle, to: loaded)
        // Bursts on a quiet machine are few; an overloaded one steps every second: the 20
        // largest then, in time order.
        let shown = steps.count <= 20 ? steps : steps.sorted { $0.frames > $1.frames }.prefix(20).sorted { $0.t < $1.t }
        let timeline =
            (steps.count > 20 ? "largest20:" : "")
            + shown.map { "t+\(f0($0.t))s:+\($0.frames)(cpu_ms=\(f0($0.cpu * 1000)),rq_wait_ms=\(f0($0.wait * 1000)))" }
            .joined(separator: ",")
        let fullSample = full ?? loaded
        var summary = "BENCH soak minutes=\(String(format: "%g", seconds / 60)) calls=\(calls)"
        summary +=
            " rss_kib_idle_start=\(idle.rss) rss_kib_full_start=\(fullSample.rss) rss_kib_full_end=\(loaded.rss) rss_kib_idle_end=\(idleEnd.rss)"
        summary +=
            " fds_idle_start=\(idle.fds) fds_full_start=\(fullSample.fds) fds_full_end=\(loaded.fds) fds_idle_end=\(idleEnd.fds)"
        summary +=
            " threads_idle_start=\(idle.threads) threads_full_end=\(loaded.threads) threads_idle_end=\(idleEnd.threads)"
        summary +=
            " sessions_created=\(started.load(ordering: .relaxed)) sessions_closed=\(ended.load(ordering: .relaxed)) call_failures=\(failed.load(ordering: .relaxed))"
        summary +=
            " connect_failures=\(connectFailed.load(ordering: .relaxed)) close_failures=\(closeFailed.load(ordering: .relaxed))"
        summary += " close_retries=\(closeRetries.load(ordering: .relaxed)) api_refused=\(apiRefused)"
        summary += " metrics_started=\(startedMetric) metrics_ended=\(endedMetric) sessions_active_end=\(activeEnd)"
        summary +=
            " packets_sent=\(sent.load(ordering: .relaxed)) packets_received=\(received.load(ordering: .relaxed))"
        summary += " late_frames=\(idleEnd.late) late_steps=\(steps.count) late_steps_with_bench_late=\(alongside)"
        summary +=
            " bench_sender_late_ticks=\(idleEnd.benchLateTicks) media_rq_wait_ms_median_per_s=\(f1(medianWait * 1000))"
        summary += " realtime=\(realtimePriority.map { "rr\($0)" } ?? "off")"
        summary +=
            " machine_busy_pct=\(f0(machine * 100)) load1_start=\(String(format: "%.2f", idle.load)) load1_end=\(String(format: "%.2f", loaded.load))"
        summary += " late_timeline=\(timeline.isEmpty ? "none" : timeline)"
        lines.append(summary)

        if let trace {
            // `monotonic`: CLOCK_MONOTONIC seconds, to line rows up with `perf record -k CLOCK_MONOTONIC`.
            var csv =
                "t,monotonic,rss_kib,fds,threads,sessions,transactions,late_frames,bench_late_ticks,machine_busy_pct,load1"
            for t in all.first?.media ?? [] { csv += ",\(t.name)_cpu_ms,\(t.name)_rq_wait_ms" }
            csv += "\n"
            for (a, b) in zip(all, all.dropFirst()) {
                let busy = busyShare(from: a, to: b)
                csv +=
                    "\(f1(b.t)),\(String(format: "%.3f", b.t + t0)),\(b.rss),\(b.fds),\(b.threads),\(b.sessions),\(b.transactions),\(b.late),\(b.benchLateTicks),\(f0(busy * 100)),\(b.load)"
                for (x, y) in zip(a.media, b.media) {
                    csv += ",\(f1((y.cpu - x.cpu) * 1000)),\(f1((y.wait - x.wait) * 1000))"
                }
                csv += "\n"
            }
            try? csv.write(toFile: trace, atomically: true, encoding: .utf8)
        }
        return lines
    }

    /// Busy share of the whole machine (every core) between two samples.
    static func busyShare(from a: Sample, to b: Sample) -> Double {
        (b.jiffies.busy - a.jiffies.busy) / max(1, b.jiffies.total - a.jiffies.total)
    }
}
