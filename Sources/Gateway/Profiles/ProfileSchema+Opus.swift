import Formats
import IrisAPI
import Media

/// `media.opus` (docs/sip-profiles.md): the platform leg's Opus settings for the trunk's
/// calls. The JSON5 types are checked here, the values by the rule a create request's
/// `opus` is checked by (`AudioCodec.OpusOverrides(validating:)`).
extension ProfileSchema {
    func opusOverrides(_ value: JSON5Value, at path: String) throws(ProfileError) -> AudioCodec.OpusOverrides {
        let o = try object(value, at: path, keys: OpusOptions.keys)
        func integer(_ key: String) throws(ProfileError) -> Int? {
            try o.optional(key) { (v, p) throws(ProfileError) in try int(v, at: p, in: Int.min...Int.max) }
        }
        func text(_ key: String) throws(ProfileError) -> String? {
            try o.optional(key) { (v, p) throws(ProfileError) in try string(v, at: p) }
        }
        func flag(_ key: String) throws(ProfileError) -> Bool? {
            try o.optional(key) { (v, p) throws(ProfileError) in try bool(v, at: p) }
        }
        var options = OpusOptions()
        options.complexity = try integer("complexity")
        options.bitrate = try o.optional("bitrate") { (v, p) throws(ProfileError) in
            switch v {
            case .string("auto"): return .auto
            case .string(let s): throw fail(p, OpusOptionError.bitrate(found: "\"\(s)\"").message)
            case .integer, .number: return .bitsPerSecond(try int(v, at: p, in: Int.min...Int.max))
            default: throw typeError(p, expected: "an integer or \"auto\"", found: v)
            }
        }
        options.fec = try flag("fec")
        options.expectedLoss = try integer("expectedLoss")
        options.dtx = try flag("dtx")
        options.application = try text("application")
        options.maxBandwidth = try text("maxBandwidth")
        options.sampleRate = try o.optional("sampleRate") { (v, p) throws(ProfileError) in
            switch v {
            case .string("auto"): return .auto
            case .string(let s): throw fail(p, OpusOptionError.sampleRate(found: "\"\(s)\"").message)
            case .integer, .number: return .hertz(try int(v, at: p, in: Int.min...Int.max))
            default: throw typeError(p, expected: "an integer or \"auto\"", found: v)
            }
        }
        do throws(OpusOptionError) {
            return try AudioCodec.OpusOverrides(validating: options)
        } catch {
            throw fail(path + "." + error.key, error.message)
        }
    }
}

/// `media.opusTrunk` (docs/sip-profiles.md): our `a=fmtp` for Opus on the trunk, what we
/// ask the carrier to send. A key not given keeps `TrunkProfile.MediaSettings.defaultOpusTrunk`'s value.
extension ProfileSchema {
    /// The keys of `media.opusTrunk`, in the order the documentation lists them.
    static let opusTrunkKeys = ["maxPlaybackRate", "stereo", "useInbandFEC", "maxAverageBitrate", "useDTX"]

    func opusTrunkFormat(_ value: JSON5Value, at path: String) throws(ProfileError) -> OpusFormatParameters {
        let o = try object(value, at: path, keys: Self.opusTrunkKeys)
        func flag(_ key: String) throws(ProfileError) -> Bool? {
            try o.optional(key) { (v, p) throws(ProfileError) in try bool(v, at: p) }
        }
        var f = TrunkProfile.MediaSettings.defaultOpusTrunk
        if let rate = try o.optional(
            "maxPlaybackRate",
            { (v, p) throws(ProfileError) in
                try int(v, at: p, in: OpusFormatParameters.rateRange)
            })
        {
            f.maxPlaybackRate = rate
            // What we capture is never wider than what we would play: the call's PCM.
            f.maxCaptureRate = min(rate, f.maxCaptureRate ?? rate)
        }
        if let stereo = try flag("stereo") { f.stereo = stereo }
        if let fec = try flag("useInbandFEC") { f.useInbandFEC = fec }
        if let dtx = try flag("useDTX") { f.useDTX = dtx }
        f.maxAverageBitrate = try o.optional("maxAverageBitrate") { (v, p) throws(ProfileError) in
            try int(v, at: p, in: OpusFormatParameters.bitrateRange)
        }
        return f
    }
}
