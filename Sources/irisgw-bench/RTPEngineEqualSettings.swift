import Foundation
import Media

/// `BENCH vs-rtpengine-c10` and `BENCH vs-rtpengine-fullband`, the end of `BENCH vs-rtpengine`.
///
/// rtpengine 10.5 encodes Opus through FFmpeg's libopus at 48 kHz (the call's 8 kHz resampled
/// up), fullband allowed, complexity 10, 32 kb/s, and decodes the browser's Opus at 48 kHz.
/// irisgw's media server runs its platform encoder at the same settings (`--opus-rate 48000`:
/// the engine's upsampler in front of a 48 kHz encoder) for the c10 line, against rtpengine's
/// transcode knee of the same run; then once more at the call's 8 kHz with everything else
/// equal, so the fullband line shows what 48 kHz output costs irisgw, measured on the same
/// load. irisgw decodes the browser's Opus at the call's 8 kHz in both (libopus decodes to any
/// of its rates; the call runs at 8 kHz), which the lines say (`..._opus_decode=`).
enum RTPEngineEqualSettings {
    /// rtpengine's Opus, and irisgw's at its settings and at the call's rate.
    static let fullbandOpus = "48kHz-input/fullband/mono/complexity10/32kbps"
    static let narrowbandOpus = "8kHz-input/narrowband/mono/complexity10/32kbps"

    /// `kneeAt8k`: also the knee at the call's 8 kHz (`vs-rtpengine --full`); without it the
    /// fullband line sets the 48 kHz knee against the codecs' cost ratio alone, so the
    /// default set stays under 10 minutes.
    static func run(rtpengine: RTPEngineBench.Knee, schedule: [Int], kneeAt8k: Bool) throws -> [String] {
        let full = try knee(opusRate: 48_000, schedule: schedule, tag: "-c10-48k")
        // Its knee is about twice the 48 kHz one: the schedule's first step is left out (one
        // below the second is still found, the halving starting from 0).
        let narrow = kneeAt8k ? try knee(opusRate: nil, schedule: Array(schedule.dropFirst()), tag: "-c10-8k") : nil
        let ratio = RTPEngineBench.ratio
        func f(_ v: Double, _ d: Int) -> String { String(format: "%.\(d)f", v) }
        var lines = [
            "BENCH vs-rtpengine-c10 transcode_knee_ratio=\(ratio(Double(full.calls), Double(rtpengine.calls))) "
                + "irisgw_transcode_knee=\(full.calls) rtpengine_transcode_knee=\(rtpengine.calls) target_transcode_knee_ratio_min=1.5 "
                + "irisgw_cpu_pct_per_call=\(f(full.cpuPercentPerCall, 3)) rtpengine_cpu_pct_per_call=\(f(rtpengine.cpuPercentPerCall, 3)) "
                + "irisgw_opus=\(fullbandOpus) rtpengine_opus=\(fullbandOpus) irisgw_opus_decode=8kHz rtpengine_opus_decode=48kHz "
                + "irisgw_coded=\(bands(full)) rtpengine_coded=\(bands(rtpengine)) "
                + "irisgw_opus_bytes=\(f(opusBytes(full), 0)) rtpengine_opus_bytes=\(f(opusBytes(rtpengine), 0)) "
                + "irisgw_generator_bound=\(full.generatorBound ? 1 : 0)"
        ]
        // The codecs alone at both rates, for how much of the difference they make.
        let codecs: String
        do {
            let r = try OpusRateCost.measure()
            codecs =
                "codec_us_per_call_frame_8k=\(f(r.narrowbandMicroseconds, 1)) codec_us_per_call_frame_48k=\(f(r.fullbandMicroseconds, 1)) "
                + "codec_cost_ratio_48k=\(f(r.ratio, 2)) upsampler_us_per_frame=\(f(r.upsamplerMicroseconds, 1))"
        } catch {
            codecs = "codec_cost_ratio_48k=- codecs_error=\(BenchLine.quoted("\(error)"))"
        }
        guard let narrow else {
            lines.append(
                "BENCH vs-rtpengine-fullband irisgw_transcode_knee_48k=\(full.calls) irisgw_transcode_knee_8k=- "
                    + "irisgw_cpu_pct_per_call_48k=\(f(full.cpuPercentPerCall, 3)) \(codecs) coded_48k=\(bands(full)) "
                    + "irisgw_opus_48k=\(fullbandOpus) opus_decode=8kHz knee_at_8k=\"vs-rtpengine --full\" "
                    + "generator_bound=\(full.generatorBound ? 1 : 0)")
            return lines
        }
        lines.append(
            "BENCH vs-rtpengine-fullband irisgw_transcode_knee_48k=\(full.calls) irisgw_transcode_knee_8k=\(narrow.calls) "
                + "knee_ratio_8k_to_48k=\(ratio(Double(narrow.calls), Double(full.calls))) "
                + "irisgw_cpu_pct_per_call_48k=\(f(full.cpuPercentPerCall, 3)) irisgw_cpu_pct_per_call_8k=\(f(narrow.cpuPercentPerCall, 3)) "
                + "cost_ratio_48k=\(ratio(full.cpuPercentPerCall, narrow.cpuPercentPerCall)) \(codecs) "
                + "coded_48k=\(bands(full)) coded_8k=\(bands(narrow)) "
                + "irisgw_opus_48k=\(fullbandOpus) irisgw_opus_8k=\(narrowbandOpus) opus_decode=8kHz "
                + "generator_bound=\(full.generatorBound || narrow.generatorBound ? 1 : 0)")
        return lines
    }

    /// irisgw's transcode knee with its platform Opus at complexity 10, 32 kb/s, the encoder at
    /// `opusRate` (nil: the call's 8 kHz).
    static func knee(opusRate: Int?, schedule: [Int], tag: String) throws -> RTPEngineBench.Knee {
        let server = try IrisgwMediaServer(
            binary: RTPEngineBench.selfBinary, complexity: 10, bitrate: 32_000, opusRate: opusRate)
        defer { server.stop() }
        return try RTPEngineBench.knee(server, .transcode, schedule: schedule, tag: tag)
    }

    /// The bands an engine's Opus toward the platform coded over a knee's steps (from the TOC
    /// bytes the generator got), "+"-joined; "-" when none came.
    static func bands(_ k: RTPEngineBench.Knee) -> String {
        let configs = Set(k.steps.flatMap(\.report.engineOpusConfigs))
        let names = Set(configs.compactMap { Opus.Bandwidth.of(packet: [UInt8($0 << 3)]) }).sorted()
        return names.isEmpty ? "-" : names.map(\.rawValue).joined(separator: "+")
    }

    /// The mean payload of the engine's Opus at its knee step (bytes).
    static func opusBytes(_ k: RTPEngineBench.Knee) -> Double {
        k.steps.last { $0.calls == k.calls }?.report.engineOpusBytes ?? 0
    }
}
