/// The codecs a call leg can carry, with what the RTP layer needs to know about them.
public enum AudioCodec: Sendable, Equatable, CustomStringConvertible {
    case pcmu
    case pcma
    case g722
    /// Opus at the platform side. It runs straight from the call's PCM rate (8 or 16 kHz), or
    /// at a higher rate its settings give (`OpusSettings.sampleRate`); its RTP clock is always
    /// 48 kHz (RFC 7587).
    case opus(OpusSettings)

    /// How the platform leg's Opus encoder runs: the CPU it spends and the quality it gives
    /// (docs/media.md, "Opus settings"). The defaults are the gateway's transcoding defaults.
    public struct OpusSettings: Sendable, Equatable {
        /// 0-10, the main CPU knob; 5 is the transcoding default (docs/design.md, "Quality targets").
        public var complexity: Int32 = 5
        /// Target bits per second, 6000-510000; nil (default): libopus chooses.
        public var bitrate: Int32? = nil
        /// Send in-band FEC (LBRR) for the previous frame. Default true.
        public var inbandFEC = true
        /// The packet loss (0-100 %) the encoder prepares for; FEC is only sent when > 0. Default 5.
        public var expectedLossPercent: Int32 = 5
        /// Discontinuous transmission: almost nothing is sent during silence. Default false.
        public var dtx = false
        /// How libopus tunes itself. Default `.voip`.
        public var application: Opus.Application = .voip
        /// The widest band coded; nil (default): automatic, what the encoder's input holds
        /// (narrowband on an 8 kHz call, wideband on a 16 kHz G.722 call, fullband at 48 kHz).
        public var maxBandwidth: Opus.Bandwidth? = nil
        /// The rate the encoder runs at (Hz, one of `sampleRates`); nil (default): the call's
        /// PCM rate, with no resampler. A higher rate upsamples the call's audio before the
        /// encoder (`PolyphaseUpsampler`), so the packets say a wider band (48000: fullband, as
        /// a browser's) at the cost of a dearer encoder; the call itself, its taps and the
        /// decoder stay at the call's rate. See `codecSampleRate(callSampleRate:)`.
        public var sampleRate: Int? = nil

        /// The values `complexity` may take.
        public static let complexityRange: ClosedRange<Int32> = 0...10
        /// The values a fixed `bitrate` may take (bits per second).
        public static let bitrateRange: ClosedRange<Int32> = 6_000...510_000
        /// The values `expectedLossPercent` may take.
        public static let expectedLossRange: ClosedRange<Int32> = 0...100
        /// The values a fixed `sampleRate` may take (Hz): the Opus rates a call's 8 or 16 kHz
        /// reaches by an integer factor.
        public static let sampleRates = [8000, 16_000, 24_000, 48_000]

        public init(
            complexity: Int32 = 5, bitrate: Int32? = nil, inbandFEC: Bool = true, expectedLossPercent: Int32 = 5,
            dtx: Bool = false,
            application: Opus.Application = .voip, maxBandwidth: Opus.Bandwidth? = nil, sampleRate: Int? = nil
        ) {
            self.complexity = complexity
            self.bitrate = bitrate
            self.inbandFEC = inbandFEC
            self.expectedLossPercent = expectedLossPercent
            self.dtx = dtx
            self.application = application
            self.maxBandwidth = maxBandwidth
            self.sampleRate = sampleRate
        }

        /// These settings with every value `overrides` gives put in place of ours; nil
        /// changes nothing. The one merging rule of the gateway: defaults, then the trunk
        /// profile's `media.opus`, then the session's `opus`.
        public func applying(_ overrides: OpusOverrides?) -> OpusSettings {
            guard let o = overrides else { return self }
            var s = self
            if let v = o.complexity { s.complexity = v }
            if let v = o.bitrate { s.bitrate = v.value }
            if let v = o.inbandFEC { s.inbandFEC = v }
            if let v = o.expectedLossPercent { s.expectedLossPercent = v }
            if let v = o.dtx { s.dtx = v }
            if let v = o.application { s.application = v }
            if let v = o.maxBandwidth { s.maxBandwidth = v.value }
            if let v = o.sampleRate { s.sampleRate = v.value }
            return s
        }

