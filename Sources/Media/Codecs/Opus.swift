// The only file that touches libopus. Every unsafe pointer into the codec stays here;
// callers see `OpusEncoder`, `OpusDecoder` and `OpusError`.
//
// Sample rates and the RTP clock (RFC 7587): Opus RTP always runs at a 48 kHz clock and
// SDP always says `opus/48000/2`, whatever the codec runs at inside. The codec itself may
// run at 8, 12, 16, 24 or 48 kHz. The gateway creates the encoder and decoder at 8 kHz
// (or 16 kHz) so PCM goes straight to and from G.711 (or G.722) with no resampler; only
// the RTP timestamp is scaled (see `OpusEncoder.rtpTimestampIncrement(forSamples:)`).
// A platform leg whose settings ask for a higher rate (`AudioCodec.OpusSettings.sampleRate`)
// has its encoder at that rate behind a `PolyphaseUpsampler`; its decoder stays at the call's.
//
// Threading: the classes are `final` and deliberately not `Sendable`. libopus state is not
// thread-safe; one call owns its encoder/decoder and the media loop pins a call to one
// thread.

internal import COpus

/// A libopus failure, carrying the library's own text (`opus_strerror`).
public struct OpusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libopus error code (`OPUS_BAD_ARG`, `OPUS_INVALID_PACKET`, ...; always negative).
    public let code: Int32
    /// What the media layer was doing: "encoder create", "encode", "decode", ...
    public let operation: String

    /// Wraps a libopus return code.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// libopus's description of `code`, e.g. "invalid argument".
    public var message: String { String(cString: opus_strerror(code)) }

    /// "opus <operation>: <message> (<code>)".
    public var description: String { "opus \(operation): \(message) (\(code))" }
}

/// Opus parameters shared by encoder and decoder.
public enum Opus {
    /// The RTP clock rate of Opus, whatever the codec's internal sample rate (RFC 7587 §4.1).
    public static let rtpClockRate: Int32 = 48_000

    /// Sample rates the codec can run at.
    public static let supportedSampleRates: [Int32] = [8_000, 12_000, 16_000, 24_000, 48_000]

    /// The largest packet one frame can produce (RFC 6716 §3.2.1: 1275 bytes per frame).
    public static let maxPacketSize = 1275

    /// libopus's version text ("libopus 1.3.1"): the vendor string of an Ogg Opus file's
    /// OpusTags header (RFC 7845 §5.2).
    public static var versionString: String { String(cString: opus_get_version_string()) }

    /// Samples per channel in `milliseconds` of audio at `sampleRate`.
    public static func samples(milliseconds: Int, sampleRate: Int32) -> Int {
        Int(sampleRate) / 1000 * milliseconds
    }

    /// How the encoder tunes itself (`OPUS_APPLICATION_*`). Raw values are the spellings
    /// of profiles and the API.
    public enum Application: String, Sendable, Equatable, CaseIterable {
        /// Speech intelligibility first: telephony. The default.
        case voip
        /// Fidelity for music and mixed content.
        case audio
        /// Lowest delay (CELT only): no speech-optimised SILK mode, so no in-band FEC.
        case restrictedLowDelay = "restricted-lowdelay"

        var code: Int32 {
            switch self {
            case .voip: OPUS_APPLICATION_VOIP
            case .audio: OPUS_APPLICATION_AUDIO
            case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
            }
        }

        init?(code: Int32) {
            guard let a = Self.allCases.first(where: { $0.code == code }) else { return nil }
            self = a
        }
    }

    /// An audio bandwidth (`OPUS_BANDWIDTH_*`, RFC 6716 §2): how high the coded audio
    /// reaches. Raw values are the spellings of profiles and the API.
    public enum Bandwidth: String, Sendable, Equatable, CaseIterable, Comparable {
        /// 4 kHz audio (8 kHz sampling): what G.711 carries.
        case narrowband
        /// 6 kHz audio (12 kHz sampling).
        case mediumband
        /// 8 kHz audio (16 kHz sampling): what G.722 carries.
        case wideband
        /// 12 kHz audio (24 kHz sampling).
        case superwideband
        /// 20 kHz audio (48 kHz sampling).
        case fullband

