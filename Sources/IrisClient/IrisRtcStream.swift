import Foundation
import Media

/// The local audio of a session, as the Iris SDK's stream: what we send (a tone, a WAV
/// file or silence) and what we record. It owns the Opus RTP leg toward the gateway.
public final class IrisRtcStream: Sendable {
    public let leg: ClientMediaLeg

    /// `source` plays into the call; the leg binds on `host` (port from the OS).
    public init(source: AudioSource = .silence, host: String = "127.0.0.1") throws(IrisError) {
        do {
            leg = try ClientMediaLeg(host: host)
        } catch {
            throw .media("\(error)")
        }
        leg.source = source
    }

    /// A stream playing a WAV file (16-bit PCM; resampled to the leg's 48 kHz if needed).
    public convenience init(wavFile path: String, host: String = "127.0.0.1") throws(IrisError) {
        let wav: WAVFile
        do { wav = try WAVFile(contentsOf: path) } catch { throw .media("\(path): \(error)") }
        try self.init(source: .samples(Self.resample(wav.samples, from: wav.sampleRate, to: 48_000)), host: host)
    }

    /// Local mute: silence goes out (the gateway's `mute` does the same on its side).
    public func mute() { leg.muted = true }
    public func unmute() { leg.muted = false }

    /// Writes what was received so far to a 16-bit mono WAV file.
    public func record(to path: String) throws(IrisError) {
        do {
            try WAVFile(sampleRate: leg.sampleRate, samples: leg.recordedSamples()).write(to: path)
        } catch {
            throw .media("\(path): \(error)")
        }
    }

    /// Linear interpolation: enough for test signals and prompts.
    static func resample(_ pcm: [Int16], from: Int, to: Int) -> [Int16] {
        guard from != to, from > 0, !pcm.isEmpty else { return pcm }
        let count = pcm.count * to / from
        return (0..<count).map { i in
            let x = Double(i) * Double(from) / Double(to)
            let j = Int(x), f = x - Double(j)
            let a = Double(pcm[min(j, pcm.count - 1)]), b = Double(pcm[min(j + 1, pcm.count - 1)])
            return Int16(max(-32768, min(32767, a + (b - a) * f)))
        }
    }

    public func stop() { leg.stop() }
}