        /// The rate the encoder runs at on a call whose PCM runs at `callSampleRate`: the
        /// smallest Opus rate that is at least `sampleRate` (the call's rate when nil) and
        /// the call's rate times 1, 2, 3 or 6 (the upsampler's factors). Never below the
        /// call's rate: 8000 on a 16 kHz call is 16000, 24000 on a 16 kHz call is 48000.
        public func codecSampleRate(callSampleRate: Int) -> Int {
            let wanted = max(sampleRate ?? callSampleRate, callSampleRate)
            let reachable = [1, 2, 3, 6].map { callSampleRate * $0 }.filter {
                $0 == callSampleRate || Opus.supportedSampleRates.contains(Int32($0))
            }
            return reachable.first { $0 >= wanted } ?? callSampleRate
        }

        /// The encoder configuration for a call whose PCM runs at `callSampleRate`, mono: the
        /// encoder at `codecSampleRate(callSampleRate:)`.
        public func encoderConfiguration(callSampleRate: Int) -> OpusEncoder.Configuration {
            OpusEncoder.Configuration(
                sampleRate: Int32(codecSampleRate(callSampleRate: callSampleRate)), channels: 1,
                application: application, complexity: complexity, bitrate: bitrate, inbandFEC: inbandFEC,
                expectedLossPercent: expectedLossPercent, dtx: dtx, maxBandwidth: maxBandwidth)
        }
    }

    /// Some of the Opus settings, each nil when not given: a trunk profile's `media.opus`
    /// or a session's `opus`. `OpusSettings.applying(_:)` lays them over the settings below.
    public struct OpusOverrides: Sendable, Equatable {
        /// A setting libopus can choose itself: given as automatic, or as a fixed value.
        public enum Choice<Value: Sendable & Equatable>: Sendable, Equatable {
            case automatic
            case fixed(Value)

            /// The fixed value; nil for automatic.
            public var value: Value? {
                if case .fixed(let v) = self { return v }
                return nil
            }
        }

        public var complexity: Int32?
        public var bitrate: Choice<Int32>?
        public var inbandFEC: Bool?
        public var expectedLossPercent: Int32?
        public var dtx: Bool?
        public var application: Opus.Application?
        public var maxBandwidth: Choice<Opus.Bandwidth>?
        public var sampleRate: Choice<Int>?

        public init(
            complexity: Int32? = nil, bitrate: Choice<Int32>? = nil, inbandFEC: Bool? = nil,
            expectedLossPercent: Int32? = nil,
            dtx: Bool? = nil, application: Opus.Application? = nil, maxBandwidth: Choice<Opus.Bandwidth>? = nil,
            sampleRate: Choice<Int>? = nil
        ) {
            self.complexity = complexity
            self.bitrate = bitrate
            self.inbandFEC = inbandFEC
            self.expectedLossPercent = expectedLossPercent
            self.dtx = dtx
            self.application = application
            self.maxBandwidth = maxBandwidth
            self.sampleRate = sampleRate
        }

        /// Nothing given: applying it changes nothing.
        public var isEmpty: Bool { self == OpusOverrides() }
    }

    /// RTP clock rate (RFC 3551: G.722 is signalled at 8000 though it samples at 16 kHz).
    public var rtpClockRate: Int {
        switch self {
        case .pcmu, .pcma, .g722: 8000
        case .opus: 48_000
        }
    }

    /// The PCM rate this codec produces natively (Opus adapts to the call's rate).
    public var nativeSampleRate: Int? {
        switch self {
        case .pcmu, .pcma: 8000
        case .g722: 16_000
        case .opus: nil
        }
    }

    /// Wideband on the trunk (the Iris "HD" quality indicator).
    public var isWideband: Bool {
        switch self {
        case .g722, .opus: true
        case .pcmu, .pcma: false
        }
    }

    /// Same codec, so a call can pass packets through without decoding.
    public func isSameCodec(as other: AudioCodec) -> Bool {
        switch (self, other) {
        case (.pcmu, .pcmu), (.pcma, .pcma), (.g722, .g722), (.opus, .opus): true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .pcmu: "PCMU"
        case .pcma: "PCMA"
        case .g722: "G722"
        case .opus: "opus"
        }
    }
}

/// One leg's codec state, created once per call: decode a payload to PCM, conceal a lost
/// frame, encode PCM to a payload. Works on caller-owned buffers and never allocates.
/// Not thread-safe: the media thread that owns the call owns it.
public final class LegCodec {
    public let codec: AudioCodec
    /// The PCM rate of the call (8000, or 16000 when the trunk is G.722).
    public let sampleRate: Int
    /// Samples per 20 ms frame at `sampleRate`.
    public let frameSamples: Int

