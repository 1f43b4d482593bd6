// The only file that touches spandsp (0.0.6 as shipped by Debian). Every unsafe pointer
// into the library stays here; callers see G711, G722Encoder/Decoder,
// PacketLossConcealer, DTMFDetector, DTMFGenerator and FaxToneDetector.
//
// spandsp fixes its telephony sample rate at 8 kHz (`SAMPLE_RATE` in telephony.h): the PLC,
// DTMF and tone classes take and produce 8 kHz PCM. Only G.722 works at 16 kHz.
//
// Threading: the classes are `final` and deliberately not `Sendable`. spandsp state is
// plain mutable C memory; one call owns each object and the media loop pins a call to
// one thread.

internal import CSpanDSP

/// A spandsp wrapper rejected its input. Each case says what was wrong.
public enum SpanDSPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// G.722 runs at 64000, 56000 or 48000 bit/s only.
    case unsupportedBitRate(Int32)
    /// The PCM sample rate is not one this component supports.
    case unsupportedSampleRate(Int32)
    /// G.722 at 16 kHz codes sample pairs; a buffer of this many samples cannot be coded.
    case oddSampleCount(Int)
    /// Not one of the DTMF digits 0-9 * # A-D.
    case invalidDigit(Character)
    /// The DTMF generator's queue has no room for this many more digits.
    case dtmfQueueFull(Int)
    /// A tone description spandsp cannot generate; the text says why.
    case invalidTone(String)
    /// spandsp could not allocate its state for the named component.
    case allocationFailed(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unsupportedBitRate(let rate): "G.722 bit rate \(rate) not one of 64000, 56000, 48000"
        case .unsupportedSampleRate(let rate): "unsupported PCM sample rate \(rate)"
        case .oddSampleCount(let count): "G.722 at 16 kHz needs an even sample count, got \(count)"
        case .invalidDigit(let digit): "'\(digit)' is not a DTMF digit (0-9 * # A-D)"
        case .dtmfQueueFull(let count): "DTMF queue has no room for \(count) more digits"
        case .invalidTone(let reason): "invalid tone: \(reason)"
        case .allocationFailed(let what): "spandsp could not allocate \(what)"
        }
    }
}

// MARK: - G.711

/// G.711 µ-law (PCMU) and A-law (PCMA), one byte per 8 kHz sample (RTP clock 8000).
///
/// The array forms replace the output's contents, reusing its storage (no allocation once
/// its capacity suffices). The buffer forms code `min(input.count, output.count)` samples
/// and return that count.
public enum G711 {
    /// Encodes linear PCM to µ-law.
    public static func encodeULaw(_ pcm: [Int16], into bytes: inout [UInt8]) {
        map(pcm, into: &bytes, CSpanDSP_linear_to_ulaw)
    }

    /// Decodes µ-law to linear PCM.
    public static func decodeULaw(_ bytes: [UInt8], into pcm: inout [Int16]) {
        map(bytes, into: &pcm, CSpanDSP_ulaw_to_linear)
    }

    /// Encodes linear PCM to A-law.
    public static func encodeALaw(_ pcm: [Int16], into bytes: inout [UInt8]) {
        map(pcm, into: &bytes, CSpanDSP_linear_to_alaw)
    }

    /// Decodes A-law to linear PCM.
    public static func decodeALaw(_ bytes: [UInt8], into pcm: inout [Int16]) {
        map(bytes, into: &pcm, CSpanDSP_alaw_to_linear)
    }

    /// Encodes linear PCM to µ-law; returns the samples coded.
    @discardableResult
    public static func encodeULaw(
        _ pcm: UnsafeBufferPointer<Int16>, into bytes: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        map(pcm, into: bytes, CSpanDSP_linear_to_ulaw)
    }

    /// Decodes µ-law to linear PCM; returns the samples decoded.
    @discardableResult
    public static func decodeULaw(
        _ bytes: UnsafeBufferPointer<UInt8>, into pcm: UnsafeMutableBufferPointer<Int16>
    ) -> Int {
        map(bytes, into: pcm, CSpanDSP_ulaw_to_linear)
    }

    /// Encodes linear PCM to A-law; returns the samples coded.
    @discardableResult
    public static func encodeALaw(
        _ pcm: UnsafeBufferPointer<Int16>, into bytes: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        map(pcm, into: bytes, CSpanDSP_linear_to_alaw)
    }

