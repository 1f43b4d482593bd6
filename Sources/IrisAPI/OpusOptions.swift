/// The platform leg's Opus encoder settings by the names of the API and the trunk profiles
/// (docs/api.md, docs/sip-profiles.md `media.opus`): a create request's `opus` (every key
/// optional: an absent key keeps the profile's value), and a snapshot's `opus` (every key
/// present: what the call uses). The gateway checks the values; decoding checks the keys
/// and the types only.
public struct OpusOptions: Codable, Sendable, Equatable {
    /// `bitrate`: a number of bits per second, or `"auto"` (libopus chooses).
    public enum Bitrate: Codable, Sendable, Equatable {
        case auto
        case bitsPerSecond(Int)

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) {
                self = .bitsPerSecond(n)
                return
            }
            if let d = try? c.decode(Double.self) {
                throw RequestFieldError.corrupted(
                    c.codingPath, "must be a whole number of bits per second or \"auto\", found \(d)")
            }
            guard let s = try? c.decode(String.self) else {
                throw DecodingError.typeMismatch(
                    Bitrate.self, .init(codingPath: c.codingPath, debugDescription: "a number or \"auto\""))
            }
            guard s == "auto" else {
                throw RequestFieldError.corrupted(
                    c.codingPath, "must be a number of bits per second or \"auto\", found \"\(s)\"")
            }
            self = .auto
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .auto: try c.encode("auto")
            case .bitsPerSecond(let n): try c.encode(n)
            }
        }
    }

    /// `sampleRate`: a number of hertz, or `"auto"` (the call's rate).
    public enum SampleRate: Codable, Sendable, Equatable {
        case auto
        case hertz(Int)

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(Int.self) {
                self = .hertz(n)
                return
            }
            if let d = try? c.decode(Double.self) {
                throw RequestFieldError.corrupted(
                    c.codingPath, "must be a whole number of hertz or \"auto\", found \(d)")
            }
            guard let s = try? c.decode(String.self) else {
                throw DecodingError.typeMismatch(
                    SampleRate.self, .init(codingPath: c.codingPath, debugDescription: "a number or \"auto\""))
            }
            guard s == "auto" else {
                throw RequestFieldError.corrupted(c.codingPath, "must be a number of hertz or \"auto\", found \"\(s)\"")
            }
            self = .auto
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .auto: try c.encode("auto")
            case .hertz(let n): try c.encode(n)
            }
        }
    }

    /// 0-10: the main CPU knob.
    public var complexity: Int?
    /// 6000-510000 bits per second, or `"auto"`.
    public var bitrate: Bitrate?
    /// In-band forward error correction.
    public var fec: Bool?
    /// The packet loss (0-100 %) the encoder prepares for.
    public var expectedLoss: Int?
    /// Discontinuous transmission during silence.
    public var dtx: Bool?
    /// `"voip"`, `"audio"` or `"restricted-lowdelay"`.
    public var application: String?
    /// `"auto"`, `"narrowband"`, `"mediumband"`, `"wideband"`, `"superwideband"` or `"fullband"`.
    public var maxBandwidth: String?
    /// The rate the encoder runs at: 8000, 16000, 24000, 48000 or `"auto"` (the call's).
    public var sampleRate: SampleRate?

    /// The keys, in the order the documentation lists them.
    public static let keys = [
        "complexity", "bitrate", "fec", "expectedLoss", "dtx", "application", "maxBandwidth", "sampleRate"
    ]

    public init(
        complexity: Int? = nil, bitrate: Bitrate? = nil, fec: Bool? = nil, expectedLoss: Int? = nil, dtx: Bool? = nil,
        application: String? = nil, maxBandwidth: String? = nil, sampleRate: SampleRate? = nil
    ) {
        self.complexity = complexity
        self.bitrate = bitrate
        self.fec = fec
        self.expectedLoss = expectedLoss
        self.dtx = dtx
        self.application = application
        self.maxBandwidth = maxBandwidth
        self.sampleRate = sampleRate
    }

    private enum CodingKeys: String, CodingKey {
        case complexity, bitrate, fec, expectedLoss, dtx, application, maxBandwidth, sampleRate
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Refuses a key it does not know: a misspelt setting would otherwise be dropped unseen.
    public init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = all.allKeys.first(where: { CodingKeys(rawValue: $0.stringValue) == nil }) {
            throw RequestFieldError.corrupted(
                all.codingPath + [unknown],
                "unknown key (allowed: \(Self.keys.joined(separator: ", ")))")
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        /// An integer; a number with a fraction is named as such (the decoder's own error
        /// for it carries no key path).
        func integer(_ key: CodingKeys) throws -> Int? {
            if try !c.contains(key) || c.decodeNil(forKey: key) { return nil }
            if let n = try? c.decode(Int.self, forKey: key) { return n }
            if let d = try? c.decode(Double.self, forKey: key) {
                throw RequestFieldError.corrupted(c.codingPath + [key], "must be an integer, found \(d)")
            }
            return try c.decode(Int.self, forKey: key)
        }
        complexity = try integer(.complexity)
        bitrate = try c.decodeIfPresent(Bitrate.self, forKey: .bitrate)
        fec = try c.decodeIfPresent(Bool.self, forKey: .fec)
        expectedLoss = try integer(.expectedLoss)
        dtx = try c.decodeIfPresent(Bool.self, forKey: .dtx)
        application = try c.decodeIfPresent(String.self, forKey: .application)
        maxBandwidth = try c.decodeIfPresent(String.self, forKey: .maxBandwidth)
        sampleRate = try c.decodeIfPresent(SampleRate.self, forKey: .sampleRate)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(complexity, forKey: .complexity)
        try c.encodeIfPresent(bitrate, forKey: .bitrate)
        try c.encodeIfPresent(fec, forKey: .fec)
        try c.encodeIfPresent(expectedLoss, forKey: .expectedLoss)
        try c.encodeIfPresent(dtx, forKey: .dtx)
        try c.encodeIfPresent(application, forKey: .application)
        try c.encodeIfPresent(maxBandwidth, forKey: .maxBandwidth)
        try c.encodeIfPresent(sampleRate, forKey: .sampleRate)
    }
}

/// Why one field of a request body cannot be read, beyond its JSON type: the server answers
/// 400 with `<key path>: <message>`. Carried as the `underlyingError` of a
/// `DecodingError.dataCorrupted`, whose coding path names the field.
public struct RequestFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// The decoding error for the field at `path`.
    public static func corrupted(_ path: [any CodingKey], _ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: message, underlyingError: RequestFieldError(message)))
    }
}