        /// The bandwidth a PCM rate can hold: narrowband at 8 kHz (G.711 calls), wideband at
        /// 16 kHz (G.722 calls), fullband at 48 kHz.
        public static func automatic(sampleRate: Int) -> Bandwidth {
            switch sampleRate {
            case ..<12_000: .narrowband
            case ..<16_000: .mediumband
            case ..<24_000: .wideband
            case ..<48_000: .superwideband
            default: .fullband
            }
        }

        /// The bandwidth of an Opus packet, read from its TOC byte (RFC 6716 §3.1); nil for
        /// an empty packet.
        public static func of(packet: [UInt8]) -> Bandwidth? {
            return packet.withUnsafeBufferPointer { p in
                guard let first = p.baseAddress, !p.isEmpty else { return nil }
                return Bandwidth(code: opus_packet_get_bandwidth(first))
            }
        }

        public static func < (a: Bandwidth, b: Bandwidth) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }

        var code: Int32 {
            switch self {
            case .narrowband: OPUS_BANDWIDTH_NARROWBAND
            case .mediumband: OPUS_BANDWIDTH_MEDIUMBAND
            case .wideband: OPUS_BANDWIDTH_WIDEBAND
            case .superwideband: OPUS_BANDWIDTH_SUPERWIDEBAND
            case .fullband: OPUS_BANDWIDTH_FULLBAND
            }
        }

        init?(code: Int32) {
            guard let b = Self.allCases.first(where: { $0.code == code }) else { return nil }
            self = b
        }
    }
}

/// Turns a negative libopus return code into an `OpusError`; passes other values through.
private func check(_ result: Int32, _ operation: String) throws(OpusError) -> Int {
    if result < 0 { throw OpusError(code: result, operation: operation) }
    return Int(result)
}

/// An Opus encoder (one direction of one call). Not thread-safe: one owner.
public final class OpusEncoder {
    /// Encoder settings. Defaults suit narrowband telephony bridged from G.711.
    public struct Configuration: Sendable, Equatable {
        /// Input PCM sample rate: 8000 (default, straight from G.711), 12000, 16000
        /// (straight from G.722), 24000 or 48000.
        public var sampleRate: Int32
        /// 1 (default) or 2.
        public var channels: Int32
        /// Default `.voip`.
        public var application: Opus.Application
        /// 0...10; default 5 (the CPU/quality balance for a gateway with many calls).
        public var complexity: Int32
        /// Target bits per second; `nil` (default) lets libopus choose.
        public var bitrate: Int32?
        /// Send in-band FEC (LBRR) for the previous frame; default true.
        public var inbandFEC: Bool
        /// Expected packet loss 0...100; in-band FEC is only emitted when this is > 0.
        /// Default 10.
        public var expectedLossPercent: Int32
        /// Discontinuous transmission: tiny or no packets during silence; default false.
        public var dtx: Bool
        /// The widest audio band coded; `nil` (default): what `sampleRate` can hold
        /// (`Opus.Bandwidth.automatic(sampleRate:)`). A band above that is the same as it.
        public var maxBandwidth: Opus.Bandwidth?

        /// Settings with the documented defaults.
        public init(
            sampleRate: Int32 = 8_000,
            channels: Int32 = 1,
            application: Opus.Application = .voip,
            complexity: Int32 = 5,
            bitrate: Int32? = nil,
            inbandFEC: Bool = true,
            expectedLossPercent: Int32 = 10,
            dtx: Bool = false,
            maxBandwidth: Opus.Bandwidth? = nil
        ) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.application = application
            self.complexity = complexity
            self.bitrate = bitrate
            self.inbandFEC = inbandFEC
            self.expectedLossPercent = expectedLossPercent
            self.dtx = dtx
            self.maxBandwidth = maxBandwidth
        }

