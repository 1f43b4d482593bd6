import IrisAPI
import Media

// The platform leg's Opus settings (docs/media.md, "Opus settings"): the gateway-wide
// defaults (`GatewayConfiguration.opus`), a trunk profile's `media.opus` over them, and a
// create request's `opus` over both. Every value is checked by one rule whichever of the
// two it comes from, and merged by one rule (`AudioCodec.OpusSettings.applying`).

/// A value of an `opus` object (a profile's `media.opus`, a request's `opus`) that cannot
/// be used: the key inside the object and why.
public struct OpusOptionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var key: String
    public var message: String
    public var description: String { "\(key): \(message)" }

    static func bitrate(found: String) -> OpusOptionError {
        let r = AudioCodec.OpusSettings.bitrateRange
        return OpusOptionError(
            key: "bitrate", message: "must be from \(r.lowerBound) to \(r.upperBound) or \"auto\", found \(found)")
    }

    static func sampleRate(found: String) -> OpusOptionError {
        let rates = AudioCodec.OpusSettings.sampleRates.map(String.init).joined(separator: ", ")
        return OpusOptionError(key: "sampleRate", message: "must be one of \(rates) or \"auto\", found \(found)")
    }
}

extension AudioCodec.OpusOverrides {
    /// Checks every value `options` gives: complexity 0-10, bitrate 6000-510000 or "auto",
    /// expectedLoss 0-100, application and maxBandwidth by name, sampleRate one of
    /// `AudioCodec.OpusSettings.sampleRates` or "auto".
    public init(validating options: OpusOptions) throws(OpusOptionError) {
        func ranged(_ key: String, _ value: Int?, _ range: ClosedRange<Int32>) throws(OpusOptionError) -> Int32? {
            guard let value else { return nil }
            guard value >= Int(range.lowerBound), value <= Int(range.upperBound) else {
                throw OpusOptionError(
                    key: key, message: "must be from \(range.lowerBound) to \(range.upperBound), found \(value)")
            }
            return Int32(value)
        }
        func quoted(_ names: [String]) -> String { names.map { "\"\($0)\"" }.joined(separator: ", ") }
        self.init()
        complexity = try ranged("complexity", options.complexity, AudioCodec.OpusSettings.complexityRange)
        switch options.bitrate {
        case nil: bitrate = nil
        case .auto?: bitrate = .automatic
        case .bitsPerSecond(let n)?:
            let r = AudioCodec.OpusSettings.bitrateRange
            guard n >= Int(r.lowerBound), n <= Int(r.upperBound) else { throw .bitrate(found: String(n)) }
            bitrate = .fixed(Int32(n))
        }
        inbandFEC = options.fec
        expectedLossPercent = try ranged(
            "expectedLoss", options.expectedLoss, AudioCodec.OpusSettings.expectedLossRange)
        dtx = options.dtx
        if let name = options.application {
            guard let a = Opus.Application(rawValue: name) else {
                throw OpusOptionError(
                    key: "application",
                    message: "must be one of \(quoted(Opus.Application.allCases.map(\.rawValue))), found \"\(name)\"")
            }
            application = a
        }
        if let name = options.maxBandwidth {
            if name == "auto" {
                maxBandwidth = .automatic
            } else if let b = Opus.Bandwidth(rawValue: name) {
                maxBandwidth = .fixed(b)
            } else {
                throw OpusOptionError(
                    key: "maxBandwidth",
                    message:
                        "must be one of \(quoted(["auto"] + Opus.Bandwidth.allCases.map(\.rawValue))), found \"\(name)\""
                )
            }
        }
        switch options.sampleRate {
        case nil: sampleRate = nil
        case .auto?: sampleRate = .automatic
        case .hertz(let n)?:
            guard AudioCodec.OpusSettings.sampleRates.contains(n) else { throw .sampleRate(found: String(n)) }
            sampleRate = .fixed(n)
        }
    }
}

extension OpusOptions {
    /// Every key of `settings` as the snapshot shows it, for a call whose PCM runs at
    /// `sampleRate`: `sampleRate` is the rate the encoder runs at, `maxBandwidth` the band
    /// coded (the automatic one named, what the encoder's rate holds), `bitrate` a number or "auto".
    public init(effective settings: AudioCodec.OpusSettings, sampleRate: Int) {
        let encoderRate = settings.codecSampleRate(callSampleRate: sampleRate)
        self.init(
            complexity: Int(settings.complexity), bitrate: settings.bitrate.map { .bitsPerSecond(Int($0)) } ?? .auto,
            fec: settings.inbandFEC, expectedLoss: Int(settings.expectedLossPercent), dtx: settings.dtx,
            application: settings.application.rawValue,
            maxBandwidth: min(settings.maxBandwidth ?? .fullband, .automatic(sampleRate: encoderRate)).rawValue,
            sampleRate: .hertz(encoderRate))
    }
}

extension TrunkProfile.MediaSettings {
    /// The platform leg's Opus settings of a call on this trunk: `base` (the gateway-wide
    /// defaults), this profile's `opus` over it, then the session's own `session` over both.
    public func opusSettings(
        default base: AudioCodec.OpusSettings, session: AudioCodec.OpusOverrides? = nil
    ) -> AudioCodec.OpusSettings {
        base.applying(opus).applying(session)
    }
}

extension TrunkProfile.MediaSettings {
    /// What this trunk offers and accepts (`codecs`), with its Opus: the encoder from `base`
    /// (the gateway-wide defaults) and this profile's `opus`, our fmtp from `opusTrunk`.
    public func trunkCodecs(opus base: AudioCodec.OpusSettings) -> TrunkCodecs {
        TrunkCodecs(names: codecs.map(\.rawValue), opus: base.applying(opus), opusFormat: opusTrunk)
    }
}

extension Gateway {
    /// A create request's `opus`, checked: a bad value is 400 (-103) naming `opus.<key>`.
    public static func opusOverrides(_ options: OpusOptions?) throws(GatewayError) -> AudioCodec.OpusOverrides? {
        guard let options else { return nil }
        do throws(OpusOptionError) {
            return try AudioCodec.OpusOverrides(validating: options)
        } catch {
            throw .badRequest("opus.\(error.key): \(error.message)")
        }
    }

    /// The platform leg's Opus settings for a session through `profile` with the app's
    /// `request` (the create request's `opus`, nil for none).
    func opusSettings(_ profile: TrunkProfile, request: OpusOptions?) throws(GatewayError) -> AudioCodec.OpusSettings {
        profile.media.opusSettings(default: configuration.opus, session: try Self.opusOverrides(request))
    }

    /// The platform leg's Opus settings for joining the inbound session `roomId`: its trunk
    /// profile's. The gateway-wide defaults when there is no such session (`join` refuses
    /// it right after).
    func opusSettings(joining roomId: String) -> AudioCodec.OpusSettings {
        let profile = ua.loop.sync { [self] in sessions[roomId]?.profile }
        return profile?.media.opusSettings(default: configuration.opus) ?? configuration.opus
    }
}