    /// Decodes A-law to linear PCM; returns the samples decoded.
    @discardableResult
    public static func decodeALaw(
        _ bytes: UnsafeBufferPointer<UInt8>, into pcm: UnsafeMutableBufferPointer<Int16>
    ) -> Int {
        map(bytes, into: pcm, CSpanDSP_alaw_to_linear)
    }

    private static func map<In, Out>(_ input: [In], into output: inout [Out], _ code: (In) -> Out) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(input.count)
        for value in input { output.append(code(value)) }
    }

    private static func map<In, Out>(
        _ input: UnsafeBufferPointer<In>, into output: UnsafeMutableBufferPointer<Out>,
        _ code: (In) -> Out
    ) -> Int {
        let count = min(input.count, output.count)
        for index in 0..<count { output[index] = code(input[index]) }
        return count
    }
}

// MARK: - G.722

/// G.722 constants.
public enum G722 {
    /// G.722's RTP clock rate: 8000, although it samples at 16 kHz (an erratum kept for
    /// compatibility, RFC 3551 §4.5.2). 20 ms = 320 samples advances the timestamp by 160.
    public static let rtpClockRate: Int32 = 8_000
    /// The bit rates G.722 defines; 64000 is the one used on RTP (payload type 9).
    public static let bitRates: [Int32] = [64_000, 56_000, 48_000]
}

/// Checks G.722 parameters and turns them into spandsp's `options` flags.
private func g722Options(bitRate: Int32, sampleRate: Int32) throws(SpanDSPError) -> Int32 {
    guard G722.bitRates.contains(bitRate) else { throw .unsupportedBitRate(bitRate) }
    switch sampleRate {
    case 16_000: return 0
    // spandsp's narrowband mode: codes 8 kHz PCM as the lower sub-band only.
    case 8_000: return Int32(G722_SAMPLE_RATE_8000)
    default: throw .unsupportedSampleRate(sampleRate)
    }
}

/// A G.722 encoder: 16 kHz PCM in, one byte per two samples out (at 64 kbit/s).
/// Not thread-safe: one owner.
public final class G722Encoder {
    /// The PCM rate: 16000, or 8000 for spandsp's narrowband mode (one byte per sample).
    public let sampleRate: Int32
    private let state: OpaquePointer

    /// Creates an encoder; throws for a bit rate other than 64000/56000/48000 or a PCM
    /// rate other than 16000/8000.
    public init(bitRate: Int32 = 64_000, sampleRate: Int32 = 16_000) throws(SpanDSPError) {
        let options = try g722Options(bitRate: bitRate, sampleRate: sampleRate)
        guard let state = g722_encode_init(nil, bitRate, options) else {
            throw .allocationFailed("G.722 encoder")
        }
        self.state = state
        self.sampleRate = sampleRate
    }

    deinit { g722_encode_free(state) }

    /// Encodes `pcm` into `bytes` (contents replaced, storage reused); returns the byte
    /// count. At 16 kHz the sample count must be even.
    @discardableResult
    public func encode(_ pcm: [Int16], into bytes: inout [UInt8]) throws(SpanDSPError) -> Int {
        let wide = sampleRate == 16_000
        // spandsp reads samples in pairs and would read past an odd-length buffer.
        if wide, !pcm.count.isMultiple(of: 2) { throw .oddSampleCount(pcm.count) }
        let needed = wide ? pcm.count / 2 : pcm.count
        resize(&bytes, to: needed)
        guard needed > 0 else { return 0 }
        let produced = pcm.withUnsafeBufferPointer { input in
            bytes.withUnsafeMutableBufferPointer { output in
                Int(g722_encode(state, output.baseAddress, input.baseAddress, Int32(clamping: input.count)))
            }
        }
        resize(&bytes, to: produced)
        return produced
    }
}

extension G722Encoder {
    /// Buffer form for the media loop: no allocation; `bytes` must hold the output.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>, into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let needed = sampleRate == 16_000 ? pcm.count / 2 : pcm.count
        guard needed > 0, bytes.count >= needed, let input = pcm.baseAddress, let output = bytes.baseAddress else {
            return 0
        }
        return Int(g722_encode(state, output, input, Int32(clamping: sampleRate == 16_000 ? needed * 2 : needed)))
    }
}