        /// `maxBandwidth`, or the band `sampleRate` can hold when it is nil.
        public var effectiveMaxBandwidth: Opus.Bandwidth {
            maxBandwidth ?? .automatic(sampleRate: Int(sampleRate))
        }
    }

    /// The settings this encoder was created with.
    public let configuration: Configuration
    private let state: OpaquePointer

    /// Creates an encoder; throws `OpusError` (e.g. "invalid argument") for a sample rate,
    /// channel count or setting libopus rejects.
    public init(_ configuration: Configuration) throws(OpusError) {
        var error: Int32 = OPUS_OK
        guard
            let state = opus_encoder_create(
                configuration.sampleRate, configuration.channels, configuration.application.code, &error
            ), error == OPUS_OK
        else {
            throw OpusError(code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error, operation: "encoder create")
        }
        self.state = state
        self.configuration = configuration
        // From here on deinit frees `state` if a setting is rejected.
        // The voice hint suits telephony; `audio` and `restricted-lowdelay` keep libopus's
        // own signal detection (the hint would bias `audio` back toward speech coding).
        if configuration.application == .voip { _ = try check(COpus_set_signal_voice(state), "set signal") }
        _ = try check(COpus_set_complexity(state, configuration.complexity), "set complexity")
        _ = try check(COpus_set_bitrate(state, configuration.bitrate ?? OPUS_AUTO), "set bitrate")
        _ = try check(COpus_set_inband_fec(state, configuration.inbandFEC ? 1 : 0), "set inband FEC")
        _ = try check(
            COpus_set_packet_loss_perc(state, configuration.expectedLossPercent), "set packet loss")
        _ = try check(COpus_set_dtx(state, configuration.dtx ? 1 : 0), "set DTX")
        _ = try check(COpus_set_max_bandwidth(state, configuration.effectiveMaxBandwidth.code), "set max bandwidth")
    }

    /// The settings as libopus holds them now, read back with `OPUS_GET_*` (`sampleRate`
    /// and `channels` as created; `bitrate` is the rate libopus targets, its own when the
    /// configuration said nil). Shows that a configuration reached the codec.
    public var settingsInEffect: Configuration {
        func get(_ read: (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32) -> Int32 {
            var value: Int32 = 0
            return read(state, &value) == OPUS_OK ? value : -1
        }
        return Configuration(
            sampleRate: configuration.sampleRate, channels: configuration.channels,
            application: Opus.Application(code: get(COpus_get_application)) ?? configuration.application,
            complexity: get(COpus_get_complexity), bitrate: get(COpus_get_bitrate),
            inbandFEC: get(COpus_get_inband_fec) != 0, expectedLossPercent: get(COpus_get_packet_loss_perc),
            dtx: get(COpus_get_dtx) != 0, maxBandwidth: Opus.Bandwidth(code: get(COpus_get_max_bandwidth)))
    }

    /// The encoder's delay (lookahead) in samples per channel at its own rate: what a decoder
    /// must skip at the start, an Ogg Opus file's pre-skip once scaled to 48 kHz (RFC 7845 §4.2).
    public var lookahead: Int {
        var value: Int32 = 0
        return COpus_get_lookahead(state, &value) == OPUS_OK ? Int(value) : 0
    }

    /// Creates an encoder from individual settings (see `Configuration` for defaults).
    public convenience init(
        sampleRate: Int32 = 8_000,
        channels: Int32 = 1,
        application: Opus.Application = .voip,
        complexity: Int32 = 5,
        bitrate: Int32? = nil,
        inbandFEC: Bool = true,
        expectedLossPercent: Int32 = 10,
        dtx: Bool = false,
        maxBandwidth: Opus.Bandwidth? = nil
    ) throws(OpusError) {
        try self.init(
            Configuration(
                sampleRate: sampleRate, channels: channels, application: application,
                complexity: complexity, bitrate: bitrate, inbandFEC: inbandFEC,
                expectedLossPercent: expectedLossPercent, dtx: dtx, maxBandwidth: maxBandwidth))
    }

    deinit { opus_encoder_destroy(state) }

    /// RTP timestamp ticks (48 kHz clock) for `samples` samples per channel at this
    /// encoder's rate: 160 samples at 8 kHz (20 ms) advance the timestamp by 960.
    public func rtpTimestampIncrement(forSamples samples: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: samples * Int(Opus.rtpClockRate) / Int(configuration.sampleRate))
    }

    /// Encodes exactly one frame (2.5, 5, 10, 20, 40 or 60 ms; interleaved if stereo) into
    /// `packet`, returning the packet length. A result of 1–2 bytes means DTX: nothing need
    /// be sent. Throws `OpusError` for a bad frame size or a too-small buffer.
    public func encode(
        _ pcm: UnsafeBufferPointer<Int16>, into packet: UnsafeMutableBufferPointer<UInt8>
    ) throws(OpusError) -> Int {
        guard let input = pcm.baseAddress, let output = packet.baseAddress,
            pcm.count % Int(configuration.channels) == 0
        else {
            throw OpusError(code: OPUS_BAD_ARG, operation: "encode")
        }
        let frameSize = Int32(clamping: pcm.count / Int(configuration.channels))
        let capacity = Int32(clamping: packet.count)
        return try check(opus_encode(state, input, frameSize, output, capacity), "encode")
    }

    /// Encodes one frame into `packet`, which on return holds exactly the packet
    /// (`packet.count` equals the result). Reuses the array's storage: no allocation once
    /// its capacity reaches `Opus.maxPacketSize`.
    public func encode(_ pcm: [Int16], into packet: inout [UInt8]) throws(OpusError) -> Int {
        let result: Result<Int, OpusError> = pcm.withUnsafeBufferPointer { input in
            do throws(OpusError) {
                return .success(try encode(input, into: &packet))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Encodes one frame into `packet`, which on return holds exactly the packet
    /// (`packet.count` equals the result). Reuses the array's storage.
    public func encode(
        _ pcm: UnsafeBufferPointer<Int16>, into packet: inout [UInt8]
    ) throws(OpusError) -> Int {
        ensureCount(&packet, Opus.maxPacketSize)
        let result: Result<Int, OpusError> = packet.withUnsafeMutableBufferPointer { output in
            do throws(OpusError) {
                return .success(try encode(pcm, into: output))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let length):
            packet.removeLast(packet.count - length)
            return length
        case .failure(let error):
            packet.removeAll(keepingCapacity: true)
            throw error
        }
    }
}

/// An Opus decoder (one direction of one call). Not thread-safe: one owner.
public final class OpusDecoder {
    /// Output PCM sample rate (8000, 12000, 16000, 24000 or 48000).
    public let sampleRate: Int32
    /// 1 or 2.
    public let channels: Int32
    /// Samples per channel of the last frame decoded or concealed (starts at 20 ms); the
    /// default size of a frame recovered by `decodeFEC` or `concealLoss`.
    public private(set) var lastFrameSize: Int
    private let state: OpaquePointer

    /// Samples per channel in the longest possible packet (120 ms).
    private var maxFrameSize: Int { Opus.samples(milliseconds: 120, sampleRate: sampleRate) }

    /// Creates a decoder producing PCM at `sampleRate` (default 8 kHz: straight to G.711).
    /// Throws `OpusError` for a rate or channel count libopus rejects.
    public init(sampleRate: Int32 = 8_000, channels: Int32 = 1) throws(OpusError) {
        var error: Int32 = OPUS_OK
        guard let state = opus_decoder_create(sampleRate, channels, &error), error == OPUS_OK else {
            throw OpusError(code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error, operation: "decoder create")
        }
        self.state = state
        self.sampleRate = sampleRate
        self.channels = channels
        self.lastFrameSize = Opus.samples(milliseconds: 20, sampleRate: sampleRate)
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes one packet into `pcm` (interleaved if stereo), which on return holds exactly
    /// the decoded audio. Returns samples per channel. An empty packet is an error: use
    /// `concealLoss(frameSize:into:)` for a lost one.
    @discardableResult
    public func decode(_ packet: [UInt8], into pcm: inout [Int16]) throws(OpusError) -> Int {
        guard !packet.isEmpty else { throw OpusError(code: OPUS_BAD_ARG, operation: "decode") }
        return try run(packet, frameSize: maxFrameSize, fec: false, into: &pcm, "decode")
    }

    /// Recovers the frame lost just before `nextPacket` from the in-band FEC that
    /// `nextPacket` carries (`decode_fec = 1`). `frameSize` is the lost frame's samples per
    /// channel (default: the last frame's). When `nextPacket` carries no FEC, libopus
    /// conceals instead; either way `pcm` receives a full frame. Decode `nextPacket`
    /// normally afterwards.
    @discardableResult
    public func decodeFEC(
        nextPacket: [UInt8], frameSize: Int? = nil, into pcm: inout [Int16]
    ) throws(OpusError) -> Int {
        guard !nextPacket.isEmpty else { throw OpusError(code: OPUS_BAD_ARG, operation: "decode FEC") }
        return try run(nextPacket, frameSize: frameSize ?? lastFrameSize, fec: true, into: &pcm, "decode FEC")
    }

    /// Packet loss concealment: synthesises `frameSize` samples per channel (default: the
    /// last frame's; a multiple of 2.5 ms) for a packet that never came.
    @discardableResult
    public func concealLoss(frameSize: Int? = nil, into pcm: inout [Int16]) throws(OpusError) -> Int {
        try run(nil, frameSize: frameSize ?? lastFrameSize, fec: false, into: &pcm, "conceal loss")
    }

    /// Buffer form for the media loop: decodes `packet` (nil: conceal a lost frame;
    /// `fec`: recover the frame before `packet` from its FEC) into `pcm`, which must hold
    /// `frameSize` samples per channel. No allocation. Returns samples per channel.
    public func decode(
        _ packet: UnsafeBufferPointer<UInt8>?, fec: Bool = false, frameSize: Int? = nil,
        into pcm: UnsafeMutableBufferPointer<Int16>
    ) throws(OpusError) -> Int {
        let size = min(frameSize ?? (packet == nil || fec ? lastFrameSize : maxFrameSize), pcm.count / Int(channels))
        guard size > 0, let out = pcm.baseAddress else { throw OpusError(code: OPUS_BAD_ARG, operation: "decode") }
        let decoded: Int32
        if let packet, packet.count > 0 {
            decoded = opus_decode(
                state, packet.baseAddress, Int32(clamping: packet.count), out, Int32(size), fec ? 1 : 0)
        } else {
            decoded = opus_decode(state, nil, 0, out, Int32(size), 0)
        }
        let result = try check(decoded, fec ? "decode FEC" : "decode")
        lastFrameSize = result
        return result
    }

    private func run(
        _ packet: [UInt8]?, frameSize: Int, fec: Bool, into pcm: inout [Int16], _ operation: String
    ) throws(OpusError) -> Int {
        guard frameSize > 0, frameSize <= maxFrameSize else {
            throw OpusError(code: OPUS_BAD_ARG, operation: operation)
        }
        let channels = Int(self.channels)
        ensureCount(&pcm, frameSize * channels)
        let decoded: Int32 = pcm.withUnsafeMutableBufferPointer { output in
            guard let out = output.baseAddress else { return OPUS_BAD_ARG }
            guard let packet else {
                return opus_decode(state, nil, 0, out, Int32(frameSize), 0)
            }
            return packet.withUnsafeBufferPointer { input in
                opus_decode(
                    state, input.baseAddress, Int32(clamping: input.count), out,
                    Int32(frameSize), fec ? 1 : 0)
            }
        }
        let samples = max(Int(decoded), 0)
        pcm.removeLast(pcm.count - samples * channels)
        let result = try check(decoded, operation)
        lastFrameSize = result
        return result
    }
}

/// Grows `array` to at least `count` elements (zeros) without shrinking its capacity.
private func ensureCount<T: FixedWidthInteger>(_ array: inout [T], _ count: Int) {
    if array.count < count {
        array.append(contentsOf: repeatElement(0, count: count - array.count))
    }
}
