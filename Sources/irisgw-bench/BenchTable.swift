import Foundation
import Glibc
import Media
import SIP

/// Every bench `irisgw-bench` knows, in the order a run takes them (docs/benchmarks.md,
/// "How a run goes"): whether a bare run (`make bench`) has it, its deadline, its key figure.
/// The default set finishes in under 10 minutes on the 2-core VM; `all` runs every one.
enum BenchTable {
    /// The release `irisgw` next to this binary (`make bench` builds both).
    static var irisgw: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("irisgw").path
    }
    static let sipp = "/usr/bin/sipp"

    static func fmt(_ v: Double) -> String { String(format: "%.0f", v) }
    static func f2(_ v: Double) -> String { String(format: "%.2f", v) }
    static func mediaLine(_ name: String, _ s: MediaBench.Step, floor: Double) -> String {
        "BENCH \(name) calls=\(s.calls) channels_per_core=\(fmt(s.channelsPerCore)) floor_channels_per_core=\(fmt(floor)) ratio=\(f2(s.channelsPerCore / floor)) p50_us=\(s.p50) p99_us=\(s.p99) late_frames=\(s.late) rss_kib_per_call=\(fmt(s.rssKiBPerCall))"
    }

    static let entries: [BenchEntry] = [
        BenchEntry(name: "sip-parse", inDefaultSet: true, deadline: 120, keyFigure: "ratio") { _ in
            let r = ParseBench.run()
            // ratio: how many times longer our path takes than osip's for the same work.
            print(
                "BENCH sip-parse ours_parse_msgs_per_sec=\(fmt(r.oursParsePerSecond)) osip_parse_msgs_per_sec=\(fmt(r.osipParsePerSecond)) ratio=\(f2(r.osipParsePerSecond / r.oursParsePerSecond)) target_ratio_max=1.5"
            )
            print(
                "BENCH sip-parse-serialize ours_msgs_per_sec=\(fmt(r.oursParseSerializePerSecond)) osip_msgs_per_sec=\(fmt(r.osipParseSerializePerSecond)) ratio=\(f2(r.osipParseSerializePerSecond / r.oursParseSerializePerSecond)) ours_vs_osip_bare_parse_ratio=\(f2(r.osipParsePerSecond / r.oursParseSerializePerSecond))"
            )
        },
        BenchEntry(name: "sip-calls", inDefaultSet: true, deadline: 180, keyFigure: "max_cps", requires: [sipp]) { _ in
            let steps = CallRateBench.run(irisgw: irisgw)
            for s in steps {
                print(
                    "BENCH sip-calls-step rate=\(s.rate) calls=\(s.calls) failed=\(s.failed) achieved_cps=\(fmt(s.achieved))"
                )
            }
            let good = steps.filter { Double($0.failed) <= Double($0.calls) * 0.001 }
            print(
                "BENCH sip-calls max_cps=\(fmt(good.map(\.achieved).max() ?? 0)) target_cps_min=200 failure_budget=0.1% steps=\(steps.count)"
            )
        },
        BenchEntry(
            name: "media", inDefaultSet: true, deadline: 120, keyFigure: "ratio",
            // docs/design.md, "Quality targets".
            aims: ["media": "target_ratio_min=0.85 target_rss_kib_per_call_max=256"]
        ) { _ in
            // Floor and engine measured in CPU time of the working thread, in the same run; the
            // floor keeps one codec set per call like the engine, and is taken before and after
            // the engine run so drifting machine load hits both alike.
            let before = try MediaFloorBench.channelsPerCore(calls: 100)
            let step = try MediaBench.runStep(calls: 100, passthrough: false, seconds: 4)
            let floor = (before + (try MediaFloorBench.channelsPerCore(calls: 100))) / 2
            print(mediaLine("media", step, floor: floor))
            // What loopback UDP alone costs per call, so the engine's own overhead can be told
            // apart from the kernel's (docs/benchmarks.md, "`BENCH media`").
            let udp = try UDPFloorBench.microsecondsPerCallFrame()
            let codecUs = 1e6 / 50 / floor, engineUs = 1e6 / 50 / step.channelsPerCore
            let withUDP = 1e6 / 50 / (codecUs + udp)
            print(
                "BENCH media-udp-floor codec_us_per_call_frame=\(String(format: "%.1f", codecUs)) udp_us_per_call_frame=\(String(format: "%.1f", udp)) engine_us_per_call_frame=\(String(format: "%.1f", engineUs)) codec_plus_udp_channels_per_core=\(fmt(withUDP)) ratio_vs_codec_plus_udp=\(f2(step.channelsPerCore / withUDP)) best_possible_ratio=\(f2(withUDP / floor))"
            )
            // The latency target (docs/design.md, "Quality targets") is at 200 calls: both cores' worth of media threads.
            let loaded = try MediaBench.runStep(calls: 200, passthrough: false, seconds: 4, threads: 2)
            print(
                "BENCH media-200 calls=200 threads=2 p50_us=\(loaded.p50) p99_us=\(loaded.p99) late_frames=\(loaded.late) target_p99_us_max=1000"
            )
        },
        BenchEntry(name: "passthrough", inDefaultSet: true, deadline: 90, keyFigure: "channels_per_core") { _ in
            let floor = try MediaFloorBench.channelsPerCore(calls: 100)
            print(
                mediaLine(
                    "passthrough", try MediaBench.runStep(calls: 200, passthrough: true, seconds: 4), floor: floor))
        },
        BenchEntry(name: "source-policy", inDefaultSet: true, deadline: 150, keyFigure: "ratio") { _ in
            // The per-packet source check (docs/media.md, "Who may send media"): BENCH media's and
            // BENCH passthrough's calls with it on, as a ratio to the same calls with it off,
            // alternated in this run.
            for (name, passthrough, calls) in [("media", false, 100), ("passthrough", true, 200)] {
                let r = try MediaBench.sourcePolicyComparison(
                    calls: calls, passthrough: passthrough, rounds: 2, seconds: 4)
                print(
                    "BENCH source-policy-\(name) calls=\(calls) on_channels_per_core=\(fmt(r.on)) off_channels_per_core=\(fmt(r.off)) ratio=\(String(format: "%.3f", r.on / r.off)) target_ratio_min=0.98 late_frames=\(r.last.late) trunk_packets=\(r.last.trunkReceived)"
                )
            }
        },
        BenchEntry(name: "srtp", inDefaultSet: true, deadline: 180, keyFigure: "ratio") { _ in
            // SRTP on every trunk leg against plain RTP, the same transcoded calls and generator,
            // alternated in this run: what SRTP costs the media thread (docs/benchmarks.md, "`BENCH srtp`").
            for suite in [SRTPSuite.aesCM128HmacSHA1_80, .aeadAES128GCM] { print(try SRTPBench.line(suite: suite)) }
        },
        BenchEntry(name: "passthrough-opus", inDefaultSet: true, deadline: 90, keyFigure: "ratio") { _ in
            // Opus relayed between two Opus legs against G.711 relayed, alternated in this run.
            print(try OpusPassthroughBench.run().line)
        },
        BenchEntry(name: "webrtc", inDefaultSet: true, deadline: 120, keyFigure: "ratio") { _ in
            // WebRTC platform legs (ICE-lite, DTLS-SRTP) against plain ones, the same calls and
            // generator, alternated in this run; and the setup time (docs/benchmarks.md, "`BENCH webrtc`").
            print(try WebRTCBench.run(calls: 100, rounds: 2, seconds: 4))
        },
        BenchEntry(
            name: "vs-rtpengine", inDefaultSet: true, deadline: 420, keyFigure: "transcode_knee_ratio",
            requires: [RTPEngineServer.binary, "/usr/bin/taskset"]
        ) { args in
            // irisgw's media engine against Debian's rtpengine, each its own process on CPU 0, one
            // load generator process on CPU 1: transcode and relay knees, added delay, the
            // complexity-10 and fullband lines (docs/benchmarks.md, "`BENCH vs-rtpengine`").
            for line in SessionPriority.raised({ RTPEngineBench.run(full: args.contains("--full")) }) { print(line) }
        },
        BenchEntry(
            name: "media-overload", inDefaultSet: false, deadline: 300, keyFigure: "clean",
            requires: ["/usr/bin/taskset"]
        ) { _ in
            // Alone (vs-rtpengine has it too): irisgw's transcode knee, then 1.5 times it offered
            // to a media server admitting at the 80 % budget.
            let line = try SessionPriority.raised { () throws -> String in
                let server = try IrisgwMediaServer(binary: RTPEngineBench.selfBinary, complexity: 5)
                let knee = try RTPEngineBench.knee(server, .transcode, schedule: RTPEngineBench.transcodeSchedule)
                server.stop()
                return try RTPEngineBench.overload(knee: knee.calls)
            }
            print(line)
        },
        BenchEntry(name: "media-whole-process", inDefaultSet: true, deadline: 120, keyFigure: "ratio") { _ in
            // The media server's whole-process CPU per call-frame against codec + socket floor.
            print(SessionPriority.raised { WholeProcessFloorBench.run(calls: 100) })
        },
        BenchEntry(
            name: "bridge", inDefaultSet: true, deadline: 120, keyFigure: "ratio", requires: [sipp],
            // docs/design.md, "Quality targets": call setup at least 200 per second.
            aims: ["bridge-setup": "target_sessions_per_sec_min=200"]
        ) { _ in
            // The whole gateway: sessions through the API, and transcoded calls through the bridge
            // against the media floor measured here, in the same run.
            let setup = try BridgeBench.setupRate(irisgw: irisgw)
            print("BENCH bridge-setup sessions_per_sec=\(fmt(setup.rate)) failed=\(setup.failed) workers=16")
            let floor = try MediaFloorBench.channelsPerCore(calls: 100)
            let media = try BridgeBench.mediaRun(irisgw: irisgw)
            print(
                "BENCH bridge calls=100 channels_per_core=\(fmt(media.channelsPerCore)) floor_channels_per_core=\(fmt(floor)) ratio=\(f2(media.channelsPerCore / floor)) packets_sent=\(media.sent) packets_received=\(media.received)"
            )
        },
        BenchEntry(name: "transfer", inDefaultSet: true, deadline: 90, keyFigure: "ratio_p50") { _ in
            // 100 concurrent blind transfers against 100 concurrent call setups through one
            // gateway (docs/benchmarks.md, "`BENCH transfer`").
            print(TransferBench.run(irisgw: irisgw))
        },
        BenchEntry(name: "amd", inDefaultSet: true, deadline: 90, keyFigure: "human_accuracy") { _ in
            // The answering-machine set through the detector (docs/benchmarks.md, "`BENCH amd`").
            print(AMDBench.run())
        },
        BenchEntry(name: "stream", inDefaultSet: true, deadline: 120, keyFigure: "ratio") { _ in
            // A voice agent's WebSocket against transcoded RTP (docs/benchmarks.md, "`BENCH stream`").
            print(MediaServicesBench.stream(irisgw: irisgw))
        },
        BenchEntry(name: "record", inDefaultSet: true, deadline: 120, keyFigure: "ratio") { _ in
            // Recorded calls against unrecorded, WAV and Ogg/Opus.
            MediaServicesBench.record(irisgw: irisgw).forEach { print($0) }
        },
        BenchEntry(
            name: "sip-dns", inDefaultSet: true, deadline: 120, keyFigure: "srv_ratio",
            requires: ["/usr/sbin/dnsmasq", sipp]
        ) { _ in
            // Proxies named by SRV (cache warm) against numeric ones, and numeric calls while a DNS
            // server drops every query, against the same without it.
            let r = try DNSBench.run(irisgw: irisgw)
            print(
                "BENCH sip-dns numeric_sessions_per_sec=\(fmt(r.numericRate)) srv_sessions_per_sec=\(fmt(r.srvRate)) srv_ratio=\(f2(r.srvRate / r.numericRate)) target_srv_ratio_min=0.95 quiet_dns_sessions_per_sec=\(fmt(r.quietRate)) silent_dns_sessions_per_sec=\(fmt(r.silentRate)) silent_dns_ratio=\(f2(r.silentRate / r.quietRate)) target_silent_dns_ratio_min=0.95 sessions_waiting_on_dns=\(r.dnsWaiting) failed=\(r.failed)"
            )
        },
        BenchEntry(
            name: "sip-tls", inDefaultSet: true, deadline: 120, keyFigure: "ratio",
            requires: ["/usr/bin/stunnel4", "/usr/bin/openssl", sipp]
        ) { _ in
            // Sessions to a trunk over TLS (stunnel in front of SIPp) against the same over TCP.
            let r = try TLSBench.run(irisgw: irisgw)
            print(
                "BENCH sip-tls tcp_sessions_per_sec=\(fmt(r.tcpRate)) tls_sessions_per_sec=\(fmt(r.tlsRate)) ratio=\(f2(r.tlsRate / r.tcpRate)) target_ratio_min=0.8 failed=\(r.failed) load1=\(f2(GatewayProbe.loadAverage()))"
            )
        },
        BenchEntry(name: "sip-transactions", inDefaultSet: true, deadline: 90, keyFigure: "ratio") { _ in
            // The transaction layer's cost per request with 100 and with 40,000 transactions open.
            print(try TransactionScalingBench.run())
        },
        // Not in the default set: 2-3 minutes of SIPp floods, which would take the set past 10.
        BenchEntry(
            name: "flood", inDefaultSet: false, deadline: 300, keyFigure: "legit_ratio",
            requires: [sipp, "/usr/bin/chrt"]
        ) { args in
            // INVITE floods against the whole gateway, with legitimate calls through the API meanwhile.
            print(
                "BENCH flood-machine cores=\(ProcessInfo.processInfo.activeProcessorCount) load1=\(f2(GatewayProbe.loadAverage()))"
                    + " flooder=\(args.contains("--flooder-idle") ? "sched_idle" : "nice19")"
            )
            for line in try FloodBench.run(irisgw: irisgw, flooderIdle: args.contains("--flooder-idle")) { print(line) }
        },
        BenchEntry(
            name: "cluster", inDefaultSet: false, deadline: 240, keyFigure: "death_to_last_bye_p99_ms",
            requires: ["/usr/bin/redis-server", sipp]
        ) { _ in
            // Three cluster nodes on one redis-server (docs/benchmarks.md, "`BENCH cluster`").
            for line in ClusterBench.run(irisgw: irisgw) { print(line) }
        },
        BenchEntry(name: "soak", inDefaultSet: false, deadline: 3600, keyFigure: "rss_kib_full_end") { args in
            try soak(args)
        },
        BenchEntry(name: "retention", inDefaultSet: false, deadline: 600, keyFigure: "sessions_rss_kib") { _ in
            // What an ended session leaves behind: RSS after every 1,000 sessions (no media), past
            // the 10,000 ended-session snapshots the gateway keeps.
            try BridgeBench.withBridge(irisgw: irisgw) { gw, router in
                var line = "BENCH retention sessions_rss_kib="
                for i in 0...14 {
                    if i > 0 { _ = BridgeBench.setupRate(gw, router, sessions: 1000, workers: 8) }
                    line += (i > 0 ? "," : "") + "\(i * 1000):\(GatewayProbe.rssKiB(gw.pid))"
                }
                print(line)
            }
        },
        BenchEntry(name: "media-floor", inDefaultSet: false, deadline: 120, keyFigure: "floor_channels_per_core") { _ in
            for n in [1, 100] {
                print(
                    "BENCH media-floor calls=\(n) floor_channels_per_core=\(fmt(try MediaFloorBench.channelsPerCore(calls: n)))"
                )
            }
        },
        BenchEntry(name: "profile-parse", inDefaultSet: false, deadline: 600, keyFigure: "-") { _ in
            // Our parse path alone, for `perf record`.
            var n = 0
            for _ in 0..<60_000 {
                for m in ParseBench.messages {
                    if let p = try? SIP.SIPMessage.parse(m) { n &+= p.serialize().count; _ = p.topVia; _ = p.cseq }
                }
            }
            print(n)
        },
        // For BenchTests: a bench that starts a shell (Foundation's Process puts it in a process
        // group of its own), which starts a sleeping child and one that leaves for a session of
        // its own (setsid), prints their pids and waits; never in `all`.
        BenchEntry(name: "selftest-hang", inDefaultSet: false, deadline: 3600, keyFigure: "-") { _ in
            let script = """
                sleep 3600 & a=$!; setsid sleep 3601 & echo "BENCH selftest-hang child=$a detached=$! pass=n/a"; wait
                """
            try Process.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script]).waitUntilExit()
        }
    ]

    /// `irisgw-bench soak [--minutes N] [--calls N] [--trace FILE] [--rt-priority N]`.
    static func soak(_ arguments: [String]) throws {
        var minutes = 5.0, calls = 200
        var trace: String?
        var realtime: Int?
        var args = arguments.makeIterator()
        while let a = args.next() {
            switch a {
            case "--minutes": minutes = args.next().flatMap { Double($0) } ?? minutes
            case "--calls": calls = args.next().flatMap { Int($0) } ?? calls
            case "--trace": trace = args.next()
            case "--rt-priority": realtime = args.next().flatMap { Int($0) }
            default:
                throw BenchUnavailable(
                    description: "usage: irisgw-bench soak [--minutes N] [--calls N] [--trace FILE] [--rt-priority N]")
            }
        }
        print(
            "BENCH soak-machine cores=\(ProcessInfo.processInfo.activeProcessorCount) load1=\(f2(GatewayProbe.loadAverage()))"
        )
        fflush(nil)
        // Sample lines are printed as they come; the summary last.
        let lines = try SoakBench.run(
            irisgw: irisgw, minutes: minutes, calls: calls, trace: trace, realtimePriority: realtime)
        if let summary = lines.last(where: { $0.hasPrefix("BENCH soak ") }) { print(summary) }
    }

    static func entry(_ name: String) -> BenchEntry? { entries.first { $0.name == name } }

    /// The benches `words` pick (`irisgw-bench` arguments, `BENCH_ARGS`) with the words that
    /// follow each name: none picks the default set, `all` every bench (not the self-tests).
    /// Throws naming a word that is no bench.
    static func selection(_ words: [String]) throws -> [(BenchEntry, [String])] {
        if words.isEmpty { return entries.filter(\.inDefaultSet).map { ($0, []) } }
        var picked: [(BenchEntry, [String])] = []
        for word in words {
            if word == "all" {
                picked += entries.filter { !$0.name.hasPrefix("selftest-") }.map { ($0, []) }
            } else if let e = entry(word) {
                picked.append((e, []))
            } else if let last = picked.indices.last,
                word.hasPrefix("-") || picked[last].1.last?.hasPrefix("--") == true
            {
                picked[last].1.append(word)
            } else {
                throw BenchUnavailable(
                    description:
                        "no bench named \(word); benches: \(entries.map(\.name).filter { !$0.hasPrefix("selftest-") }.joined(separator: " ")), all"
                )
            }
        }
        return picked
    }
}