/// A G.722 decoder: bytes in, 16 kHz PCM out (two samples per byte). Not thread-safe.
public final class G722Decoder {
    /// The PCM rate: 16000, or 8000 for spandsp's narrowband mode (one sample per byte).
    public let sampleRate: Int32
    private let state: OpaquePointer

    /// Creates a decoder; throws for a bit rate other than 64000/56000/48000 or a PCM
    /// rate other than 16000/8000.
    public init(bitRate: Int32 = 64_000, sampleRate: Int32 = 16_000) throws(SpanDSPError) {
        let options = try g722Options(bitRate: bitRate, sampleRate: sampleRate)
        guard let state = g722_decode_init(nil, bitRate, options) else {
            throw .allocationFailed("G.722 decoder")
        }
        self.state = state
        self.sampleRate = sampleRate
    }

    deinit { g722_decode_free(state) }

    /// Decodes `bytes` into `pcm` (contents replaced, storage reused); returns the sample
    /// count.
    @discardableResult
    public func decode(_ bytes: [UInt8], into pcm: inout [Int16]) -> Int {
        let needed = sampleRate == 16_000 ? bytes.count * 2 : bytes.count
        resize(&pcm, to: needed)
        guard needed > 0 else { return 0 }
        let produced = bytes.withUnsafeBufferPointer { input in
            pcm.withUnsafeMutableBufferPointer { output in
                Int(g722_decode(state, output.baseAddress, input.baseAddress, Int32(clamping: input.count)))
            }
        }
        resize(&pcm, to: produced)
        return produced
    }

    /// Buffer form for the media loop: no allocation; `pcm` must hold the output.
    public func decode(_ bytes: UnsafeBufferPointer<UInt8>, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        let needed = sampleRate == 16_000 ? bytes.count * 2 : bytes.count
        guard needed > 0, pcm.count >= needed, let input = bytes.baseAddress, let output = pcm.baseAddress else {
            return 0
        }
        return Int(g722_decode(state, output, input, Int32(clamping: bytes.count)))
    }
}

// MARK: - Packet loss concealment

/// Generic packet loss concealment for 8 kHz PCM (spandsp `plc_t`): feed every received
/// frame through `receive`, ask `fill` for each lost one. It repeats the last pitch period
/// with fading, and smooths the join when audio resumes. Not thread-safe: one owner.
public final class PacketLossConcealer {
    private let state: UnsafeMutablePointer<plc_state_t>

    /// Creates a concealer with empty history.
    public init() throws(SpanDSPError) {
        guard let state = plc_init(nil) else { throw .allocationFailed("packet loss concealer") }
        self.state = state
    }

    deinit { plc_free(state) }

    /// Records a received frame. After a gap, the start of `pcm` is cross-faded with the
    /// synthetic signal in place, so play out `pcm` as returned.
    public func receive(_ pcm: inout [Int16]) {
        guard !pcm.isEmpty else { return }
        pcm.withUnsafeMutableBufferPointer { buffer in
            _ = plc_rx(state, buffer.baseAddress, Int32(clamping: buffer.count))
        }
    }

    /// Synthesises `count` samples for lost audio into `pcm` (contents replaced, storage
    /// reused).
    public func fill(count: Int, into pcm: inout [Int16]) {
        resize(&pcm, to: max(count, 0))
        guard count > 0 else { return }
        pcm.withUnsafeMutableBufferPointer { buffer in
            _ = plc_fillin(state, buffer.baseAddress, Int32(clamping: buffer.count))
        }
    }

    /// Buffer forms for the media loop (no allocation).
    public func receive(_ pcm: UnsafeMutableBufferPointer<Int16>) {
        guard let base = pcm.baseAddress, pcm.count > 0 else { return }
        _ = plc_rx(state, base, Int32(clamping: pcm.count))
    }

    public func fill(_ pcm: UnsafeMutableBufferPointer<Int16>) {
        guard let base = pcm.baseAddress, pcm.count > 0 else { return }
        _ = plc_fillin(state, base, Int32(clamping: pcm.count))
    }

    /// Synthesises `count` samples for lost audio.
    public func fill(count: Int) -> [Int16] {
        var pcm: [Int16] = []
        fill(count: count, into: &pcm)
        return pcm
    }
}

