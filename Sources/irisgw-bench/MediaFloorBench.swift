import Foundation
import IOCore
import Media

/// The bare cost of one transcoded call's codec work per 20 ms (one Opus encode, one Opus
/// decode, one G.711 encode and one decode, 8 kHz, Opus complexity 5), in a tight loop on
/// one core: the floor the media engine is measured against.
/// A speech-like test signal at 8 kHz: two tones under a slow envelope, so Opus does real
/// work. The floor and the load generator use the same one.
func speechLikeSignal(frames: Int) -> [Int16] {
    (0..<(frames * 160)).map { i in
        let t = Double(i) / 8000
        return Int16(
            8000 * (0.5 + 0.5 * sin(2 * .pi * 3 * t)) * (sin(2 * .pi * 440 * t) + 0.5 * sin(2 * .pi * 1230 * t)))
    }
}

func cpuNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

enum MediaFloorBench {
    /// Full-duplex calls one core could transcode in real time: frames per second / 50.
    /// `calls` codec sets are used round-robin, as the engine keeps one set per call (their
    /// state does not all fit in cache; one hot set would flatter the floor).
    static func channelsPerCore(seconds: Double = 3, complexity: Int32 = 5, calls: Int = 1) throws -> Double {
        let trunks = try (0..<max(1, calls)).map { _ in try LegCodec(.pcmu, sampleRate: 8000) }
        let platforms = try (0..<max(1, calls)).map { _ in
            try LegCodec(.opus(.init(complexity: complexity)), sampleRate: 8000)
        }
        var which = 0
        let pcm = speechLikeSignal(frames: 50)
        var g711 = [UInt8](repeating: 0, count: 160)
        // The carrier's G.711 frames, encoded before timing starts.
        let ulaw: [UnsafeBufferPointer<UInt8>] = (0..<50).map { f in
            let out = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 160)
            pcm.withUnsafeBufferPointer {
                _ = trunks[0].encode(UnsafeBufferPointer(rebasing: $0[(f * 160)..<(f * 160 + 160)]), into: out)
            }
            return UnsafeBufferPointer(out)
        }
        defer { ulaw.forEach { $0.deallocate() } }
        var opus = [UInt8](repeating: 0, count: 1275)
        var decoded = [Int16](repeating: 0, count: 960)
        var frames = 0
        // Thread CPU time, not wall time: load from other processes does not count.
        let start = cpuNow()
        var elapsed = 0.0
        repeat {
            for f in 0..<50 {
                which = (which + 1) % trunks.count
                let trunk = trunks[which], platform = platforms[which]
                do {
                    g711.withUnsafeMutableBufferPointer { g in
                        opus.withUnsafeMutableBufferPointer { o in
                            decoded.withUnsafeMutableBufferPointer { d in
                                // trunk -> platform: G.711 decode, Opus encode
                                _ = trunk.decode(UnsafeBufferPointer(rebasing: ulaw[f][0..<160]), into: d)
                                let size = platform.encode(UnsafeBufferPointer(rebasing: d[0..<160]), into: o)
                                // platform -> trunk: Opus decode, G.711 encode
                                _ = platform.decode(UnsafeBufferPointer(rebasing: o[0..<size]), into: d)
                                _ = trunk.encode(UnsafeBufferPointer(rebasing: d[0..<160]), into: g)
                            }
                        }
                    }
                }
            }
            frames += 50
            elapsed = cpuNow() - start
        } while elapsed < seconds
        return Double(frames) / elapsed / 50
    }
}

/// The kernel's share of a call that no media engine on loopback can avoid: per call per
/// 20 ms, two RTP datagrams sent (PCMU 172 bytes, Opus 60) and two received, one socket per
/// leg, on 127.0.0.1. On loopback a send also pays for the receiver's side of the stack.
enum UDPFloorBench {
    /// CPU microseconds of this thread per call-frame (2 sends + 2 receives).
    static func microsecondsPerCallFrame(calls: Int = 100, seconds: Double = 1.5) throws -> Double {
        let host = SocketAddress(host: "127.0.0.1", port: 0)
        let senders = try (0..<(2 * calls)).map { _ in try UDPSocket(bind: host) }
        let receivers = try (0..<(2 * calls)).map { _ in try UDPSocket(bind: host, bufferBytes: 1 << 16) }
        let targets = receivers.compactMap { RawSocketAddress($0.local) }
        let tx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { tx.deallocate(); rx.deallocate() }
        tx.initializeMemory(as: UInt8.self, repeating: 0x55)
        var from = RawSocketAddress()
        var frames = 0
        let start = cpuNow()
        var elapsed = 0.0
        repeat {
            for i in 0..<senders.count {
                let size = i % 2 == 0 ? 172 : 60
                _ = senders[i].send(UnsafeRawBufferPointer(rebasing: tx[0..<size]), to: targets[i])
                _ = receivers[i].receive(into: rx, from: &from)
            }
            frames += calls
            elapsed = cpuNow() - start
        } while elapsed < seconds
        return elapsed / Double(frames) * 1e6
    }
}
