import Foundation
import Media

/// Decoding and onset detection for the delay probe.
enum ProbeAudio {
    /// Decodes consecutive payloads (nil: a lost one, concealed) to one PCM stream: PCMU at
    /// 8 kHz, Opus at 48 kHz (as a browser plays it). Returns the samples and where each
    /// payload's samples start.
    static func decode(_ payloads: [[UInt8]?], opus: Bool) -> (pcm: [Int16], starts: [Int]) {
        var pcm: [Int16] = [], starts: [Int] = []
        let decoder = opus ? try? OpusDecoder(sampleRate: 48_000, channels: 1) : nil
        var frame = [Int16](repeating: 0, count: 5760)
        for payload in payloads {
            starts.append(pcm.count)
            var n = 0
            frame.withUnsafeMutableBufferPointer { out in
                if opus {
                    if let payload, !payload.isEmpty {
                        n = payload.withUnsafeBufferPointer { (try? decoder?.decode($0, into: out)) ?? 0 }
                    } else {
                        n = (try? decoder?.decode(nil, frameSize: 960, into: out)) ?? 0
                    }
                } else if let payload {
                    n = payload.withUnsafeBufferPointer { G711.decodeULaw($0, into: out) }
                } else {
                    out.update(repeating: 0)
                    n = 160
                }
            }
            pcm += frame[0..<n]
        }
        return (pcm, starts)
    }

    static func decode(_ payloads: [[UInt8]], opus: Bool) -> [Int16] {
        decode(payloads.map { Optional($0) }, opus: opus).pcm
    }

    /// Samples where a tone burst starts: the first sample at or above a quarter of the
    /// burst's amplitude after at least 50 ms below a sixteenth of it.
    static func onsets(_ pcm: [Int16], rate: Int, threshold: Int = 3000) -> [Int] {
        var out: [Int] = []
        var quiet = 0, armed = false
        let needQuiet = rate / 20
        for (i, s) in pcm.enumerated() {
            let a = abs(Int(s))
            if armed {
                if a >= threshold {
                    out.append(i)
                    armed = false
                    quiet = 0
                }
            } else {
                quiet = a < threshold / 4 ? quiet + 1 : 0
                if quiet >= needQuiet { armed = true }
            }
        }
        return out
    }
}
