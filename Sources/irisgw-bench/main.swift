import Foundation
import Media
import SIP

/// `make bench`: each line is `BENCH <name> key=value...`, ratios measured in this run.
func formatted(_ v: Double) -> String { String(format: "%.0f", v) }

// Processes the benches start (docs/operations.md, "irisgw against rtpengine"): the media
// server under test, the load generator, the whole-process floor.
if CommandLine.arguments.count >= 2 {
    let rest = Array(CommandLine.arguments.dropFirst(2))
    do {
        switch CommandLine.arguments[1] {
        case "media-server": try MediaServer.main(rest); exit(0)
        case "media-gen": try MediaLoadGenerator.main(rest); exit(0)
        case "whole-process-floor": try WholeProcessFloorBench.main(rest); exit(0)
        case "vs-rtpengine-step": try RTPEngineBench.oneStep(rest); exit(0)
        default: break
        }
    } catch {
        FileHandle.standardError.write(Data("irisgw-bench \(CommandLine.arguments[1]): \(error)\n".utf8))
        exit(1)
    }
}
let which = Set(CommandLine.arguments.dropFirst())
if which.isEmpty || which.contains("sip-parse") {
    let r = ParseBench.run()
    func f(_ v: Double) -> String { String(format: "%.2f", v) }
    // ratio: how many times longer our path takes than osip's for the same work.
    print(
        "BENCH sip-parse ours_parse_msgs_per_sec=\(formatted(r.oursParsePerSecond)) osip_parse_msgs_per_sec=\(formatted(r.osipParsePerSecond)) ratio=\(f(r.osipParsePerSecond / r.oursParsePerSecond)) target_ratio_max=1.5"
    )
    print(
        "BENCH sip-parse-serialize ours_msgs_per_sec=\(formatted(r.oursParseSerializePerSecond)) osip_msgs_per_sec=\(formatted(r.osipParseSerializePerSecond)) ratio=\(f(r.osipParseSerializePerSecond / r.oursParseSerializePerSecond)) ours_vs_osip_bare_parse_ratio=\(f(r.osipParsePerSecond / r.oursParseSerializePerSecond))"
    )
}
if which.isEmpty || which.contains("sip-calls") {
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    let steps = CallRateBench.run(irisgw: irisgw)
    for s in steps {
        print(
            "BENCH sip-calls-step rate=\(s.rate) calls=\(s.calls) failed=\(s.failed) achieved_cps=\(String(format: "%.0f", s.achieved))"
        )
    }
    let good = steps.filter { Double($0.failed) <= Double($0.calls) * 0.001 }
    let best = good.map(\.achieved).max() ?? 0
    print(
        "BENCH sip-calls max_cps=\(String(format: "%.0f", best)) target_cps_min=200 failure_budget=0.1% steps=\(steps.count)"
    )
}
if CommandLine.arguments.count >= 5, CommandLine.arguments[1] == "media-loadgen" {
    let a = CommandLine.arguments
    try MediaBench.loadgen(
        listPath: a[2], seconds: Double(a[3]) ?? 3, platformCodec: a[4],
        srtp: a.count >= 6 ? SRTPSuite(rawValue: a[5]) : nil)
    exit(0)
}
func fmt(_ v: Double) -> String { String(format: "%.0f", v) }
func mediaLine(_ name: String, _ s: MediaBench.Step, floor: Double) -> String {
    "BENCH \(name) calls=\(s.calls) channels_per_core=\(fmt(s.channelsPerCore)) floor_channels_per_core=\(fmt(floor)) ratio=\(String(format: "%.2f", s.channelsPerCore / floor)) p50_us=\(s.p50) p99_us=\(s.p99) late_frames=\(s.late) rss_kib_per_call=\(fmt(s.rssKiBPerCall))"
}
if which.isEmpty || which.contains("media") || which.contains("passthrough") {
    // Floor and engine measured in CPU time of the working thread, in the same run; the
    // floor keeps one codec set per call like the engine, and is taken before and after
    // the engine run so drifting machine load hits both alike.
    let before = try MediaFloorBench.channelsPerCore(calls: 100)
    if which.isEmpty || which.contains("media") {
        let step = try MediaBench.runStep(calls: 100, passthrough: false, seconds: 4)
        let floor = (before + (try MediaFloorBench.channelsPerCore(calls: 100))) / 2
        print(mediaLine("media", step, floor: floor))
        // What loopback UDP alone costs per call, so the engine's own overhead can be told
        // apart from the kernel's (docs/media.md, "Where the time goes").
        let udp = try UDPFloorBench.microsecondsPerCallFrame()
        let codecUs = 1e6 / 50 / floor, engineUs = 1e6 / 50 / step.channelsPerCore
        let withUDP = 1e6 / 50 / (codecUs + udp)
        print(
            "BENCH media-udp-floor codec_us_per_call_frame=\(String(format: "%.1f", codecUs)) udp_us_per_call_frame=\(String(format: "%.1f", udp)) engine_us_per_call_frame=\(String(format: "%.1f", engineUs)) codec_plus_udp_channels_per_core=\(fmt(withUDP)) ratio_vs_codec_plus_udp=\(String(format: "%.2f", step.channelsPerCore / withUDP)) best_possible_ratio=\(String(format: "%.2f", withUDP / floor))"
        )
        // The latency target (docs/design.md, "Quality targets") is at 200 calls: both cores' worth of media threads.
        let loaded = try MediaBench.runStep(calls: 200, passthrough: false, seconds: 4, threads: 2)
        print(
            "BENCH media-200 calls=200 threads=2 p50_us=\(loaded.p50) p99_us=\(loaded.p99) late_frames=\(loaded.late) target_p99_us_max=1000"
        )
    }
    if which.isEmpty || which.contains("passthrough") {
        let step = try MediaBench.runStep(calls: 200, passthrough: true, seconds: 4)
        print(mediaLine("passthrough", step, floor: before))
    }
}
if which.isEmpty || which.contains("passthrough-opus") {
    print(try OpusPassthroughBench.run().line)
}
if which.isEmpty || which.contains("source-policy") {
    // The per-packet source check (docs/media.md, "Who may send media"): BENCH media's and
    // BENCH passthrough's calls with it on, as a ratio to the same calls with it off,
    // alternated in this run.
    for (name, passthrough, calls) in [("media", false, 100), ("passthrough", true, 200)] {
        let r = try MediaBench.sourcePolicyComparison(calls: calls, passthrough: passthrough, rounds: 3, seconds: 4)
        print(
            "BENCH source-policy-\(name) calls=\(calls) on_channels_per_core=\(fmt(r.on)) off_channels_per_core=\(fmt(r.off)) ratio=\(String(format: "%.3f", r.on / r.off)) target_ratio_min=0.98 late_frames=\(r.last.late) trunk_packets=\(r.last.trunkReceived)"
        )
    }
}
if which.isEmpty || which.contains("srtp") {
    // SRTP on every trunk leg against plain RTP, the same transcoded calls and generator,
    // alternated in this run: what SRTP costs the media thread (docs/media.md, "SRTP").
    for suite in [SRTPSuite.aesCM128HmacSHA1_80, .aeadAES128GCM] { print(try SRTPBench.line(suite: suite)) }
}
if which.isEmpty || which.contains("webrtc") {
    // WebRTC platform legs (ICE-lite, DTLS-SRTP) against plain ones, the same calls and
    // generator, alternated in this run; and the setup time (docs/architecture.md, "The
    // WebRTC platform leg").
    print(try WebRTCBench.run(calls: 100, rounds: 2, seconds: 4))
}
if which.isEmpty || which.contains("vs-rtpengine") {
    // irisgw's media engine against Debian's rtpengine, each its own process on CPU 0, one load
    // generator process on CPU 1: transcode and relay knees, added delay (docs/operations.md).
    for line in SessionPriority.raised({ RTPEngineBench.run() }) { print(line) }
    fflush(nil)
}
if which.contains("media-overload") {
    // Alone (the default run has it inside vs-rtpengine): irisgw's transcode knee, then 1.5
    // times it offered to a media server admitting at the 80 % budget.
    let line = SessionPriority.raised { () -> String in
        do {
            let server = try IrisgwMediaServer(binary: RTPEngineBench.selfBinary, complexity: 5)
            let knee = try RTPEngineBench.knee(server, .transcode, schedule: RTPEngineBench.transcodeSchedule)
            server.stop()
            return try RTPEngineBench.overload(knee: knee.calls)
        } catch {
            return "BENCH media-overload skipped=\"\(error)\""
        }
    }
    print(line)
    fflush(nil)
}
if which.isEmpty || which.contains("media-whole-process") {
    // The media server's whole-process CPU per call-frame against codec + socket floor.
    print(SessionPriority.raised { WholeProcessFloorBench.run(calls: 100) })
    fflush(nil)
}
if which.isEmpty || which.contains("bridge") {
    // The whole gateway: sessions through the API, and transcoded calls through the bridge
    // against the media floor measured here, in the same run.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    let setup = try BridgeBench.setupRate(irisgw: irisgw)
    print("BENCH bridge-setup sessions_per_sec=\(fmt(setup.rate)) failed=\(setup.failed) workers=16 target_cps_min=200")
    let floor = try MediaFloorBench.channelsPerCore(calls: 100)
    let media = try BridgeBench.mediaRun(irisgw: irisgw)
    print(
        "BENCH bridge calls=100 channels_per_core=\(fmt(media.channelsPerCore)) floor_channels_per_core=\(fmt(floor)) ratio=\(String(format: "%.2f", media.channelsPerCore / floor)) packets_sent=\(media.sent) packets_received=\(media.received)"
    )
}
if which.isEmpty || which.contains("transfer") {
    // 100 concurrent blind transfers (REFER, three NOTIFYs, BYE) through one gateway against
    // 100 concurrent call setups through it, the simulator's own delays scaled away: the
    // ratio is what a transfer costs in call setups (docs/operations.md, "Transfers").
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    print(TransferBench.run(irisgw: irisgw))
    fflush(nil)
}
if which.isEmpty || which.contains("amd") {
    // The answering-machine set (espeak-ng speech, several voices) through the detector:
    // accuracy for people and machines apart, time to a verdict, the beep (docs/operations.md,
    // "Answering-machine detection").
    print(AMDBench.run())
    fflush(nil)
}
if which.isEmpty || which.contains("stream") || which.contains("record") {
    // Media services through the whole gateway: a voice agent's WebSocket against transcoded
    // RTP, recorded calls against unrecorded (docs/operations.md, "Media services").
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    if which.isEmpty || which.contains("stream") { print(MediaServicesBench.stream(irisgw: irisgw)) }
    if which.isEmpty || which.contains("record") { MediaServicesBench.record(irisgw: irisgw).forEach { print($0) } }
    fflush(nil)
}
if which.isEmpty || which.contains("sip-dns") {
    // Proxies named by SRV (cache warm) against numeric ones, and numeric calls while a DNS
    // server drops every query, against the same without it.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    let r = try DNSBench.run(irisgw: irisgw)
    func f(_ v: Double) -> String { String(format: "%.2f", v) }
    print(
        "BENCH sip-dns numeric_sessions_per_sec=\(fmt(r.numericRate)) srv_sessions_per_sec=\(fmt(r.srvRate)) srv_ratio=\(f(r.srvRate / r.numericRate)) target_srv_ratio_min=0.95 quiet_dns_sessions_per_sec=\(fmt(r.quietRate)) silent_dns_sessions_per_sec=\(fmt(r.silentRate)) silent_dns_ratio=\(f(r.silentRate / r.quietRate)) target_silent_dns_ratio=1.0 sessions_waiting_on_dns=\(r.dnsWaiting) failed=\(r.failed)"
    )
}
if which.isEmpty || which.contains("sip-tls") {
    // Sessions to a trunk over TLS (stunnel in front of SIPp) against the same over TCP.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    let r = try TLSBench.run(irisgw: irisgw)
    print(
        "BENCH sip-tls tcp_sessions_per_sec=\(fmt(r.tcpRate)) tls_sessions_per_sec=\(fmt(r.tlsRate)) ratio=\(String(format: "%.2f", r.tlsRate / r.tcpRate)) target_ratio_min=0.8 failed=\(r.failed) load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
    )
}
if which.isEmpty || which.contains("sip-transactions") {
    // The transaction layer's cost per request with 100 and with 40,000 transactions open.
    print(try TransactionScalingBench.run())
}
if which.isEmpty || which.contains("flood") {
    // INVITE floods against the whole gateway, with legitimate calls through the API meanwhile.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    print(
        "BENCH flood-machine cores=\(ProcessInfo.processInfo.activeProcessorCount) load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
    )
    for line in try FloodBench.run(irisgw: irisgw) { print(line) }
}
if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "soak" {
    // `irisgw-bench soak [--minutes N] [--calls N] [--trace FILE] [--rt-priority N]`: not part of the default run.
    var minutes = 5.0, calls = 200
    var trace: String?
    var realtime: Int?
    var args = CommandLine.arguments.dropFirst(2).makeIterator()
    while let a = args.next() {
        switch a {
        case "--minutes": minutes = args.next().flatMap { Double($0) } ?? minutes
        case "--calls": calls = args.next().flatMap { Int($0) } ?? calls
        case "--trace": trace = args.next()
        case "--rt-priority": realtime = args.next().flatMap { Int($0) }
        default:
            FileHandle.standardError.write(
                Data("usage: irisgw-bench soak [--minutes N] [--calls N] [--trace FILE] [--rt-priority N]\n".utf8))
            exit(2)
        }
    }
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    print(
        "BENCH soak-machine cores=\(ProcessInfo.processInfo.activeProcessorCount) load1=\(String(format: "%.2f", GatewayProbe.loadAverage()))"
    )
    fflush(nil)
    // Sample lines are printed as they come; the summary last.
    let lines = try SoakBench.run(
        irisgw: irisgw, minutes: minutes, calls: calls, trace: trace, realtimePriority: realtime)
    if let summary = lines.last(where: { $0.hasPrefix("BENCH soak ") }) { print(summary) }
}
if which.contains("retention") {
    // What an ended session leaves behind: RSS after every 1,000 sessions (no media), past
    // the 10,000 ended-session snapshots the gateway keeps.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    try BridgeBench.withBridge(irisgw: irisgw) { gw, router in
        var line = "BENCH retention sessions_rss_kib="
        for i in 0...14 {
            if i > 0 { _ = BridgeBench.setupRate(gw, router, sessions: 1000, workers: 8) }
            line += (i > 0 ? "," : "") + "\(i * 1000):\(GatewayProbe.rssKiB(gw.pid))"
        }
        print(line)
    }
}
if which.contains("profile-parse") {
    // Our parse path alone, for `perf record`.
    var n = 0
    for _ in 0..<60_000 {
        for m in ParseBench.messages {
            if let p = try? SIP.SIPMessage.parse(m) { n &+= p.serialize().count; _ = p.topVia; _ = p.cseq }
        }
    }
    print(n)
}
if which.contains("media-floor") {
    for n in [1, 100] {
        print(
            "BENCH media-floor calls=\(n) floor_channels_per_core=\(String(format: "%.0f", try MediaFloorBench.channelsPerCore(calls: n)))"
        )
    }
}
if which.isEmpty || which.contains("cluster") {
    // Three cluster nodes on one redis-server: a node's death to the carrier's last BYE, calls
    // offered meanwhile, API through a non-holder, cross-node events, setup rate 3 nodes : 1.
    let irisgw = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "irisgw"
    ).path
    for line in ClusterBench.run(irisgw: irisgw) { print(line) }
    fflush(nil)
}
