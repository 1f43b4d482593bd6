import Foundation

/// `BENCH passthrough-opus`: N calls with Opus on both legs (passthrough: no decode, no
/// encode, payload types rewritten) against N G.711 relay calls (PCMU both legs), in the
/// same run on one media thread, alternated `rounds` times so drifting machine load hits
/// both alike. The aim (issue 26): an Opus passthrough call costs at most 1.2x a G.711 one.
enum OpusPassthroughBench {
    struct Result {
        var calls: Int
        /// Channels one core carries, over all rounds (total calls × wall / total CPU).
        var g711ChannelsPerCore: Double
        var opusChannelsPerCore: Double
        var opusLate: Int
        var g711Late: Int
        /// CPU of an Opus passthrough call over a G.711 relay call's.
        var ratio: Double { opusChannelsPerCore > 0 ? g711ChannelsPerCore / opusChannelsPerCore : .infinity }
        static let targetRatioMax = 1.2

        var line: String {
            "BENCH passthrough-opus calls=\(calls) opus_channels_per_core=\(String(format: "%.0f", opusChannelsPerCore)) g711_channels_per_core=\(String(format: "%.0f", g711ChannelsPerCore)) ratio=\(String(format: "%.2f", ratio)) target_ratio_max=\(Self.targetRatioMax) opus_late_frames=\(opusLate) g711_late_frames=\(g711Late) pass=\(ratio <= Self.targetRatioMax)"
        }
    }

    static func run(calls: Int = 200, rounds: Int = 3, seconds: Double = 4) throws -> Result {
        // The cost per call is the inverse of channels per core: sum it over rounds.
        var g711Cost = 0.0, opusCost = 0.0
        var g711Late = 0, opusLate = 0
        for _ in 0..<rounds {
            let g = try MediaBench.runStep(calls: calls, passthrough: true, seconds: seconds)
            let o = try MediaBench.runStep(calls: calls, passthrough: true, seconds: seconds, opusPassthrough: true)
            g711Cost += g.channelsPerCore > 0 ? 1 / g.channelsPerCore : 0
            opusCost += o.channelsPerCore > 0 ? 1 / o.channelsPerCore : 0
            g711Late += g.late
            opusLate += o.late
        }
        return Result(
            calls: calls, g711ChannelsPerCore: g711Cost > 0 ? Double(rounds) / g711Cost : 0,
            opusChannelsPerCore: opusCost > 0 ? Double(rounds) / opusCost : 0, opusLate: opusLate, g711Late: g711Late)
    }
}