    private let opusEncoder: OpusEncoder?
    /// Raises the call's PCM to the Opus encoder's rate when that is higher (nil: the same).
    private let opusUpsampler: PolyphaseUpsampler?
    private let opusDecoder: OpusDecoder?
    private let g722Encoder: G722Encoder?
    private let g722Decoder: G722Decoder?
    private let plc: PacketLossConcealer?

    public init(_ codec: AudioCodec, sampleRate: Int) throws {
        self.codec = codec
        self.sampleRate = sampleRate
        self.frameSamples = sampleRate / 50
        switch codec {
        case .opus(let s):
            let encoderRate = s.codecSampleRate(callSampleRate: sampleRate)
            opusEncoder = try OpusEncoder(s.encoderConfiguration(callSampleRate: sampleRate))
            // Up to 60 ms a frame (Opus's longest); the decoder decodes straight at the call's rate.
            opusUpsampler =
                encoderRate == sampleRate
                ? nil
                : try PolyphaseUpsampler(factor: encoderRate / sampleRate, maximumInputCount: sampleRate * 60 / 1000)
            opusDecoder = try OpusDecoder(sampleRate: Int32(sampleRate), channels: 1)
            g722Encoder = nil
            g722Decoder = nil
            plc = nil
        case .g722:
            opusEncoder = nil
            opusUpsampler = nil
            opusDecoder = nil
            g722Encoder = try G722Encoder(sampleRate: Int32(sampleRate))
            g722Decoder = try G722Decoder(sampleRate: Int32(sampleRate))
            plc = sampleRate == 8000 ? try PacketLossConcealer() : nil
        case .pcmu, .pcma:
            opusEncoder = nil
            opusUpsampler = nil
            opusDecoder = nil
            g722Encoder = nil
            g722Decoder = nil
            plc = try PacketLossConcealer()
        }
    }

    /// The Opus encoder's settings as libopus holds them (nil for other codecs); `sampleRate`
    /// is the rate the encoder runs at.
    public var opusSettingsInEffect: OpusEncoder.Configuration? { opusEncoder?.settingsInEffect }

    /// Decodes one payload (any duration that fits in `pcm`) into `pcm`; returns the
    /// samples written.
    public func decode(_ payload: UnsafeBufferPointer<UInt8>, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        var n = 0
        switch codec {
        case .pcmu: n = G711.decodeULaw(payload, into: pcm)
        case .pcma: n = G711.decodeALaw(payload, into: pcm)
        case .g722: n = g722Decoder!.decode(payload, into: pcm)
        // Up to the room in `pcm`: the sender may put 40 or 60 ms in a packet.
        case .opus: n = (try? opusDecoder!.decode(payload, into: pcm)) ?? 0
        }
        if let plc, n > 0 { plc.receive(UnsafeMutableBufferPointer(rebasing: pcm[0..<n])) }
        return n
    }

    /// Fills one frame for a lost packet: Opus FEC from `next` when given, else PLC.
    public func conceal(next: UnsafeBufferPointer<UInt8>?, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        let frame = UnsafeMutableBufferPointer(rebasing: pcm[0..<min(frameSamples, pcm.count)])
        switch codec {
        case .opus:
            return (try? opusDecoder!.decode(next, fec: next != nil, frameSize: frameSamples, into: frame)) ?? 0
        default:
            if let plc {
                plc.fill(frame)
            } else {
                frame.update(repeating: 0)
            }
            return frame.count
        }
    }

    /// Encodes one frame of PCM; returns the payload size (0 on failure).
    public func encode(_ pcm: UnsafeBufferPointer<Int16>, into payload: UnsafeMutableBufferPointer<UInt8>) -> Int {
        switch codec {
        case .pcmu: return G711.encodeULaw(pcm, into: payload)
        case .pcma: return G711.encodeALaw(pcm, into: payload)
        case .g722: return g722Encoder!.encode(pcm, into: payload)
        case .opus:
            guard let up = opusUpsampler else { return (try? opusEncoder!.encode(pcm, into: payload)) ?? 0 }
            guard pcm.count <= up.maximumInputCount else { return 0 }
            return (try? opusEncoder!.encode(up.upsample(pcm), into: payload)) ?? 0
        }
    }
}
