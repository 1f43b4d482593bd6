import CLinux
import Foundation
import Glibc
import IOCore
import Media

/// What the engine under test does with a call: transcode PCMU <-> Opus, or relay PCMU.
enum LoadMode: String, Codable, Sendable {
    case transcode, relay
}

/// What one generator run measured, sent back to the bench as one JSON line.
struct GeneratorReport: Codable {
    var calls = 0
    var mode = LoadMode.transcode
    /// The measured window: wall seconds, and CPU seconds of the engine process (all its
    /// threads, /proc/<pid>/stat) and of the generator in it.
    var seconds = 0.0
    var engineCPU = 0.0
    var generatorCPU = 0.0
    /// Seconds of the window the generator was sending or reading (it polls the rest).
    var generatorBusy = 0.0
    /// Seconds the engine's threads were runnable but waited for a CPU in the window
    /// (schedstat): another process took the engine's CPU, and the step measured less than it.
    var engineWait = 0.0
    /// Packets sent per stream in the window (each leg of each call), and the streams whose
    /// output on the other leg differed by more than the tolerance (1 %, at least 1 packet,
    /// plus 1 for a packet in flight at either edge of the window).
    var sentPerStream = 0
    var streamsOutOfTolerance = 0
    /// Calls the engine took (a refused call, target port 0, is neither sent nor judged).
    var admitted = 0
    /// Largest shortfall (or excess, negative) of a stream's output against its input, %.
    var worstLossPercent = 0.0
    /// The first few streams out of tolerance: "call/leg:sent/got@local>engine port".
    var streamsOff: [String] = []
    var received = 0
    /// Lateness of what came back: per stream, arrival minus the time its RTP timestamp
    /// says, less the stream's smallest such value; p99 and max over every packet, ms.
    var lateP99Ms = 0.0
    var lateMaxMs = 0.0
    /// How late the generator itself sent (against its 20 ms schedule), ms.
    var sendLateP99Ms = 0.0
    var sendLateMaxMs = 0.0
    /// Delay probe (call 0): added one-way delay of each burst, ms.
    var trunkToPlatformMs: [Double] = []
    var platformToTrunkMs: [Double] = []
    /// TOC configuration numbers of the platform Opus the generator sends (28-31 and 14-15 are fullband).
    var platformOpusConfigs: [Int] = []
    var platformOpusBytes = 0.0
    /// The same of the Opus the engine sent back on the platform legs in the window (transcode):
    /// the band its encoder coded, its mean payload size.
    var engineOpusConfigs: [Int] = []
    var engineOpusBytes = 0.0
    /// The generator's I/O path (`uring` or `epoll`, GeneratorIO), and why not io_uring when
    /// it was wanted and the kernel refused it.
    var generatorIO = ""
    var generatorIOFallback: String?
    /// What the engine counted for the step's calls (irisgw's media server: concealed frames,
    /// late packets, received, sent; over the whole step), filled in by the bench.
    var engineCounters = ""
}

/// A histogram of milliseconds in 0.1 ms buckets up to 5 s.
struct MillisecondHistogram {
    var counts = [Int](repeating: 0, count: 50_001)
    var total = 0
    var maximum = 0.0

    mutating func add(_ ms: Double) {
        counts[min(max(Int(ms * 10), 0), counts.count - 1)] += 1
        total += 1
        maximum = max(maximum, ms)
    }

    func percentile(_ p: Double) -> Double {
        guard total > 0 else { return 0 }
        let target = max(1, Int((Double(total) * p).rounded(.up)))
        var seen = 0
        for (i, n) in counts.enumerated() {
            seen += n
            if seen >= target { return Double(i) / 10 }
        }
        return maximum
    }
}

/// The load generator (`irisgw-bench media-gen`), one process the bench pins to CPU 1 with
/// `taskset`, the same for irisgw and rtpengine. It binds one UDP socket per leg of each call,
/// prints their ports (`ports T,P T,P ...`), reads where to send (`targets T,P,PT ...`: the
/// engine's trunk port, platform port and the platform payload type), then sends one packet per
/// leg per 20 ms (the calls spread over twenty 1 ms slots) for `warmup + seconds`, reads what
/// the engine sends back with the kernel's receive timestamps (SO_TIMESTAMPNS, so the
/// generator's own scheduling does not count as the engine's lateness), and prints
/// `result <json>` (GeneratorReport). Its sends and receives go through io_uring when the
/// kernel allows (`GeneratorIO`; `--io automatic|uring|epoll`, default from the environment's
/// `IRISGW_BENCH_GEN_IO`, else automatic).
enum MediaLoadGenerator {
    struct Options {
        var calls = 1
        var mode = LoadMode.transcode
        var warmup = 1.0
        var seconds = 4.0
        var probe = false
        var enginePID: Int32 = 0
        var io =
            ProcessInfo.processInfo.environment["IRISGW_BENCH_GEN_IO"].flatMap { GeneratorIO.Preference(rawValue: $0) }
            ?? .automatic
    }

