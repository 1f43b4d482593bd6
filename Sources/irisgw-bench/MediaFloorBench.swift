import Foundation
import Media

/// The bare cost of one transcoded call's codec work per 20 ms (one Opus encode, one Opus
/// decode, one G.711 encode and one decode, 8 kHz, Opus complexity 5), in a tight loop on
/// one core: the floor the media engine is measured against.
enum MediaFloorBench {
    /// Full-duplex calls one core could transcode in real time: frames per second / 50.
    static func channelsPerCore(seconds: Double = 3, complexity: Int32 = 5) throws -> Double {
        let trunk = try LegCodec(.pcmu, sampleRate: 8000)
        let platform = try LegCodec(.opus(.init(complexity: complexity)), sampleRate: 8000)
        // A speech-like signal: two tones with a slow envelope, so Opus does real work.
        var pcm = [Int16](repeating: 0, count: 160 * 50)
        for i in pcm.indices {
            let t = Double(i) / 8000
            let envelope = 0.5 + 0.5 * sin(2 * .pi * 3 * t)
            pcm[i] = Int16(8000 * envelope * (sin(2 * .pi * 440 * t) + 0.5 * sin(2 * .pi * 1230 * t)))
        }
        var g711 = [UInt8](repeating: 0, count: 160)
        var opus = [UInt8](repeating: 0, count: 1275)
        var decoded = [Int16](repeating: 0, count: 960)
        var frames = 0
        let start = Date()
        var elapsed = 0.0
        repeat {
            for f in 0..<50 {
                pcm.withUnsafeBufferPointer { all in
                    let frame = UnsafeBufferPointer(rebasing: all[(f * 160)..<(f * 160 + 160)])
                    g711.withUnsafeMutableBufferPointer { g in
                        opus.withUnsafeMutableBufferPointer { o in
                            decoded.withUnsafeMutableBufferPointer { d in
                                // trunk -> platform: G.711 decode, Opus encode
                                let n = trunk.encode(frame, into: g)   // (the carrier's encode, counted in the floor)
                                _ = trunk.decode(UnsafeBufferPointer(rebasing: g[0..<n]), into: d)
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
            elapsed = Date().timeIntervalSince(start)
        } while elapsed < seconds
        return Double(frames) / elapsed / 50
    }
}
