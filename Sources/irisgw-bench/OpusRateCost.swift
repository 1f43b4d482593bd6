import Foundation
import Glibc
import Media

/// `BENCH vs-rtpengine-fullband`: what rtpengine's Opus settings would cost irisgw's codecs.
/// rtpengine 10.5 transcodes PCMU to Opus through ffmpeg's libopus at 48 kHz (its Opus clock
/// rate, the only one it accepts), mono, complexity 10, 32 kb/s: it resamples the call's 8 kHz
/// audio up to 48 kHz, encodes with up to fullband allowed, and decodes the browser's Opus at
/// 48 kHz. irisgw's engine runs a PCMU call at 8 kHz: its encoder takes 8 kHz input (so
/// narrowband at most) and its decoder gives 8 kHz. The engine cannot run a G.711 call at
/// 48 kHz, so this measures the two codec paths alone, in this process's thread CPU time, on
/// the same audio (the generator's 8 kHz speech, upsampled for the 48 kHz path as rtpengine
/// does), and scales irisgw's complexity-10 knee by their ratio.
enum OpusRateCost {
    struct Result {
        /// Codec CPU per call-frame (decode one browser packet, encode one frame), µs.
        var narrowbandMicroseconds: Double
        var fullbandMicroseconds: Double
        /// The bandwidth the 48 kHz encoder actually coded (from its packets' TOC).
        var fullbandCoded: String
        var narrowbandCoded: String
        var ratio: Double { fullbandMicroseconds / narrowbandMicroseconds }
    }

    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// `frames` call-frames through each path, best of `rounds` (the least disturbed).
    static func measure(frames: Int = 1500, rounds: Int = 3) throws -> Result {
        let speech = GeneratorPayloads.speechLike(rate: 8000, frames: GeneratorPayloads.frames)
        // Linear interpolation to 48 kHz: content stays below 4 kHz, as rtpengine's is.
        let up = (0..<(speech.count * 6)).map { i -> Int16 in
            let a = Int(speech[i / 6]), b = Int(speech[min(i / 6 + 1, speech.count - 1)])
            return Int16(a + (b - a) * (i % 6) / 6)
        }
        let (_, browser) = try MediaBench.payloads()
        func run(rate: Int32, pcm: [Int16], bandwidth: Opus.Bandwidth?) throws -> (Double, String) {
            let encoder = try OpusEncoder(
                .init(
                    sampleRate: rate, channels: 1, application: .voip, complexity: 10, bitrate: 32_000,
                    maxBandwidth: bandwidth))
            let decoder = try OpusDecoder(sampleRate: rate, channels: 1)
            let perFrame = Int(rate) / 50
            var out = [Int16](repeating: 0, count: perFrame * 6)
            var packet = [UInt8](repeating: 0, count: Opus.maxPacketSize)
            var best = Double.infinity
            var coded: [String: Int] = [:]
            for _ in 0..<rounds {
                let start = threadCPU()
                for f in 0..<frames {
                    _ = try decoder.decode(browser[f % browser.count], into: &out)
                    let i = (f % GeneratorPayloads.frames) * perFrame
                    let n = try encoder.encode(Array(pcm[i..<(i + perFrame)]), into: &packet)
                    if n > 2, let b = Opus.Bandwidth.of(packet: packet) { coded[b.rawValue, default: 0] += 1 }
                }
                best = min(best, (threadCPU() - start) / Double(frames) * 1e6)
            }
            return (best, coded.max { $0.value < $1.value }?.key ?? "-")
        }
        let narrow = try run(rate: 8000, pcm: speech, bandwidth: nil)
        let full = try run(rate: 48_000, pcm: up, bandwidth: .fullband)
        return Result(
            narrowbandMicroseconds: narrow.0, fullbandMicroseconds: full.0, fullbandCoded: full.1,
            narrowbandCoded: narrow.1)
    }

    /// The line, from irisgw's complexity-10 knee and rtpengine's of the same run.
    static func line(c10Knee: Int, rtpengineKnee: Int) -> String {
        do {
            let r = try measure()
            let estimated = Int((Double(c10Knee) / r.ratio).rounded(.down))
            return
                "BENCH vs-rtpengine-fullband irisgw_codec_us_per_call_frame_8k=\(String(format: "%.1f", r.narrowbandMicroseconds)) "
                + "irisgw_codec_us_per_call_frame_48k=\(String(format: "%.1f", r.fullbandMicroseconds)) cost_ratio_48k=\(String(format: "%.2f", r.ratio)) "
                + "estimated_irisgw_transcode_knee_48k=\(estimated) rtpengine_transcode_knee=\(rtpengineKnee) "
                + "estimated_transcode_knee_ratio=\(RTPEngineBench.ratio(Double(estimated), Double(rtpengineKnee))) target_transcode_knee_ratio_min=1.5 "
                + "coded_8k=\(r.narrowbandCoded) coded_48k=\(r.fullbandCoded) "
                + "irisgw_opus=48kHz/mono/fullband/complexity10/32kbps rtpengine_opus=48kHz/mono/fullband/complexity10/32kbps"
        } catch {
            return BenchLine(name: "vs-rtpengine-fullband", skippedBecause: "\(error)").text
        }
    }
}
