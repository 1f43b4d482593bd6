import Foundation
import Media

/// The bare cost of one transcoded call's codec work per 20 ms (one Opus encode, one Opus
/// decode, one G.711 encode and one decode, 8 kHz, Opus complexity 5), in a tight loop on
/// one core: the floor the media engine is measured against.
/// A speech-like test signal at 8 kHz: two tones under a slow envelope, so Opus does real
/// work. The floor and the load generator use the same one.
func speechLikeSignal(frames: Int) -> [Int16] {
    (0..<(frames * 160)).map { i in
        let t = Double(i) / 8000
        return Int16(8000 * (0.5 + 0.5 * sin(2 * .pi * 3 * t)) * (sin(2 * .pi * 440 * t) + 0.5 * sin(2 * .pi * 1230 * t)))
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
        let platforms = try (0..<max(1, calls)).map { _ in try LegCodec(.opus(.init(complexity: complexity)), sampleRate: 8000) }
        var which = 0
        let pcm = speechLikeSignal(frames: 50)
        var g711 = [UInt8](repeating: 0, count: 160)
        // The carrier's G.711 frames, encoded before timing starts.
        let ulaw: [UnsafeBufferPointer<UInt8>] = (0..<50).map { f in
            let out = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 160)
            pcm.withUnsafeBufferPointer { _ = trunks[0].encode(UnsafeBufferPointer(rebasing: $0[(f * 160)..<(f * 160 + 160)]), into: out) }
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
