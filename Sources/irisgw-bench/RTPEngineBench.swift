import Foundation
import Glibc
import IOCore

/// `BENCH vs-rtpengine`: irisgw's media engine against Debian's rtpengine, each as its own
/// process pinned to CPU 0, both driven by the same load generator (`MediaLoadGenerator`, its
/// own process on CPU 1) with the same step schedule.
///
/// - Knee: calls are added in steps (coarse, then halving the gap between the last clean and the
///   first unclean step); a step is clean when every call's output on both legs is within 1 %
///   (+1 packet at the window's edges) of what its other leg was sent, and the p99 lateness of
///   what came back is under 30 ms (`GeneratorReport`). The knee is the largest clean step.
///   A step where the generator itself could not keep its schedule ends the stepping and is
///   reported (`..._generator_bound=1`): the knee is then at least the value given.
/// - Delay: the tone-burst probe on one call, alone and among `loadedCalls`.
enum RTPEngineBench {
    static let warmup = 1.0
    static let stepSeconds = 3.0
    static let probeSeconds = 6.0
    static let transcodeSchedule = [10, 25, 50, 100, 150, 200, 300, 400, 500, 600, 800]
    static let relaySchedule = [100, 250, 400, 500, 600, 700, 800, 1000, 1250, 1500, 2000]
    /// Lateness p99 (ms) under which a step is clean; the generator's own p99 send lateness
    /// (ms) above which the step measured the generator, not the engine.
    static let lateLimitMs = 30.0
    static let generatorLateLimitMs = 10.0

    struct Step {
        var calls: Int
        var report: GeneratorReport
        var clean: Bool { report.streamsOutOfTolerance == 0 && report.lateP99Ms < lateLimitMs && !generatorBound }
        /// The generator could not keep its schedule (late, or busy nearly all the time): the
        /// step measured the generator, not the engine.
        var generatorBound: Bool {
            report.sendLateP99Ms > generatorLateLimitMs || report.generatorBusy > 0.9 * report.seconds
        }
        var cpuPercent: Double { report.seconds > 0 ? report.engineCPU / report.seconds * 100 : 0 }
    }

    struct Knee {
        var calls = 0
        var steps: [Step] = []
        var generatorBound = false
        /// CPU % of one core per call at the knee step.
        var cpuPercentPerCall: Double {
            guard let s = steps.first(where: { $0.calls == calls }), calls > 0 else { return 0 }
            return s.cpuPercent / Double(calls)
        }
    }

    static var selfBinary: String { URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path }

    /// One step: a generator for `calls` calls, the engine's calls opened towards its sockets,
    /// `warmup` + `seconds` of media, the engine's calls closed.
    static func step(
        _ engine: MediaServerUnderTest, _ mode: LoadMode, calls: Int, seconds: Double = stepSeconds, probe: Bool = false
    ) throws -> GeneratorReport {
        let gen = try LineChild(
            pinnedTo: 1,
            [
                selfBinary, "media-gen", "--calls", "\(calls)", "--mode", mode.rawValue,
                "--warmup", "\(warmup)", "--seconds", "\(seconds)", "--engine-pid", "\(engine.pid)"
            ]
                + (probe ? ["--probe"] : []), label: "media-gen")
        defer { gen.stop() }
        let ports = try gen.readLine(timeout: 60)
        guard ports.hasPrefix("ports ") else { throw LineChild.Failure(description: "media-gen: \(ports)") }
        let pairs = ports.split(separator: " ").dropFirst().map { $0.split(separator: ",").compactMap { Int($0) } }
            .filter { $0.count == 2 }.map { ($0[0], $0[1]) }
        var closed = false
        let targets = try engine.open(mode, generator: pairs)
        defer { if !closed { _ = try? engine.closeAll() } }
        gen.send("targets " + targets.map { "\($0.trunk),\($0.platform),\($0.payloadType)" }.joined(separator: " "))
        let result = try gen.readLine(timeout: warmup + seconds + 60)
        guard result.hasPrefix("result ") else { throw LineChild.Failure(description: "media-gen: \(result)") }
        var report = try JSONDecoder().decode(GeneratorReport.self, from: Data(result.dropFirst(7).utf8))
        closed = true
        report.engineCounters = try engine.closeAll()
        return report
    }