// MARK: - DTMF

/// The sixteen DTMF digits, in spandsp's spelling.
private let dtmfDigits: Set<Character> = Set("0123456789*#ABCD")

/// Collects digits from spandsp's C callback. A separate object so its address can be
/// handed to `dtmf_rx_init` before the detector itself is initialised; the detector keeps
/// it alive for as long as the spandsp state exists.
private final class DigitSink {
    var digits = ""
}

/// In-band DTMF detection on 8 kHz PCM (spandsp `dtmf_rx`): Q.23/Q.24 timing, twist and
/// level checks, so speech rarely talks it off. Not thread-safe: one owner.
public final class DTMFDetector {
    private let sink = DigitSink()
    private let state: OpaquePointer

    /// Creates a detector. `filterDialTone` suppresses 350/440 Hz dial tone first (costs
    /// CPU; only needed where dial tone may overlap digits).
    public init(filterDialTone: Bool = false) throws(SpanDSPError) {
        let callback: digits_rx_callback_t = { userData, digits, count in
            guard let userData, let digits, count > 0 else { return }
            let sink = Unmanaged<DigitSink>.fromOpaque(userData).takeUnretainedValue()
            let bytes = UnsafeRawPointer(digits).bindMemory(to: UInt8.self, capacity: Int(count))
            sink.digits += String(decoding: UnsafeBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
        }
        guard let state = dtmf_rx_init(nil, callback, Unmanaged.passUnretained(sink).toOpaque()) else {
            throw .allocationFailed("DTMF detector")
        }
        self.state = state
        // Negative / <= -99 values leave twist and threshold at spandsp's defaults.
        dtmf_rx_parms(state, filterDialTone ? 1 : 0, -1, -1, -99)
    }

    deinit { dtmf_rx_free(state) }

    /// Runs `pcm` through the detector; returns the digits confirmed in it (usually empty;
    /// a digit is reported once, when it starts).
    public func process(_ pcm: [Int16]) -> String {
        pcm.withUnsafeBufferPointer { process($0) }
    }

    /// Runs `pcm` through the detector; returns the digits confirmed in it.
    public func process(_ pcm: UnsafeBufferPointer<Int16>) -> String {
        if let samples = pcm.baseAddress, !pcm.isEmpty {
            _ = dtmf_rx(state, samples, Int32(clamping: pcm.count))
        }
        defer { sink.digits = "" }
        return sink.digits
    }

    /// Tells the detector `count` samples were lost, so a digit spanning the gap is
    /// neither split in two nor dropped.
    public func skip(count: Int) {
        guard count > 0 else { return }
        _ = dtmf_rx_fillin(state, Int32(clamping: count))
    }
}

/// DTMF tone generation at 8 kHz (spandsp `dtmf_tx`): queue digits, then pull PCM.
/// Not thread-safe: one owner.
public final class DTMFGenerator {
    /// Digits the generator can hold at once (spandsp `MAX_DTMF_DIGITS`).
    public static let queueCapacity = 128
    private let state: OpaquePointer

    /// Creates a generator. `level` is the low tone's level in dBm0 (default -10), `twist`
    /// how much louder the high tone is in dB (default 2), then each digit's tone and the
    /// following silence in ms (defaults 50 and 55, Q.24 minimums with margin).
    public init(
        level: Int32 = -10, twist: Int32 = 2, onMilliseconds: Int32 = 50, offMilliseconds: Int32 = 55
    ) throws(SpanDSPError) {
        guard let state = dtmf_tx_init(nil) else { throw .allocationFailed("DTMF generator") }
        self.state = state
        dtmf_tx_set_level(state, level, twist)
        dtmf_tx_set_timing(state, onMilliseconds, offMilliseconds)
    }

    deinit { dtmf_tx_free(state) }

    /// Queues `digits` (0-9 * # A-D) behind any already queued. All or nothing: throws,
    /// queuing nothing, if a character is not a DTMF digit or the digits do not all fit.
    public func queue(_ digits: String) throws(SpanDSPError) {
        if let bad = digits.first(where: { !dtmfDigits.contains($0) }) { throw .invalidDigit(bad) }
        guard !digits.isEmpty else { return }
        // Despite dtmf.h's doc, 0.0.6 returns how many digits did NOT fit, loading none then.
        let rejected = dtmf_tx_put(state, digits, -1)
        if rejected != 0 { throw .dtmfQueueFull(digits.count) }
    }

