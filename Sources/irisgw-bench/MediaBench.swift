import Foundation
import Glibc
import IOCore
import Media

/// `BENCH media` and `BENCH passthrough`: N full-duplex calls through one media thread,
/// driven over real UDP on 127.0.0.1 by a load generator process (this binary in
/// `media-loadgen` mode): PCMU at 20 ms into each trunk leg, Opus (or PCMU) into each
/// platform leg. Calls are added in steps until a step shows a late frame; the largest
/// clean step is the calls one core sustains.
///
/// `BENCH srtp` runs the same transcoded calls with SRTP on every trunk leg (the generator
/// protects what it sends there with the mirrored keys), against plain RTP in the same run.
enum MediaBench {
    /// Fixed bench keys (never used outside the bench): the engine's trunk-leg send key and
    /// the generator's, sized for `suite`.
    static func benchKeys(_ suite: SRTPSuite) -> SRTPConfiguration {
        SRTPConfiguration(
            suite: suite, sendKey: (0..<suite.keyMaterialLength).map { UInt8($0) },
            receiveKey: (0..<suite.keyMaterialLength).map { UInt8(0xA0 &+ $0) })
    }

    /// false with IRISGW_BENCH_BUFFERED=1 in the environment: every stream through the jitter
    /// buffer and the tick, to compare with playout on arrival (docs/benchmarks.md); read by
    /// `BENCH media` and the media server.
    static let playoutOnArrival = ProcessInfo.processInfo.environment["IRISGW_BENCH_BUFFERED"] != "1"

    struct Step {
        var calls: Int
        /// Calls one fully busy core would carry at the measured CPU cost per call.
        var channelsPerCore: Double
        var late: Int
        var p50: Int
        var p99: Int
        var rssKiBPerCall: Double
        var received: Int
        /// Trunk packets the engine received, and those it refused (SRTP auth, replay, malformed).
        var trunkReceived = 0
        var trunkRefused = 0
        /// Media-thread CPU µs per packet it processed in the measured window: unlike
        /// `channelsPerCore` it does not read low when a starved generator sends less.
        var cpuPerPacketUs = 0.0
    }

    static func run(passthrough: Bool, steps: [Int], seconds: Double) throws -> [Step] {
        var results: [Step] = []
        for n in steps {
            let step = try runStep(calls: n, passthrough: passthrough, seconds: seconds)
            results.append(step)
            if step.late > 0 { break }
        }
        return results
    }