    static func stepLine(_ engine: String, _ mode: LoadMode, _ s: Step, tag: String = "") -> String {
        func f(_ v: Double, _ d: Int = 1) -> String { String(format: "%.\(d)f", v) }
        return
            "BENCH vs-rtpengine-step engine=\(engine)\(tag) mode=\(mode.rawValue) calls=\(s.calls) clean=\(s.clean ? 1 : 0) "
            + "cpu_pct=\(f(s.cpuPercent)) cpu_pct_per_call=\(f(s.calls > 0 ? s.cpuPercent / Double(s.calls) : 0, 3)) "
            + "streams_off=\(s.report.streamsOutOfTolerance) worst_loss_pct=\(f(s.report.worstLossPercent, 2)) late_p99_ms=\(f(s.report.lateP99Ms)) "
            + "late_max_ms=\(f(s.report.lateMaxMs)) gen_late_p99_ms=\(f(s.report.sendLateP99Ms, 2)) gen_busy_pct=\(f(s.report.generatorBusy / max(s.report.seconds, 0.001) * 100)) "
            + "engine_wait_pct=\(f(s.report.engineWait / max(s.report.seconds, 0.001) * 100))"
            + (s.report.engineCounters.isEmpty
                ? ""
                : " " + s.report.engineCounters.split(separator: " ").map { "engine_\($0)" }.joined(separator: " "))
    }

    /// Steps `schedule` until a step is not clean, then halves the gap to it (at most 3
    /// times, or until it is within 10 % of the clean one). Prints a line per step.
    /// How many times `knee` halves the gap to the first unclean step.
    nonisolated(unsafe) static var halvings = 3

    static func knee(_ engine: MediaServerUnderTest, _ mode: LoadMode, schedule: [Int], tag: String = "") throws -> Knee
    {
        var k = Knee()
        var unclean: Int?
        // A step that is not clean is run once more, and the second one counts: one disturbed
        // by the machine (another process on the engine's or the generator's CPU) should not
        // end the stepping early.
        func run(_ n: Int) throws -> Step {
            var s = Step(calls: n, report: try step(engine, mode, calls: n))
            print(stepLine(engine.name, mode, s, tag: tag))
            if !s.clean {
                s = Step(calls: n, report: try step(engine, mode, calls: n))
                print(stepLine(engine.name, mode, s, tag: tag + "-again"))
            }
            k.steps.append(s)
            fflush(nil)
            return s
        }
        for n in schedule {
            let s = try run(n)
            if s.generatorBound { k.generatorBound = true; break }
            if !s.clean { unclean = n; break }
            k.calls = n
        }
        if var hi = unclean {
            var lo = k.calls
            for _ in 0..<halvings where hi - lo > max(2, lo / 10) {
                let mid = (lo + hi) / 2
                let s = try run(mid)
                if s.generatorBound { k.generatorBound = true; break }
                if s.clean { lo = mid; k.calls = mid } else { hi = mid }
            }
        }
        return k
    }

    struct Delay {
        var trunkToPlatform: Double?
        var platformToTrunk: Double?
        var bursts = 0
        var mean: Double? {
            guard let a = trunkToPlatform, let b = platformToTrunk else { return nil }
            return (a + b) / 2
        }
    }