    static func main(_ args: [String]) throws {
        var o = Options()
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "--calls": o.calls = it.next().flatMap { Int($0) } ?? o.calls
            case "--mode": o.mode = it.next().flatMap { LoadMode(rawValue: $0) } ?? o.mode
            case "--warmup": o.warmup = it.next().flatMap { Double($0) } ?? o.warmup
            case "--seconds": o.seconds = it.next().flatMap { Double($0) } ?? o.seconds
            case "--probe": o.probe = true
            case "--engine-pid": o.enginePID = it.next().flatMap { Int32($0) } ?? 0
            case "--io":
                guard let io = it.next().flatMap({ GeneratorIO.Preference(rawValue: $0) }) else {
                    throw GeneratorError("media-gen: --io automatic|uring|epoll")
                }
                o.io = io
            default: throw GeneratorError("media-gen: unknown argument \(a)")
            }
        }
        let generator = try MediaLoadGenerator.Run(o)
        print("ports " + generator.localPorts.map { "\($0.0),\($0.1)" }.joined(separator: " "))
        fflush(nil)
        guard let line = readLine(), line.hasPrefix("targets ") else { throw GeneratorError("media-gen: no targets") }
        let targets = line.split(separator: " ").dropFirst().map { $0.split(separator: ",").compactMap { Int($0) } }
        guard targets.count == o.calls, targets.allSatisfy({ $0.count == 3 }) else {
            throw GeneratorError("media-gen: \(targets.count) targets for \(o.calls) calls")
        }
        let report = try generator.run(
            targets: targets.map { (trunk: $0[0], platform: $0[1], payloadType: UInt8(truncatingIfNeeded: $0[2])) })
        let json = try JSONEncoder().encode(report)
        print("result " + String(decoding: json, as: UTF8.self))
        fflush(nil)
    }

    struct GeneratorError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// One receiving stream: what one generator socket gets back from the engine.
    final class Stream {
        var expectedSourcePort: UInt16 = 0
        var clockRate = 8000.0
        var ssrc: UInt32 = 0
        var started = false
        var lastTimestamp: UInt32 = 0
        var extendedTimestamp: Int64 = 0
        var lastArrival = 0.0
        /// arrival - RTP time, less the first packet's, for the window's packets of the current segment.
        var base = 0.0
        var delays: [Float] = []
        var receivedInWindow = 0
        var sentInWindow = 0
    }

    final class Run {
        let o: Options
        let sockets: [UDPSocket]  // 2i: trunk leg of call i, 2i+1: platform leg
        var localPorts: [(Int, Int)] {
            (0..<o.calls).map { (sockets[2 * $0].local.port, sockets[2 * $0 + 1].local.port) }
        }
        let payloads: GeneratorPayloads

        init(_ o: Options) throws {
            self.o = o
            var s: [UDPSocket] = []
            for _ in 0..<(2 * o.calls) {
                let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 1 << 18)
                var on: Int32 = 1
                setsockopt(socket.fd, SOL_SOCKET, 35 /* SO_TIMESTAMPNS */, &on, socklen_t(MemoryLayout<Int32>.size))
                s.append(socket)
            }
            sockets = s
            payloads = try GeneratorPayloads.make()
        }

        static func realNow() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }

        /// Seconds all threads of `pid` spent runnable but waiting for a CPU.
        static func runQueueWait(_ pid: Int32) -> Double {
            GatewayProbe.threadTimes(pid).reduce(0) { $0 + $1.runQueueWait }
        }

        static func processCPU() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }

        func run(targets: [(trunk: Int, platform: Int, payloadType: UInt8)]) throws -> GeneratorReport {
            let n = o.calls
            let transcode = o.mode == .transcode
            // Where each socket sends, and from where its packets must come.
            var destinations = [RawSocketAddress](repeating: RawSocketAddress(), count: 2 * n)
            let streams = (0..<(2 * n)).map { _ in Stream() }
            for i in 0..<n {
                for leg in 0..<2 {
                    let port = leg == 0 ? targets[i].trunk : targets[i].platform
                    destinations[2 * i + leg] =
                        RawSocketAddress(SocketAddress(host: "127.0.0.1", port: port)) ?? .init()
                    streams[2 * i + leg].expectedSourcePort = UInt16(port)
                    // The trunk socket gets PCMU; the platform socket Opus (48 kHz clock) or PCMU.
                    streams[2 * i + leg].clockRate = leg == 1 && transcode ? 48_000 : 8000
                }
            }
            let io = try GeneratorIO(sockets: sockets, preference: o.io)
            // Calls by 1 ms slot: call i sends in slot i % 20 of every 20 ms.
            let slots = (0..<20).map { s in Array(stride(from: s, to: n, by: 20)) }
            let tx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { tx.deallocate() }

            // The probe call's record: send times of its packets, and what came back.
            var probeSendTimes: [[Double]] = [[], []]  // by leg sent on
            var probeReceived: [[(seq: Int64, arrival: Double, payload: [UInt8])]] = [[], []]  // by leg received on
            var probeLastSeq: [UInt16] = [0, 0]
            var probeExtSeq: [Int64] = [-1, -1]
            var probeQueued: [Int] = []  // legs whose probe packet waits on the ring

            var late = MillisecondHistogram(), sendLate = MillisecondHistogram()
            let start = Self.realNow() + 0.05
            let windowStart = start + o.warmup, windowEnd = windowStart + o.seconds
            let stopReceiving = windowEnd + 0.3
            var slot = 0  // global slot: packet slot / 20 of slot slot % 20
            var engineCPU0 = 0.0, genCPU0 = 0.0, engineCPU = 0.0, genCPU = 0.0, engineWait0 = 0.0, engineWait = 0.0,
                idle = 0.0
            var inWindow = false, windowDone = false
            // The TOC configurations (a bit each) and payload bytes of the engine's Opus.
            var engineConfigs: UInt32 = 0, engineOpusBytes = 0, engineOpusPackets = 0
            let ssrcBase = UInt32.random(in: 0...0x7fff_ffff)

            func flush(_ st: Stream) {
                guard let m = st.delays.min() else { return }
                for d in st.delays { late.add(Double(d - m) * 1000) }
                st.delays.removeAll(keepingCapacity: true)
            }

            /// A datagram that came back on socket `j`: counted and timed against its stream.
            func received(_ j: Int, _ rx: UnsafeRawBufferPointer, _ sourcePort: UInt16, _ arrival: Double) {
                guard rx.count >= 12 else { return }
                // RTP from the engine's port for this leg only (its RTCP comes from port + 1).
                guard sourcePort == streams[j].expectedSourcePort, rx[0] >> 6 == 2
                else { return }
                let pt = rx[1] & 0x7f
                guard !(72...95).contains(pt) else { return }
                let seq = UInt16(rx[2]) << 8 | UInt16(rx[3])
                let ts = UInt32(bigEndian: rx.load(fromByteOffset: 4, as: UInt32.self))
                let ssrc = UInt32(bigEndian: rx.load(fromByteOffset: 8, as: UInt32.self))
                let call = j / 2, leg = j % 2
                if o.probe && call == 0 {
                    if probeExtSeq[leg] < 0 {
                        probeExtSeq[leg] = Int64(seq)
                    } else {
                        probeExtSeq[leg] += Int64(Int16(bitPattern: seq &- probeLastSeq[leg]))
                    }
                    probeLastSeq[leg] = seq
                    probeReceived[leg].append(
                        (probeExtSeq[leg], arrival, Array(UnsafeRawBufferPointer(rebasing: rx[12...]))))
                }
                guard arrival >= windowStart && arrival < windowEnd else { return }
                let st = streams[j]
                st.receivedInWindow += 1
                if transcode && leg == 1 && rx.count > 12 {
                    engineConfigs |= 1 << UInt32(rx[12] >> 3)
                    engineOpusBytes += rx.count - 12
                    engineOpusPackets += 1
                }
                if !st.started || st.ssrc != ssrc {
                    flush(st)
                    st.started = true
                    st.ssrc = ssrc
                    st.extendedTimestamp = 0
                    st.base = arrival
                } else {
                    let step = Int64(Int32(bitPattern: ts &- st.lastTimestamp))
                    // A timeline jump (not lateness): start a new segment.
                    if abs(Double(step) / st.clockRate - (arrival - st.lastArrival)) > 1.0 {
                        flush(st)
                        st.extendedTimestamp = 0
                        st.base = arrival
                    } else {
                        st.extendedTimestamp += step
                    }
                }
                st.lastTimestamp = ts
                st.lastArrival = arrival
                st.delays.append(Float(arrival - st.base - Double(st.extendedTimestamp) / st.clockRate))
            }

            var now = Self.realNow()
            while now < stopReceiving {
                // Send what is due: one slot per turn, so a generator that fell behind still
                // reads what came back between its catch-up slots.
                if now < windowEnd, start + Double(slot) * 0.001 <= now {
                    let k = slot / 20, s = slot % 20
                    let scheduled = start + Double(slot) * 0.001
                    if scheduled >= windowStart && scheduled < windowEnd { sendLate.add((now - scheduled) * 1000) }
                    let counting = now >= windowStart && now < windowEnd
                    for i in slots[s] where targets[i].trunk != 0 {
                        let probing = o.probe && i == 0
                        for leg in 0..<2 {
                            let opusLeg = leg == 1 && transcode
                            let payload: [UInt8]
                            if probing {
                                payload =
                                    opusLeg
                                    ? payloads.probeOpus[k % GeneratorPayloads.probeFrames]
                                    : payloads.probePCMU[k % GeneratorPayloads.probeFrames]
                            } else {
                                payload =
                                    opusLeg
                                    ? payloads.opus[k % GeneratorPayloads.frames]
                                    : payloads.pcmu[k % GeneratorPayloads.frames]
                            }
                            let pt = leg == 1 ? targets[i].payloadType : 0
                            let ts = UInt32(truncatingIfNeeded: k) &* (opusLeg ? 960 : 160)
                            let ssrc = ssrcBase &+ UInt32(2 * i + leg)
                            let length = 12 + payload.count
                            tx[0] = 0x80
                            tx[1] = pt
                            tx[2] = UInt8(truncatingIfNeeded: k >> 8)
                            tx[3] = UInt8(truncatingIfNeeded: k)
                            tx.storeBytes(of: ts.bigEndian, toByteOffset: 4, as: UInt32.self)
                            tx.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
                            payload.withUnsafeBytes {
                                tx.baseAddress!.advanced(by: 12).copyMemory(
                                    from: $0.baseAddress!, byteCount: payload.count)
                            }
                            let j = 2 * i + leg
                            io.send(UnsafeRawBufferPointer(rebasing: tx[0..<length]), on: j, to: destinations[j])
                            if counting { streams[j].sentInWindow += 1 }
                            if probing {
                                probeSendTimes[leg].append(Self.realNow())
                                probeQueued.append(leg)
                            }
                        }
                    }
                    slot += 1
                    now = Self.realNow()
                }
                if !inWindow && now >= windowStart {
                    inWindow = true
                    engineCPU0 = GatewayProbe.cpuSeconds(o.enginePID)
                    engineWait0 = Self.runQueueWait(o.enginePID)
                    genCPU0 = Self.processCPU()
                }
                if inWindow && !windowDone && now >= windowEnd {
                    windowDone = true
                    engineCPU = GatewayProbe.cpuSeconds(o.enginePID) - engineCPU0
                    engineWait = Self.runQueueWait(o.enginePID) - engineWait0
                    genCPU = Self.processCPU() - genCPU0
                }
                // Then what came back. The generator polls without sleeping (it has its CPU to
                // itself): a sleeping receiver would make every engine send pay for waking it
                // (an IPI, dear in a VM), which no peer across a network costs an engine.
                // A probe packet queued on the ring leaves with this poll's submit: its send time.
                if io.path == "uring", !probeQueued.isEmpty {
                    let t = Self.realNow()
                    for leg in probeQueued { probeSendTimes[leg][probeSendTimes[leg].count - 1] = t }
                }
                probeQueued.removeAll(keepingCapacity: true)
                if io.poll(received) == 0 {
                    let t = Self.realNow()
                    if inWindow && !windowDone { idle += t - now }
                    now = t
                    continue
                }
                now = Self.realNow()
            }

            var report = GeneratorReport()
            report.calls = n
            report.generatorIO = io.path
            report.generatorIOFallback = io.uringUnavailable
            report.mode = o.mode
            report.seconds = o.seconds
            report.engineCPU = engineCPU
            report.generatorCPU = genCPU
            report.generatorBusy = max(0, o.seconds - idle)
            report.engineWait = engineWait
            var worst = 0.0
            report.admitted = targets.filter { $0.trunk != 0 }.count
            for j in 0..<(2 * n) where targets[j / 2].trunk != 0 {
                flush(streams[j])
                // What leg j received came in on the other leg of the same call.
                let sent = streams[j ^ 1].sentInWindow, got = streams[j].receivedInWindow
                report.received += got
                report.sentPerStream = max(report.sentPerStream, sent)
                let tolerance = max(1.0, 0.01 * Double(sent)) + 1
                if abs(Double(sent - got)) > tolerance {
                    report.streamsOutOfTolerance += 1
                    if report.streamsOff.count < 4 {
                        report.streamsOff.append(
                            "\(j / 2)/\(j % 2 == 0 ? "trunk" : "platform"):\(sent)/\(got)@\(sockets[j].local.port)>\(streams[j].expectedSourcePort)"
                        )
                    }
                }
                let pct = sent > 0 ? Double(sent - got) / Double(sent) * 100 : 0
                if abs(pct) > abs(worst) { worst = pct }
            }
            report.worstLossPercent = worst
            report.lateP99Ms = late.percentile(0.99)
            report.lateMaxMs = late.maximum
            report.sendLateP99Ms = sendLate.percentile(0.99)
            report.sendLateMaxMs = sendLate.maximum
            report.platformOpusConfigs = Array(Set(payloads.opus.compactMap { $0.first.map { Int($0 >> 3) } })).sorted()
            report.platformOpusBytes = Double(payloads.opus.reduce(0) { $0 + $1.count }) / Double(payloads.opus.count)
            report.engineOpusConfigs = (0..<32).filter { engineConfigs & (1 << UInt32($0)) != 0 }
            report.engineOpusBytes = engineOpusPackets > 0 ? Double(engineOpusBytes) / Double(engineOpusPackets) : 0
            if o.probe {
                // trunk -> platform: sent on the trunk leg (PCMU), came back on the platform leg.
                report.trunkToPlatformMs = delays(
                    from: windowStart, sent: probeSendTimes[0], onsets: payloads.probePCMUOnsets, rate: 8000,
                    received: probeReceived[1], opus: transcode, receivedRate: transcode ? 48_000 : 8000)
                report.platformToTrunkMs = delays(
                    from: windowStart, sent: probeSendTimes[1],
                    onsets: transcode ? payloads.probeOpusOnsets : payloads.probePCMUOnsets,
                    rate: transcode ? 48_000 : 8000, received: probeReceived[0], opus: false, receivedRate: 8000)
            }
            return report
        }

        /// Added one-way delay of each probe burst, ms: (arrival of the packet holding the
        /// onset + the onset's offset in it) - (send time of the packet holding it in what was
        /// sent + its offset there), for the bursts sent from `from` on (after the warm-up).
        func delays(
            from: Double, sent: [Double], onsets: [(frame: Int, offset: Int)], rate: Int,
            received: [(seq: Int64, arrival: Double, payload: [UInt8])],
            opus: Bool, receivedRate: Int
        ) -> [Double] {
            var sentOnsets: [Double] = []
            for (k, t) in sent.enumerated() {
                for o in onsets where o.frame == k % GeneratorPayloads.probeFrames && t >= from {
                    sentOnsets.append(t + Double(o.offset) / Double(rate))
                }
            }
            // What came back, in sequence order, a gap concealed.
            var bySeq: [Int64: (Double, [UInt8])] = [:]
            for r in received where bySeq[r.seq] == nil { bySeq[r.seq] = (r.arrival, r.payload) }
            guard let first = bySeq.keys.min(), let last = bySeq.keys.max(), last - first < 100_000 else { return [] }
            var payloads: [[UInt8]?] = [], arrivals: [Double?] = []
            for s in first...last {
                payloads.append(bySeq[s]?.1)
                arrivals.append(bySeq[s]?.0)
            }
            let (pcm, starts) = ProbeAudio.decode(payloads, opus: opus)
            var receivedOnsets: [Double] = []
            for i in ProbeAudio.onsets(pcm, rate: receivedRate) {
                // The packet holding sample i.
                var lo = 0, hi = starts.count - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if starts[mid] <= i { lo = mid } else { hi = mid - 1 }
                }
                guard let arrival = arrivals[lo] else { continue }
                receivedOnsets.append(arrival + Double(i - starts[lo]) / Double(receivedRate))
            }
            var out: [Double] = []
            for s in sentOnsets {
                if let r = receivedOnsets.first(where: { $0 >= s - 0.005 && $0 < s + 0.25 }) {
                    out.append((r - s) * 1000)
                }
            }
            return out
        }
    }
}
