import Foundation
import Media

/// The frames the generator sends, made once before a run.
///
/// - Trunk legs: PCMU, 20 ms, the speech-like signal (`speechLikeSignal`).
/// - Platform legs (transcode): Opus as a browser sends it, 48 kHz fullband, 32 kb/s, mono,
///   20 ms: the same kind of signal at 48 kHz, encoded once by one encoder, 50 distinct frames
///   replayed in a loop.
/// - The delay probe (one call): silence with tone bursts, both sides, one 6 s cycle of 20
///   bursts; where each burst starts is found by decoding what was sent, so the generator's
///   own Opus lookahead is not counted against the engine.
struct GeneratorPayloads {
    static let frames = 50
    static let burstFrames = 15
    static let bursts = 20
    static let probeFrames = burstFrames * bursts

    var pcmu: [[UInt8]] = []
    var opus: [[UInt8]] = []
    var probePCMU: [[UInt8]] = []
    var probeOpus: [[UInt8]] = []
    /// Onsets in the decoded sent probe streams: (frame in the cycle, sample offset in it).
    var probePCMUOnsets: [(frame: Int, offset: Int)] = []
    var probeOpusOnsets: [(frame: Int, offset: Int)] = []

    /// The speech-like signal (two tones under a 3 Hz envelope) at `rate`; at 48 kHz with a
    /// microphone's hiss (white noise about 30 dB down) over the whole band, so the encoder
    /// sends fullband as a browser does with a real microphone.
    static func speechLike(rate: Int, frames: Int) -> [Int16] {
        var seed: UInt32 = 0x1234_5678
        return (0..<(frames * rate / 50)).map { i in
            let t = Double(i) / Double(rate)
            var v = 8000 * (0.5 + 0.5 * sin(2 * .pi * 3 * t)) * (sin(2 * .pi * 440 * t) + 0.5 * sin(2 * .pi * 1230 * t))
            if rate == 48_000 {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                v += Double(Int32(bitPattern: seed) >> 16) / 32_768 * 300
            }
            return Int16(max(-32_768, min(32_767, v)))
        }
    }

    /// One probe cycle at `rate`: each 300 ms holds 200 ms of silence, then a 1 kHz tone
    /// starting at full amplitude at a sample that moves within its 20 ms frame from burst
    /// to burst, to the end of the 300 ms.
    static func probeSignal(rate: Int) -> [Int16] {
        let perFrame = rate / 50, scale = rate / 8000
        var pcm = [Int16](repeating: 0, count: probeFrames * perFrame)
        for b in 0..<bursts {
            let onset = ((b * burstFrames + 10) * 160 + (37 * b + 11) % 160) * scale
            let end = (b + 1) * burstFrames * perFrame
            for n in onset..<end { pcm[n] = Int16(12_000 * cos(2 * .pi * 1000 * Double(n - onset) / Double(rate))) }
        }
        return pcm
    }

    /// A 48 kHz fullband Opus encoder at 32 kb/s, as a browser's.
    static func browserEncoder() throws -> OpusEncoder {
        try OpusEncoder(.init(sampleRate: 48_000, channels: 1, application: .voip, complexity: 10, bitrate: 32_000))
    }

    /// The platform legs' packets: `frames` of the 48 kHz speech-like signal through one browser
    /// encoder.
    static func browserOpus(frames: Int = frames) throws -> [[UInt8]] {
        let encoder = try browserEncoder()
        let speech48 = speechLike(rate: 48_000, frames: frames)
        var bytes: [UInt8] = []
        return try (0..<frames).map { f in
            _ = try encoder.encode(Array(speech48[(f * 960)..<(f * 960 + 960)]), into: &bytes)
            return bytes
        }
    }

    static func make() throws -> GeneratorPayloads {
        var p = GeneratorPayloads()
        var bytes: [UInt8] = []
        let speech8 = speechLike(rate: 8000, frames: frames)
        for f in 0..<frames {
            G711.encodeULaw(Array(speech8[(f * 160)..<(f * 160 + 160)]), into: &bytes)
            p.pcmu.append(bytes)
        }
        p.opus = try browserOpus()
        let probe8 = probeSignal(rate: 8000)
        for f in 0..<probeFrames {
            G711.encodeULaw(Array(probe8[(f * 160)..<(f * 160 + 160)]), into: &bytes)
            p.probePCMU.append(bytes)
        }
        let probeEncoder = try browserEncoder()
        let probe48 = probeSignal(rate: 48_000)
        for f in 0..<probeFrames {
            _ = try probeEncoder.encode(Array(probe48[(f * 960)..<(f * 960 + 960)]), into: &bytes)
            p.probeOpus.append(bytes)
        }
        // Where the bursts start in what the engine will decode.
        p.probePCMUOnsets = ProbeAudio.onsets(ProbeAudio.decode(p.probePCMU, opus: false), rate: 8000).map {
            ($0 / 160, $0 % 160)
        }
        p.probeOpusOnsets = ProbeAudio.onsets(ProbeAudio.decode(p.probeOpus, opus: true), rate: 48_000).map {
            ($0 / 960, $0 % 960)
        }
        return p
    }
}