    /// Writes `count` samples into `pcm` (contents replaced, storage reused): queued
    /// digits, then silence once the queue is empty. Returns the samples of digit audio
    /// (tones and their gaps); fewer than `count` means the queue ran dry.
    @discardableResult
    public func generate(count: Int, into pcm: inout [Int16]) -> Int {
        resize(&pcm, to: max(count, 0))
        guard count > 0 else { return 0 }
        let produced = pcm.withUnsafeMutableBufferPointer { buffer in
            Int(dtmf_tx(state, buffer.baseAddress, Int32(clamping: buffer.count)))
        }
        for index in produced..<count { pcm[index] = 0 }
        return produced
    }
}

// MARK: - Fax and modem answer tones

/// Collects the tones spandsp's connect-tone detectors report from their C callback (see
/// `DigitSink` for why it is a separate object).
private final class ToneSink {
    var heard: FaxTone?
}

/// Fax tone detection on 8 kHz PCM (spandsp `modem_connect_tones_rx`): the calling fax's
/// CNG (1100 Hz, 0.5 s on, 3 s off), and the answering fax's CED or modem ANS/ANSam
/// (2100 Hz, with or without phase reversals or 15 Hz AM) or its V.21 preamble. spandsp
/// confirms CNG about 0.4 s into a burst and CED about 0.55 s after it starts. Not
/// thread-safe: one owner.
public final class FaxToneDetector {
    private let sink = ToneSink()
    private let calling: OpaquePointer
    private let answer: OpaquePointer

    /// Creates a detector listening for all of the tones above.
    public init() throws(SpanDSPError) {
        let callback: tone_report_func_t = { userData, code, _, _ in
            guard let userData else { return }
            let sink = Unmanaged<ToneSink>.fromOpaque(userData).takeUnretainedValue()
            let tone: FaxTone? =
                switch code {
                case Int32(MODEM_CONNECT_TONES_FAX_CNG): .callingTone
                case Int32(MODEM_CONNECT_TONES_ANS), Int32(MODEM_CONNECT_TONES_ANS_PR): .answerTone
                case Int32(MODEM_CONNECT_TONES_ANSAM), Int32(MODEM_CONNECT_TONES_ANSAM_PR): .answerTone
                case Int32(MODEM_CONNECT_TONES_FAX_PREAMBLE): .preamble
                default: nil  // NONE: a tone stopped
                }
            if sink.heard == nil, let tone { sink.heard = tone }
        }
        let user = Unmanaged.passUnretained(sink).toOpaque()
        guard let calling = modem_connect_tones_rx_init(nil, Int32(MODEM_CONNECT_TONES_FAX_CNG), callback, user)
        else { throw .allocationFailed("fax CNG detector") }
        guard
            let answer = modem_connect_tones_rx_init(
                nil, Int32(MODEM_CONNECT_TONES_FAX_CED_OR_PREAMBLE), callback, user)
        else {
            modem_connect_tones_rx_free(calling)
            throw .allocationFailed("fax CED detector")
        }
        self.calling = calling
        self.answer = answer
    }

    deinit {
        modem_connect_tones_rx_free(calling)
        modem_connect_tones_rx_free(answer)
    }

    /// Runs `pcm` (8 kHz) through the detectors; returns the first fax tone confirmed in it.
    public func process(_ pcm: UnsafeBufferPointer<Int16>) -> FaxTone? {
        guard let samples = pcm.baseAddress, !pcm.isEmpty else { return nil }
        _ = modem_connect_tones_rx(calling, samples, Int32(clamping: pcm.count))
        _ = modem_connect_tones_rx(answer, samples, Int32(clamping: pcm.count))
        defer { sink.heard = nil }
        return sink.heard
    }
}

/// Sets `array.count` to `count`, zero-filling growth and keeping capacity on shrink.
private func resize<T: FixedWidthInteger>(_ array: inout [T], to count: Int) {
    if array.count < count {
        array.append(contentsOf: repeatElement(0, count: count - array.count))
    } else if array.count > count {
        array.removeLast(array.count - count)
    }
}
