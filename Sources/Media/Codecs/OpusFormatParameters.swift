/// The `a=fmtp` parameters of an Opus payload type (RFC 7587 §6.1). Each side's fmtp says
/// what it prefers to *receive*: ours goes into our offers and answers (a trunk profile's
/// `media.opusTrunk`), the peer's is honoured when we encode toward it (`encoding(_:)`).
/// A parameter absent (nil) takes the RFC's default; one whose value is out of range or
/// not a number is read as absent (RFC 7587 §6.1 asks receivers to ignore what they do not
/// understand).
public struct OpusFormatParameters: Sendable, Equatable {
    /// `maxplaybackrate`: the widest audio the receiver will play, in Hz (8000-48000).
    public var maxPlaybackRate: Int?
    /// `sprop-maxcapturerate`: the widest audio the sender captures, in Hz (8000-48000).
    public var maxCaptureRate: Int?
    /// `maxaveragebitrate`: the highest average bit rate the receiver wants (6000-510000).
    public var maxAverageBitrate: Int?
    /// `stereo`: the receiver prefers stereo (default: mono).
    public var stereo: Bool?
    /// `sprop-stereo`: the sender may send stereo (default: no).
    public var spropStereo: Bool?
    /// `cbr`: the receiver prefers constant bit rate (default: variable).
    public var cbr: Bool?
    /// `useinbandfec`: the receiver can use in-band FEC, so the sender should send it
    /// (default: no).
    public var useInbandFEC: Bool?
    /// `usedtx`: the receiver prefers discontinuous transmission (default: no).
    public var useDTX: Bool?

    /// The values `maxplaybackrate` and `sprop-maxcapturerate` may take.
    public static let rateRange = 8_000...48_000
    /// The values `maxaveragebitrate` may take (RFC 7587 §6.1).
    public static let bitrateRange = 6_000...510_000

    public init(
        maxPlaybackRate: Int? = nil, maxCaptureRate: Int? = nil, maxAverageBitrate: Int? = nil, stereo: Bool? = nil,
        spropStereo: Bool? = nil, cbr: Bool? = nil, useInbandFEC: Bool? = nil, useDTX: Bool? = nil
    ) {
        self.maxPlaybackRate = maxPlaybackRate
        self.maxCaptureRate = maxCaptureRate
        self.maxAverageBitrate = maxAverageBitrate
        self.stereo = stereo
        self.spropStereo = spropStereo
        self.cbr = cbr
        self.useInbandFEC = useInbandFEC
        self.useDTX = useDTX
    }

    /// Reads an fmtp value without its payload type (`maxplaybackrate=16000;useinbandfec=1`);
    /// nil or empty gives every default. Names are case-insensitive, spaces around `;` and
    /// `=` are allowed, unknown names (`minptime`, `ptime`) are skipped.
    public init(fmtp: String?) {
        self.init()
        guard let fmtp else { return }
        for item in fmtp.split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard pair.count == 2 else { continue }
            let value = pair[1]
            func rate(_ range: ClosedRange<Int>) -> Int? { Int(value).flatMap { range.contains($0) ? $0 : nil } }
            let flag: Bool? = value == "1" ? true : value == "0" ? false : nil
            switch pair[0].lowercased() {
            case "maxplaybackrate": maxPlaybackRate = rate(Self.rateRange)
            case "sprop-maxcapturerate": maxCaptureRate = rate(Self.rateRange)
            case "maxaveragebitrate": maxAverageBitrate = rate(Self.bitrateRange)
            case "stereo": stereo = flag
            case "sprop-stereo": spropStereo = flag
            case "cbr": cbr = flag
            case "useinbandfec": useInbandFEC = flag
            case "usedtx": useDTX = flag
            default: continue
            }
        }
    }

    /// The fmtp value (without the payload type), parameters in RFC 7587's order; only the
    /// ones given. Empty when none is.
    public var fmtp: String {
        func bit(_ b: Bool) -> String { b ? "1" : "0" }
        let items: [(String, String?)] = [
            ("maxplaybackrate", maxPlaybackRate.map(String.init)),
            ("sprop-maxcapturerate", maxCaptureRate.map(String.init)),
            ("maxaveragebitrate", maxAverageBitrate.map(String.init)),
            ("stereo", stereo.map(bit)),
            ("sprop-stereo", spropStereo.map(bit)),
            ("cbr", cbr.map(bit)),
            ("useinbandfec", useInbandFEC.map(bit)),
            ("usedtx", useDTX.map(bit))
        ]
        return items.compactMap { name, value in value.map { "\(name)=\($0)" } }.joined(separator: ";")
    }

    /// `base` as we encode toward a receiver whose fmtp this is: its `maxplaybackrate` caps
    /// the band coded (and a fixed encoder rate), its `maxaveragebitrate` caps the bit rate
    /// (a fixed one in `base`, or takes the place of libopus's automatic one), FEC is sent only when it says
    /// `useinbandfec=1` and DTX used only when it says `usedtx=1` (both default to 0). We
    /// always send mono: `stereo=1` is a preference a sender may ignore (RFC 7587 §6.1).
    public func encoding(_ base: AudioCodec.OpusSettings) -> AudioCodec.OpusSettings {
        var s = base
        if let rate = maxPlaybackRate {
            s.maxBandwidth = min(base.maxBandwidth ?? .fullband, .automatic(sampleRate: rate))
            // An encoder rate above what the receiver plays would only cost CPU: the lowest
            // one that still holds its rate.
            if let wanted = base.sampleRate {
                let enough = AudioCodec.OpusSettings.sampleRates.first { $0 >= rate } ?? 48_000
                s.sampleRate = min(wanted, enough)
            }
        }
        if let cap = maxAverageBitrate {
            s.bitrate = Int32(min(Int(base.bitrate ?? Int32(cap)), cap))
        }
        s.inbandFEC = useInbandFEC ?? false
        s.dtx = useDTX ?? false
        return s
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