    /// `generatorIsPeer`: the calls' SDP names the generator's own socket (as a peer that sends
    /// from where it says), so what the engine sends wakes a reader; otherwise it goes to a
    /// socket nobody reads and the generator's packets come from elsewhere (the NAT path).
    static func runStep(
        calls n: Int, passthrough: Bool, seconds: Double, threads: Int = 1, srtp: SRTPSuite? = nil,
        checksSources: Bool = true, generatorIsPeer: Bool = false, opusPassthrough: Bool = false
    ) throws -> Step {
        let engine = try MediaEngine(
            configuration: .init(threads: threads, portRange: 20_000...29_999, portQuarantine: 0))
        defer { engine.shutdown() }
        var sink: UDPSocket? = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let sinkAddress = sink!.local
        // The generator binds the port itself (free again the moment ours closes).
        if generatorIsPeer { sink = nil }
        defer { _ = sink }
        let rssBefore = residentKiB()
        var calls: [MediaCall] = []
        let platformCodec: AudioCodec = passthrough && !opusPassthrough ? .pcmu : .opus(.init(complexity: 5))
        // Opus passthrough (OpusPassthroughBench): Opus on both legs, the trunk's on another payload type.
        let trunkCodec: AudioCodec = opusPassthrough ? platformCodec : .pcmu
        for _ in 0..<n {
            var configuration = MediaCallConfiguration(
                trunk: .init(
                    codec: trunkCodec, payloadType: opusPassthrough ? 96 : 0, remote: sinkAddress,
                    srtp: srtp.map(benchKeys)),
                platform: .init(
                    codec: platformCodec, payloadType: passthrough && !opusPassthrough ? 0 : 111, remote: sinkAddress),
                rtpTimeout: 0)
            configuration.playoutOnArrival = playoutOnArrival
            configuration.trunk.checksSources = checksSources
            configuration.platform.checksSources = checksSources
            calls.append(try engine.openCall(configuration))
        }
        defer { calls.forEach { $0.close() } }
        // The generator gets the port list in a file: trunk and platform RTP port per call.
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-ports-\(getpid()).txt")
        try calls.map { "\($0.trunkAddress.port) \($0.platformAddress.port)" }.joined(separator: "\n").write(
            to: list, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: list) }
        let gen = Process()
        gen.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        gen.arguments = [
            "media-loadgen", list.path, String(seconds), opusPassthrough ? "opus-both" : passthrough ? "pcmu" : "opus"
        ]
        if let srtp { gen.arguments! += [srtp.rawValue] }
        if generatorIsPeer {
            gen.environment = ProcessInfo.processInfo.environment.merging([
                "IRISGW_BENCH_GENERATOR_PORT": String(sinkAddress.port)
            ]) { $1 }
        }
        let out = Pipe()
        gen.standardOutput = out
        try gen.run()
        // Let the jitter buffers fill, then measure the rest of the run.
        Thread.sleep(forTimeInterval: 0.5)
        engine.resetMeasurements()
        let rssDuring = residentKiB()
        let cpu0 = engine.cpuTime, wall0 = EventLoop.now()
        Thread.sleep(forTimeInterval: max(0.5, seconds - 1))
        let cpu = engine.cpuTime - cpu0, wall = EventLoop.now() - wall0
        let processed = engine.measurements().frames
        let data = out.fileHandleForReading.readDataToEndOfFile()
        gen.waitUntilExit()
        let m = engine.measurements()
        let received = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let trunk = calls.compactMap { $0.statistics()[.trunk] }
        return Step(
            calls: n, channelsPerCore: cpu > 0 ? Double(n) * wall / cpu : 0, late: m.lateFrames, p50: m.p50, p99: m.p99,
            rssKiBPerCall: Double(rssDuring - rssBefore) / Double(max(n, 1)), received: received,
            trunkReceived: trunk.reduce(0) { $0 + $1.packetsReceived },
            trunkRefused: trunk.reduce(0) { $0 + $1.srtpAuthFailures + $1.srtpReplays + $1.malformed },
            cpuPerPacketUs: processed > 0 ? cpu / Double(processed) * 1e6 : 0)
    }

    /// The same calls with the source policy on and off (`MediaLegConfiguration.checksSources`),
    /// alternated `rounds` times: channels per core of each over all rounds. The generator
    /// sends from the address the calls' SDP names, so both runs send to the same reader and
    /// differ only by the check.
    static func sourcePolicyComparison(
        calls: Int, passthrough: Bool, rounds: Int, seconds: Double
    ) throws -> (on: Double, off: Double, last: Step) {
        var onCost = 0.0, offCost = 0.0
        var last: Step?
        for _ in 0..<rounds {
            let off = try runStep(
                calls: calls, passthrough: passthrough, seconds: seconds, checksSources: false, generatorIsPeer: true)
            let on = try runStep(calls: calls, passthrough: passthrough, seconds: seconds, generatorIsPeer: true)
            offCost += 1 / off.channelsPerCore
            onCost += 1 / on.channelsPerCore
            last = on
        }
        return (Double(rounds) / onCost, Double(rounds) / offCost, last!)
    }

    /// The load generator: reads the port list, sends one packet per leg per 20 ms for
    /// `seconds`, drains what the engine sends back, prints the count received.
    /// With `srtp`, what goes to each trunk leg is SRTP under the bench keys (one session per
    /// call, as the engine has); what comes back is only counted, not unprotected.
    static func loadgen(listPath: String, seconds: Double, platformCodec: String, srtp: SRTPSuite? = nil) throws {
        let text = try String(contentsOfFile: listPath, encoding: .utf8)
        let pairs = text.split(separator: "\n").compactMap { line -> (RawSocketAddress, RawSocketAddress)? in
            let p = line.split(separator: " ").compactMap { Int($0) }
            guard p.count == 2, let t = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: p[0])),
                let q = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: p[1]))
            else { return nil }
            return (t, q)
        }
        let sessions = try srtp.map { suite in try pairs.map { _ in try SRTPSession(benchKeys(suite).mirrored) } }
        let port = ProcessInfo.processInfo.environment["IRISGW_BENCH_GENERATOR_PORT"].flatMap { Int($0) } ?? 0
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: port), bufferBytes: 16 << 20)
        // Pre-encoded payloads: 50 frames of a speech-like signal, PCMU and Opus.
        let (pcmuFrames, opusFrames) = try payloads()
        let platformFrames = platformCodec.hasPrefix("opus") ? opusFrames : pcmuFrames
        let platformStep: UInt32 = platformCodec.hasPrefix("opus") ? 960 : 160
        // "opus-both": Opus into the trunk legs too (payload type 96), for Opus passthrough.
        let opusTrunk = platformCodec == "opus-both"
        let timer = try PeriodicTimer(interval: 0.020)
        var packet = [UInt8](repeating: 0, count: 1500)
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { rx.deallocate() }
        var from = RawSocketAddress()
        var received = 0
        let ticks = Int(seconds * 50)
        var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
        for tick in 0..<ticks {
            while poll(&pfd, 1, 100) == 0 {}
            _ = timer.read()
            let seq = UInt16(truncatingIfNeeded: tick)
            for (i, (trunk, platform)) in pairs.enumerated() {
                send(
                    &packet, pt: opusTrunk ? 96 : 0, seq: seq, ts: UInt32(tick) &* (opusTrunk ? 960 : 160),
                    ssrc: UInt32(i * 2 + 1), payload: (opusTrunk ? opusFrames : pcmuFrames)[tick % 50], to: trunk,
                    via: socket,
                    srtp: sessions?[i])
                send(
                    &packet, pt: platformCodec.hasPrefix("opus") ? 111 : 0, seq: seq, ts: UInt32(tick) &* platformStep,
                    ssrc: UInt32(i * 2 + 2),
                    payload: platformFrames[tick % 50], to: platform, via: socket)
            }
            while socket.receive(into: rx, from: &from) != nil { received += 1 }
        }
        let end = EventLoop.now() + 0.2
        while EventLoop.now() < end {
            while socket.receive(into: rx, from: &from) != nil { received += 1 }
            usleep(5000)
        }
        print(received)
    }

    /// One RTP packet from `packet`'s buffer, SRTP-protected when `srtp` is given (WebRTCBench sends with it too).
    static func send(
        _ packet: inout [UInt8], pt: UInt8, seq: UInt16, ts: UInt32, ssrc: UInt32, payload: [UInt8],
        to: RawSocketAddress, via socket: UDPSocket, srtp: SRTPSession? = nil
    ) {
        packet.withUnsafeMutableBytes {
            _ = try? RTPHeader(payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc).write(into: $0)
        }
        for (i, b) in payload.enumerated() { packet[12 + i] = b }
        var length = 12 + payload.count
        if let srtp {
            guard case .ok(let n) = packet.withUnsafeMutableBytes({ srtp.protectRTP($0, length: length) }) else {
                return
            }
            length = n
        }
        packet.withUnsafeBytes { _ = socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<length]), to: to) }
    }

    static func payloads() throws -> ([[UInt8]], [[UInt8]]) {
        let encoder = try OpusEncoder(.init(sampleRate: 8000, complexity: 5))
        var pcmu: [[UInt8]] = [], opus: [[UInt8]] = []
        var bytes: [UInt8] = [], packet: [UInt8] = []
        let signal = speechLikeSignal(frames: 50)
        for f in 0..<50 {
            let pcm = Array(signal[(f * 160)..<(f * 160 + 160)])
            G711.encodeULaw(pcm, into: &bytes)
            pcmu.append(bytes)
            _ = try encoder.encode(pcm, into: &packet)
            opus.append(packet)
        }
        return (pcmu, opus)
    }

    static func residentKiB() -> Int {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = s.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024 : 0
    }
}