    static func median(_ v: [Double]) -> Double? {
        guard !v.isEmpty else { return nil }
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The probe call (call 0) among `calls`, transcoding, in `runs` runs: per direction the
    /// mean of each run's median burst delay. A run's generator starts at a moment of its own,
    /// so its packets fall at another point of irisgw's 20 ms tick (a run's bursts agree within
    /// a few milliseconds; runs differ by up to a frame): several runs average over that phase.
    static func delay(_ engine: MediaServerUnderTest, calls: Int, runs: Int = 1) throws -> Delay {
        var up: [Double] = [], down: [Double] = [], bursts = Int.max
        for _ in 0..<runs {
            let r = try step(engine, .transcode, calls: calls, seconds: probeSeconds, probe: true)
            if let m = median(r.trunkToPlatformMs) { up.append(m) }
            if let m = median(r.platformToTrunkMs) { down.append(m) }
            bursts = min(bursts, r.trunkToPlatformMs.count, r.platformToTrunkMs.count)
        }
        func mean(_ v: [Double]) -> Double? { v.count == runs ? v.reduce(0, +) / Double(v.count) : nil }
        return Delay(trunkToPlatform: mean(up), platformToTrunk: mean(down), bursts: bursts == Int.max ? 0 : bursts)
    }

    static func ms(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-" }
    static func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.2f", a / b) : "-" }

    /// `irisgw-bench vs-rtpengine-step irisgw|rtpengine MODE CALLS [MODE CALLS ...] [--seconds S]
    /// [--complexity N] [--probe]` (MODE transcode or relay): steps against one engine process,
    /// a step line each (and with `--probe` the delays), to look at a load by hand.
    static func oneStep(_ args: [String]) throws {
        var steps: [(LoadMode, Int)] = []
        var i = 1
        while i + 1 < args.count, let mode = LoadMode(rawValue: args[i]), let calls = Int(args[i + 1]) {
            steps.append((mode, calls))
            i += 2
        }
        guard !args.isEmpty, !steps.isEmpty else {
            throw LineChild.Failure(
                description:
                    "usage: irisgw-bench vs-rtpengine-step irisgw|rtpengine transcode|relay CALLS ... [--seconds S] [--complexity N] [--bitrate BPS] [--opus-rate HZ] [--probe]"
            )
        }
        func value(_ name: String) -> String? {
            args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil }
        }
        let seconds = value("--seconds").flatMap(Double.init) ?? stepSeconds
        let complexity = value("--complexity").flatMap { Int32($0) } ?? 5
        let bitrate = value("--bitrate").flatMap { Int($0) }, opusRate = value("--opus-rate").flatMap { Int($0) }
        let probe = args.contains("--probe")
        try SessionPriority.raised {
            let engine: MediaServerUnderTest =
                args[0] == "rtpengine"
                ? try RTPEngineServer()
                : try IrisgwMediaServer(
                    binary: selfBinary, complexity: complexity, bitrate: bitrate, opusRate: opusRate)
            defer { engine.stop() }
            for (mode, calls) in steps {
                let r = try step(engine, mode, calls: calls, seconds: seconds, probe: probe)
                print(stepLine(engine.name, mode, Step(calls: calls, report: r)))
                if probe {
                    print(
                        "BENCH vs-rtpengine-probe engine=\(engine.name) trunk_to_platform_ms=\(r.trunkToPlatformMs.map { String(format: "%.1f", $0) }.joined(separator: ",")) "
                            + "platform_to_trunk_ms=\(r.platformToTrunkMs.map { String(format: "%.1f", $0) }.joined(separator: ","))"
                    )
                }
                if !r.streamsOff.isEmpty {
                    print("BENCH vs-rtpengine-off streams=\(r.streamsOff.joined(separator: ","))")
                }
                print(
                    "BENCH vs-rtpengine-generator opus_toc_configs=\(r.platformOpusConfigs) opus_bytes=\(String(format: "%.1f", r.platformOpusBytes)) "
                        + "engine_opus_toc_configs=\(r.engineOpusConfigs) engine_opus_bytes=\(String(format: "%.1f", r.engineOpusBytes)) received=\(r.received) sent_per_stream=\(r.sentPerStream)"
                )
                fflush(nil)
            }
        }
    }

    /// The whole comparison; returns the BENCH lines (step lines are printed as they come).
    /// 1.5 times irisgw's transcode knee offered at once to a media server admitting at the
    /// gateway's default budget (80 %): the calls it takes must stay clean; the rest are refused.
    static func overload(knee: Int) throws -> String {
        let offered = max(2, knee * 3 / 2)
        let server = try IrisgwMediaServer(binary: selfBinary, complexity: 5, budget: 80)
        defer { server.stop() }
        var s = Step(calls: offered, report: try step(server, .transcode, calls: offered))
        if !s.clean { s = Step(calls: offered, report: try step(server, .transcode, calls: offered)) }
        let r = s.report
        return
            "BENCH media-overload offered=\(offered) knee=\(knee) admitted=\(r.admitted) refused=\(offered - r.admitted) budget_pct=80 "
            + "clean=\(s.clean ? 1 : 0) worst_loss_pct=\(String(format: "%.2f", r.worstLossPercent)) late_p99_ms=\(String(format: "%.1f", r.lateP99Ms)) "
            + "cpu_pct=\(String(format: "%.1f", s.cpuPercent)) target_clean=1"
    }

    /// `full`: every step of the schedules, 3 halvings of the gap to the first unclean step,
    /// 3 runs of the one-call delay (`make bench BENCH_ARGS="vs-rtpengine --full"`); without it
    /// the transcode schedule starts at its second step, 2 halvings and 2 runs, so the
    /// default set stays under 10 minutes.
    static func run(full: Bool = false) -> [String] {
        halvings = full ? 3 : 2
        let delayRuns = full ? 3 : 2
        // Without --full the transcode schedule's first step is left out (a knee below the
        // second step is still found: the halving starts from 0).
        let transcodeSteps = full ? transcodeSchedule : Array(transcodeSchedule.dropFirst())
        // The relay's first step stays: one the generator cannot drive ends the stepping, and
        // at 250 calls on a loaded machine it could not.
        let relaySteps = relaySchedule
        let rtpengine: RTPEngineServer
        do {
            rtpengine = try RTPEngineServer()
        } catch {
            let why = String(describing: error).replacingOccurrences(of: "\"", with: "'")
            return [
                "BENCH vs-rtpengine skipped=\"\(why)\"", "BENCH vs-rtpengine-c10 skipped=\"\(why)\"",
                "BENCH vs-rtpengine-fullband skipped=\"\(why)\""
            ]
        }
        var lines: [String] = []
        do {
            defer { rtpengine.stop() }
            // Whether rtpengine transcodes here at all, before stepping.
            let check = try step(rtpengine, .transcode, calls: 1, seconds: 1)
            guard check.received > 0 else {
                let why =
                    "rtpengine \(rtpengine.version) sent nothing back when transcoding PCMU<->Opus: \(rtpengine.lastLog())"
                return [
                    "BENCH vs-rtpengine skipped=\"\(why)\"", "BENCH vs-rtpengine-c10 skipped=\"\(why)\"",
                    "BENCH vs-rtpengine-fullband skipped=\"\(why)\""
                ]
            }
            let irisgw = try IrisgwMediaServer(binary: selfBinary, complexity: 5)
            defer { irisgw.stop() }

            let irisTranscode = try knee(irisgw, .transcode, schedule: transcodeSteps)
            lines.append(try overload(knee: irisTranscode.calls))
            let rtpeTranscode = try knee(rtpengine, .transcode, schedule: transcodeSteps)
            let irisRelay = try knee(irisgw, .relay, schedule: relaySteps)
            let rtpeRelay = try knee(rtpengine, .relay, schedule: relaySteps)

            // Delay at one call and at a moderate load: half the smaller transcode knee, at most 100 calls.
            let loaded = max(2, min(100, min(irisTranscode.calls, rtpeTranscode.calls) / 2))
            let irisOne = try delay(irisgw, calls: 1, runs: delayRuns)
            let rtpeOne = try delay(rtpengine, calls: 1, runs: delayRuns)
            let irisLoaded = try delay(irisgw, calls: loaded), rtpeLoaded = try delay(rtpengine, calls: loaded)
            irisgw.stop()

            let delayRatio = (irisOne.mean != nil && rtpeOne.mean != nil) ? ratio(irisOne.mean!, rtpeOne.mean!) : "-"
            lines.append(
                "BENCH vs-rtpengine transcode_knee_ratio=\(ratio(Double(irisTranscode.calls), Double(rtpeTranscode.calls))) "
                    + "relay_knee_ratio=\(ratio(Double(irisRelay.calls), Double(rtpeRelay.calls))) delay_ratio=\(delayRatio) "
                    + "irisgw_transcode_knee=\(irisTranscode.calls) rtpengine_transcode_knee=\(rtpeTranscode.calls) "
                    + "irisgw_relay_knee=\(irisRelay.calls) rtpengine_relay_knee=\(rtpeRelay.calls) "
                    + "irisgw_delay_ms=\(ms(irisOne.mean)) rtpengine_delay_ms=\(ms(rtpeOne.mean)) "
                    + "target_transcode_knee_ratio_min=3 target_relay_knee_ratio_min=1.5 target_delay_ratio_max=1.0 "
                    + "irisgw_opus=8kHz/mono/complexity5/auto-bitrate rtpengine_opus=48kHz/mono/complexity10(ffmpeg-libopus-default)/32kbps "
                    + "rtpengine_version=\(rtpengine.version)")
            func g(_ k: Knee) -> String { k.generatorBound ? "1" : "0" }
            lines.append(
                "BENCH vs-rtpengine-detail irisgw_transcode_cpu_pct_per_call=\(String(format: "%.3f", irisTranscode.cpuPercentPerCall)) "
                    + "rtpengine_transcode_cpu_pct_per_call=\(String(format: "%.3f", rtpeTranscode.cpuPercentPerCall)) "
                    + "irisgw_relay_cpu_pct_per_call=\(String(format: "%.4f", irisRelay.cpuPercentPerCall)) "
                    + "rtpengine_relay_cpu_pct_per_call=\(String(format: "%.4f", rtpeRelay.cpuPercentPerCall)) "
                    + "irisgw_relay_generator_bound=\(g(irisRelay)) rtpengine_relay_generator_bound=\(g(rtpeRelay)) "
                    + "irisgw_transcode_generator_bound=\(g(irisTranscode)) rtpengine_transcode_generator_bound=\(g(rtpeTranscode)) "
                    + "platform_opus_toc_configs=\(check.platformOpusConfigs.map(String.init).joined(separator: ",")) platform_opus_bytes=\(String(format: "%.0f", check.platformOpusBytes))"
            )
            lines.append(
                "BENCH vs-rtpengine-delay calls=1 runs=\(delayRuns) irisgw_trunk_to_platform_ms=\(ms(irisOne.trunkToPlatform)) irisgw_platform_to_trunk_ms=\(ms(irisOne.platformToTrunk)) "
                    + "rtpengine_trunk_to_platform_ms=\(ms(rtpeOne.trunkToPlatform)) rtpengine_platform_to_trunk_ms=\(ms(rtpeOne.platformToTrunk)) "
                    + "bursts_per_run=\(min(irisOne.bursts, rtpeOne.bursts)) opus_lookahead_ms=6.5")
            lines.append(
                "BENCH vs-rtpengine-delay calls=\(loaded) runs=1 irisgw_trunk_to_platform_ms=\(ms(irisLoaded.trunkToPlatform)) irisgw_platform_to_trunk_ms=\(ms(irisLoaded.platformToTrunk)) "
                    + "rtpengine_trunk_to_platform_ms=\(ms(rtpeLoaded.trunkToPlatform)) rtpengine_platform_to_trunk_ms=\(ms(rtpeLoaded.platformToTrunk)) "
                    + "bursts_per_run=\(min(irisLoaded.bursts, rtpeLoaded.bursts))")

            // irisgw at rtpengine's Opus settings, and at the call's 8 kHz with the rest equal
            // (RTPEngineEqualSettings.swift).
            lines += try RTPEngineEqualSettings.run(rtpengine: rtpeTranscode, schedule: transcodeSteps, kneeAt8k: full)
        } catch {
            // Failed part way: the lines not printed yet say why.
            let why = String(describing: error).replacingOccurrences(of: "\"", with: "'")
            if lines.isEmpty { lines.append("BENCH vs-rtpengine skipped=\"\(why)\"") }
            lines.append("BENCH vs-rtpengine-c10 skipped=\"\(why)\"")
            lines.append("BENCH vs-rtpengine-fullband skipped=\"\(why)\"")
        }
        return lines
    }
}
