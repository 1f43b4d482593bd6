import Formats
import Media
import SIP

/// Recording and answering-machine detection on the trunk's calls (docs/sip-profiles.md,
/// "Recording" and "Answering-machine detection").
extension TrunkProfile {
    public struct Recording: Sendable, Equatable {
        /// Record every call on the trunk. Default false: a call is recorded when its
        /// `createWithTN`/`join` asks (`recording`) or `POST .../recording` starts it.
        public var always: Bool
        /// 2 (the carrier left, the app right; the default) or 1 (mixed).
        public var channels: Int
        /// Default `wav`.
        public var format: CallRecordingConfiguration.Format
        /// A SIPREC recording server (RFC 7866) each recorded call is also sent to, as a SIP
        /// URI. Default none.
        public var siprec: String?

        public init(
            always: Bool = false, channels: Int = 2, format: CallRecordingConfiguration.Format = .wav,
            siprec: String? = nil
        ) {
            self.always = always
            self.channels = channels
            self.format = format
            self.siprec = siprec
        }
    }
}

extension ProfileSchema {
    func recording(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.Recording {
        let o = try object(value, at: path, keys: ["always", "channels", "format", "siprec"])
        let d = TrunkProfile.Recording()
        return TrunkProfile.Recording(
            always: try o.optional("always") { (v, p) throws(ProfileError) in try bool(v, at: p) } ?? d.always,
            channels: try o.optional("channels") { (v, p) throws(ProfileError) in try int(v, at: p, in: 1...2) }
                ?? d.channels,
            format: try o.optional("format") { (v, p) throws(ProfileError) in
                try choice(v, at: p, CallRecordingConfiguration.Format.self)
            } ?? d.format,
            siprec: try o.optional("siprec") { (v, p) throws(ProfileError) -> String in
                let s = try string(v, at: p)
                guard s.hasPrefix("sip:") || s.hasPrefix("sips:"), (try? SIPURI.parse(s)) != nil else {
                    throw fail(p, "must be a sip: or sips: URI of the recording server, found \"\(s)\"")
                }
                return s
            })
    }

    /// `amd`: the detector's thresholds, in milliseconds of audio (Asterisk's amd.conf names).
    func amd(_ value: JSON5Value, at path: String) throws(ProfileError) -> AMDSettings {
        let o = try object(
            value, at: path,
            keys: [
                "initialSilenceMs", "greetingMs", "afterGreetingSilenceMs", "totalAnalysisTimeMs",
                "minimumWordLengthMs", "betweenWordsSilenceMs", "maximumNumberOfWords", "maximumWordLengthMs",
                "silenceThresholdDb", "detectFax", "beepTimeoutMs"
            ])
        var s = AMDSettings()
        func ms(_ key: String, _ range: ClosedRange<Int>, _ into: inout Int) throws(ProfileError) {
            if let v = try o.optional(key, { (v, p) throws(ProfileError) in try int(v, at: p, in: range) }) { into = v }
        }
        try ms("initialSilenceMs", 100...60_000, &s.initialSilence)
        try ms("greetingMs", 100...60_000, &s.greeting)
        try ms("afterGreetingSilenceMs", 20...10_000, &s.afterGreetingSilence)
        try ms("totalAnalysisTimeMs", 500...120_000, &s.totalAnalysisTime)
        try ms("minimumWordLengthMs", 20...5_000, &s.minimumWordLength)
        try ms("betweenWordsSilenceMs", 20...5_000, &s.betweenWordsSilence)
        try ms("maximumNumberOfWords", 1...100, &s.maximumNumberOfWords)
        try ms("maximumWordLengthMs", 100...60_000, &s.maximumWordLength)
        try ms("beepTimeoutMs", 1_000...120_000, &s.beepTimeout)
        if let db = try o.optional(
            "silenceThresholdDb", { (v, p) throws(ProfileError) in try int(v, at: p, in: -90...0) })
        {
            s.silenceThreshold = Double(db)
        }
        if let fax = try o.optional("detectFax", { (v, p) throws(ProfileError) in try bool(v, at: p) }) {
            s.detectFax = fax
        }
        return s
    }
}
