import Foundation
import Glibc
import IOCore
import Media

/// `BENCH media-whole-process`: the media server's whole-process CPU per call per 20 ms frame
/// (`irisgw-bench media-server`, every thread, /proc/<pid>/stat) at `calls` transcoded calls
/// driven by the load generator, against the floor no engine can go under on this machine:
/// the same calls' codec work alone (one PCMU decoder + Opus encoder at 8 kHz complexity 5, and
/// one Opus decoder fed the generator's 48 kHz fullband 32 kb/s packets, decoding at 8 kHz, + PCMU
/// encoder per call, round robin in one thread), plus what the unavoidable socket calls cost
/// (per call-frame 2 recvfrom and 2 sendto of packets of these sizes, one socket per leg, on
/// loopback). Both floor parts are measured in this run, in CPU time, in a process of their
/// own pinned to the engine's CPU (`irisgw-bench whole-process-floor`).
enum WholeProcessFloorBench {
    struct Floor: Codable {
        var codecUs: Double
        var socketUs: Double
        var opusInBytes: Double
        var opusOutBytes: Double
    }

    /// The floor's codec part: CPU µs per call-frame.
    static func codecMicroseconds(
        calls n: Int, payloads: GeneratorPayloads, seconds: Double
    ) throws -> (us: Double, opusOutBytes: Double) {
        let trunks = try (0..<n).map { _ in try LegCodec(.pcmu, sampleRate: 8000) }
        let platforms = try (0..<n).map { _ in try LegCodec(.opus(.init(complexity: 5)), sampleRate: 8000) }
        func buffers(_ frames: [[UInt8]]) -> [UnsafeBufferPointer<UInt8>] {
            frames.map { f in
                let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: f.count)
                _ = b.initialize(from: f)
                return UnsafeBufferPointer(b)
            }
        }
        let pcmu = buffers(payloads.pcmu), opus = buffers(payloads.opus)
        let pcm = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
        let out = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1500)
        let g711 = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 160)
        defer {
            (pcmu + opus).forEach { $0.deallocate() }
            pcm.deallocate(); out.deallocate(); g711.deallocate()
        }
        var frames = 0, f = 0, outBytes = 0
        let start = cpuNow()
        var elapsed = 0.0
        repeat {
            // Frame by frame, every call in turn: each codec state sees its stream in order.
            for c in 0..<n {
                _ = trunks[c].decode(pcmu[f], into: pcm)
                outBytes += platforms[c].encode(UnsafeBufferPointer(rebasing: pcm[0..<160]), into: out)
                _ = platforms[c].decode(opus[f], into: pcm)
                _ = trunks[c].encode(UnsafeBufferPointer(rebasing: pcm[0..<160]), into: g711)
            }
            frames += n
            f = (f + 1) % pcmu.count
            elapsed = cpuNow() - start
        } while elapsed < seconds
        return (elapsed / Double(frames) * 1e6, Double(outBytes) / Double(frames))
    }

    /// The floor's socket part: CPU µs per call-frame of 2 recvfrom (PCMU 172 bytes, Opus in)
    /// and 2 sendto (PCMU 172 bytes, Opus out) on the engine side of `calls` calls. The packets
    /// the engine side receives are sent, and those it sends drained, outside the timed part
    /// (on loopback a send also delivers: the timed sends pay for the delivery, as an engine's do).
    static func socketMicroseconds(
        calls n: Int, inSizes: (Int, Int), outSizes: (Int, Int), seconds: Double
    ) throws -> Double {
        let host = SocketAddress(host: "127.0.0.1", port: 0)
        let engine = try (0..<(2 * n)).map { _ in try UDPSocket(bind: host) }
        let peers = try (0..<(2 * n)).map { _ in try UDPSocket(bind: host) }
        let toEngine = engine.compactMap { RawSocketAddress($0.local) }
        let toPeer = peers.compactMap { RawSocketAddress($0.local) }
        let tx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { tx.deallocate(); rx.deallocate() }
        tx.initializeMemory(as: UInt8.self, repeating: 0x55)
        var from = RawSocketAddress()
        var frames = 0
        var timed = 0.0
        repeat {
            for j in 0..<(2 * n) {
                _ = peers[j].send(
                    UnsafeRawBufferPointer(rebasing: tx[0..<(j % 2 == 0 ? inSizes.0 : inSizes.1)]), to: toEngine[j])
            }
            let t0 = cpuNow()
            for c in 0..<n {
                _ = engine[2 * c].receive(into: rx, from: &from)
                _ = engine[2 * c + 1].receive(into: rx, from: &from)
                _ = engine[2 * c].send(UnsafeRawBufferPointer(rebasing: tx[0..<outSizes.0]), to: toPeer[2 * c])
                _ = engine[2 * c + 1].send(UnsafeRawBufferPointer(rebasing: tx[0..<outSizes.1]), to: toPeer[2 * c + 1])
            }
            timed += cpuNow() - t0
            for p in peers { _ = p.receive(into: rx, from: &from) }
            frames += n
        } while timed < seconds
        return timed / Double(frames) * 1e6
    }

    /// `irisgw-bench whole-process-floor --calls N`: prints the floor as one JSON line.
    static func main(_ args: [String]) throws {
        var calls = 100
        if let i = args.firstIndex(of: "--calls"), i + 1 < args.count { calls = Int(args[i + 1]) ?? calls }
        let payloads = try GeneratorPayloads.make()
        let codec = try codecMicroseconds(calls: calls, payloads: payloads, seconds: 3)
        let opusIn = Double(payloads.opus.reduce(0) { $0 + $1.count }) / Double(payloads.opus.count)
        let socket = try socketMicroseconds(
            calls: calls, inSizes: (172, 12 + Int(opusIn.rounded())),
            outSizes: (172, 12 + Int(codec.opusOutBytes.rounded())), seconds: 1.5)
        let floor = Floor(codecUs: codec.us, socketUs: socket, opusInBytes: opusIn, opusOutBytes: codec.opusOutBytes)
        print(String(decoding: try JSONEncoder().encode(floor), as: UTF8.self))
        fflush(nil)
    }

    /// The floor in its own process, on the engine's CPU and at its priority (`LineChild.pinned`).
    static func measureFloor(calls: Int) throws -> Floor {
        let child = try LineChild(
            pinnedTo: 0, [RTPEngineBench.selfBinary, "whole-process-floor", "--calls", "\(calls)"],
            label: "whole-process-floor")
        defer { child.stop() }
        return try JSONDecoder().decode(Floor.self, from: Data(try child.readLine(timeout: 120).utf8))
    }

    static func run(calls asked: Int = 100, seconds: Double = 5) -> String {
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        do {
            let server = try IrisgwMediaServer(binary: RTPEngineBench.selfBinary, complexity: 5)
            defer { server.stop() }
            // The floor is taken before and after the engine's run and averaged, so a machine
            // whose speed drifts (a shared VM) weighs on both alike. At `asked` calls, or at
            // half as many when that step is not clean (the engine's CPU is saturated there and
            // its cost per call would read low).
            var calls = asked
            var before = try measureFloor(calls: calls)
            var r = try RTPEngineBench.step(server, .transcode, calls: calls, seconds: seconds)
            if !RTPEngineBench.Step(calls: calls, report: r).clean {
                calls /= 2
                before = try measureFloor(calls: calls)
                r = try RTPEngineBench.step(server, .transcode, calls: calls, seconds: seconds)
            }
            server.stop()
            let after = try measureFloor(calls: calls)
            let step = RTPEngineBench.Step(calls: calls, report: r)
            let engineUs = r.engineCPU / (Double(calls) * r.seconds * 50) * 1e6
            let codecUs = (before.codecUs + after.codecUs) / 2, socketUs = (before.socketUs + after.socketUs) / 2
            let floorUs = codecUs + socketUs
            return
                "BENCH media-whole-process calls=\(calls) engine_us_per_call_frame=\(f(engineUs)) floor_us_per_call_frame=\(f(floorUs)) "
                + "ratio=\(String(format: "%.2f", engineUs / floorUs)) target_ratio_max=1.15 pass=\(engineUs / floorUs < 1.15) "
                + "codec_us_per_call_frame=\(f(codecUs)) "
                + "socket_us_per_call_frame=\(f(socketUs)) engine_cpu_pct=\(f(step.cpuPercent)) clean=\(step.clean ? 1 : 0) "
                + "late_p99_ms=\(f(r.lateP99Ms)) opus_in_bytes=\(String(format: "%.0f", after.opusInBytes)) opus_out_bytes=\(String(format: "%.0f", after.opusOutBytes))"
        } catch {
            return
                "BENCH media-whole-process skipped=\"\(String(describing: error).replacingOccurrences(of: "\"", with: "'"))\""
        }
    }
}
