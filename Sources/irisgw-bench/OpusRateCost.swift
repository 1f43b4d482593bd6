import Foundation
import Glibc
import Media

/// The codecs of one transcoded call alone (no sockets, no engine), per call and 20 ms, in this
/// thread's CPU time: the engine's own `LegCodec` for the platform leg decoding the generator's
/// browser Opus (48 kHz fullband, 32 kb/s) at the call's 8 kHz and encoding the call's 8 kHz
/// speech, complexity 10, 32 kb/s, with the encoder at 8 kHz or at 48 kHz behind the upsampler
/// (`OpusSettings.sampleRate`); and the upsampler alone. Beside the measured knees of
/// `BENCH vs-rtpengine-fullband` it tells how much of the 48 kHz call's extra cost is the codec.
enum OpusRateCost {
    struct Result {
        /// µs per call-frame: decode one browser packet, encode one frame.
        var narrowbandMicroseconds: Double
        var fullbandMicroseconds: Double
        /// µs per 20 ms frame, 8 kHz to 48 kHz.
        var upsamplerMicroseconds: Double
        /// The band each encoder coded most (from its packets' TOC).
        var narrowbandCoded: String
        var fullbandCoded: String
        var ratio: Double { fullbandMicroseconds / narrowbandMicroseconds }
    }

    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// `frames` call-frames through each path, best of `rounds` (the least disturbed).
    static func measure(frames: Int = 1000, rounds: Int = 3) throws -> Result {
        let speech = GeneratorPayloads.speechLike(rate: 8000, frames: GeneratorPayloads.frames)
        let browser = try GeneratorPayloads.browserOpus()
        func best(_ body: () -> Void) -> Double {
            var best = Double.infinity
            for _ in 0..<rounds {
                let start = threadCPU()
                body()
                best = min(best, (threadCPU() - start) / Double(frames) * 1e6)
            }
            return best
        }
        func run(_ settings: AudioCodec.OpusSettings) throws -> (Double, String) {
            let codec = try LegCodec(.opus(settings), sampleRate: 8000)
            var pcm = [Int16](repeating: 0, count: 960)
            var packet = [UInt8](repeating: 0, count: Opus.maxPacketSize)
            var configs = [Int](repeating: 0, count: 32)  // by TOC configuration
            let micros = best {
                speech.withUnsafeBufferPointer { input in
                    pcm.withUnsafeMutableBufferPointer { out in
                        packet.withUnsafeMutableBufferPointer { payload in
                            for f in 0..<frames {
                                _ = browser[f % browser.count].withUnsafeBufferPointer { codec.decode($0, into: out) }
                                let i = (f % GeneratorPayloads.frames) * 160
                                let n = codec.encode(UnsafeBufferPointer(rebasing: input[i..<(i + 160)]), into: payload)
                                if n > 2 { configs[Int(payload[0] >> 3)] += 1 }
                            }
                        }
                    }
                }
            }
            let most = configs.indices.max { configs[$0] < configs[$1] }.map { UInt8($0 << 3) }
            return (micros, most.flatMap { Opus.Bandwidth.of(packet: [$0]) }?.rawValue ?? "-")
        }
        let narrow = try run(.init(complexity: 10, bitrate: 32_000))
        let full = try run(.init(complexity: 10, bitrate: 32_000, sampleRate: 48_000))
        let upsampler = try PolyphaseUpsampler(factor: 6, maximumInputCount: 160)
        var sink = 0
        let up = best {
            speech.withUnsafeBufferPointer { input in
                for f in 0..<frames {
                    let i = (f % GeneratorPayloads.frames) * 160
                    sink &+= Int(upsampler.upsample(UnsafeBufferPointer(rebasing: input[i..<(i + 160)]))[7])
                }
            }
        }
        _ = sink
        return Result(
            narrowbandMicroseconds: narrow.0, fullbandMicroseconds: full.0, upsamplerMicroseconds: up,
            narrowbandCoded: narrow.1, fullbandCoded: full.1)
    }
}
