import Foundation
import IrisAPI
import IrisClient

extension SuiteRunner {
    /// Performs an `audioQuality` step on the client leg: plays the reference (echo) or
    /// listens (carrier), waits up to `within` for the signal's first arrival, records
    /// `durationSec` from there, scores it, reads the trunk leg's loss and jitter over the
    /// stretch from the gateway, and judges. Returns the check and, when it failed, the
    /// step's failure message. The leg's source is what it was before when this returns.
    func measureAudio(
        _ q: AudioQualityStep, step: Int, leg: ClientMediaLeg, roomId: String?, codec: String?
    ) -> (check: AudioCheck, failure: String?) {
        let rate = leg.sampleRate
        let previous = leg.source
        defer { leg.source = previous }
        let stats = { () -> SessionSnapshot.LegStats? in roomId.flatMap { try? connection.snapshot(roomId: $0) }?.trunk
        }
        var reference: [Int16]?
        if q.mode == .echo {
            // Quiet first (up to 2 s), so the echo of what was playing is not taken for ours.
            leg.source = .silence
            leg.clearRecording()
            _ = poll(2) {
                let heard = leg.recordedSamples()
                return heard.count >= rate / 5
                    && AudioAnalyzer.dbfs(AudioAnalyzer.meanSquare(heard.suffix(rate / 10))) < AudioAnalyzer.silenceDbfs
            }
            let signal = AudioAnalyzer.multiTone(q.tones, seconds: q.durationSec, sampleRate: rate)
            reference = signal
            leg.clearRecording()
            leg.source = .samples(signal)
        } else {
            leg.clearRecording()
        }
        let before = stats()
        let packetsBefore = leg.receivedPackets()
        let length = reference?.count ?? Int(q.durationSec * Double(rate))

        // The first arrival of the signal.
        var scanned = 0
        var onset: Int?
        _ = poll(q.within) {
            let r = AudioAnalyzer.onset(leg.recordedSamples(), sampleRate: rate, tones: q.tones, from: scanned)
            scanned = r.scannedTo
            onset = r.index
            return onset != nil
        }
        guard let start = onset else {
            let heard = leg.recordedSamples()
            let score = AudioAnalyzer.score(heard, sampleRate: rate, tones: q.tones)
            let packets = leg.receivedPackets() - packetsBefore
            let within = q.within == q.within.rounded() ? String(Int(q.within)) : String(q.within)
            let tones = q.tones.map { String(Int($0)) }.joined(separator: "/")
            let message =
                switch (q.mode, q.tones.isEmpty) {
                case (.echo, _):
                    "one-way audio: none of our tones came back in \(within) s (\(packets) packets arrived)"
                case (.carrier, true): "no audio from the carrier in \(within) s (\(packets) packets arrived)"
                case (.carrier, false):
                    "audio from the carrier: none of the \(tones) Hz signal arrived in \(within) s (\(packets) packets arrived)"
                }
            let check = AudioCheck(step: step, mode: q.mode.rawValue, score: score, passed: false, failures: [message])
            return (check, message)
        }

        // The stretch: from the onset, `durationSec` (for the echo, the whole reference
        // after its delay), or what there is once that much more time has passed.
        _ = poll(q.durationSec + 2) { leg.recordedSamples().count >= start + length }
        let after = stats()
        let heard = leg.recordedSamples()
        let score: AudioScore
        if let reference {
            // The delay search reaches past the onset, however late it came.
            let onsetMs = start * 1000 / max(rate, 1)
            score = AudioAnalyzer.score(
                Array(heard.prefix(start + length + rate / 2)), sampleRate: rate, tones: q.tones,
                reference: reference, maxDelayMs: max(AudioAnalyzer.maxDelayMs, onsetMs + 500))
        } else {
            score = AudioAnalyzer.score(
                Array(heard[start..<min(heard.count, start + length)]), sampleRate: rate, tones: q.tones)
        }

        // The trunk leg over the stretch.
        var loss: Double?, jitter: Double?, mos: Double?
        if let after {
            let received = after.packetsReceived - (before?.packetsReceived ?? 0)
            let lost = max(0, after.packetsLost - (before?.packetsLost ?? 0))
            let expected = Double(received) + Double(lost)
            if expected > 0 { loss = AudioAnalyzer.round2(100 * Double(lost) / expected) }
            jitter = AudioAnalyzer.round2(after.jitterMs)
            // One way: half the measured echo round trip, else as the call's estimate.
            let oneWay =
                score.delayMs.map { Double($0) / 2 } ?? ((after.roundTripMs ?? 0) / 2 + after.jitterMs * 2 + 40)
            if let loss { mos = EModel.mos(codec: codec ?? "PCMU", lossPercent: loss, oneWayDelayMs: oneWay) }
        }
        let failures = AudioCheck.judge(
            score, mode: q.mode, lossPercent: loss, jitterMs: jitter, mos: mos, q.thresholds)
        let check = AudioCheck(
            step: step, mode: q.mode.rawValue, score: score, lossPercent: loss, jitterMs: jitter, mos: mos,
            passed: failures.isEmpty, failures: failures)
        return (check, failures.isEmpty ? nil : check.message)
    }

    /// Polls `condition` every 100 ms for up to `seconds`.
    private func poll(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }
}
