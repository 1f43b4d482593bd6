/// Ogg Opus (RFC 7845): an OpusHead page, an OpusTags page, then audio pages of up to one
/// second (50 packets of 20 ms), each closed at once when full and the one in progress
/// closed on each flush. Granule positions count 48 kHz samples from the first packet, so a
/// decoder plays `granule - preSkip` samples; the last page's granule trims the padding the
/// encoder's delay needs.
final class OggOpusRecordingEncoder: RecordingEncoder {
    /// 20 ms at 48 kHz: what each packet adds to the granule position.
    static let granulePerFrame: Int64 = 960
    /// A page is closed when it holds this many packets (one second).
    static let packetsPerPage = 50

    private let sampleRate: Int
    private let channels: Int
    private let encoder: OpusEncoder
    private var pages: OggPageWriter
    /// 48 kHz samples a decoder drops at the start: the encoder's lookahead.
    private let preSkip: Int64
    private var packetsEncoded: Int64 = 0
    private var packet: [UInt8] = []
    private var silence: [Int16]

    init(sampleRate: Int, channels: Int, bitrate: Int?) throws(CallRecordingError) {
        self.sampleRate = sampleRate
        self.channels = channels
        do {
            // A file loses nothing in transit: no FEC, no loss to plan for.
            encoder = try OpusEncoder(
                sampleRate: Int32(sampleRate), channels: Int32(channels), application: .voip,
                bitrate: Int32(clamping: bitrate ?? 24_000 * channels), inbandFEC: false, expectedLossPercent: 0)
        } catch {
            throw .codec(error.description)
        }
        preSkip = Int64(encoder.lookahead * 48_000 / sampleRate)
        pages = OggPageWriter(serial: UInt32.random(in: 1...UInt32.max))
        silence = [Int16](repeating: 0, count: sampleRate / 50 * channels)
    }

    func header() throws(CallRecordingError) -> [UInt8] {
        // RFC 7845 §5.1: OpusHead, alone on the first page (granule 0, beginning of stream).
        var head: [UInt8] = Array("OpusHead".utf8) + [1, UInt8(channels)]
        head += littleEndian(UInt64(preSkip), bytes: 2)
        head += littleEndian(UInt64(sampleRate), bytes: 4)
        head += [0, 0, 0]  // output gain 0, channel mapping family 0 (mono or stereo L/R)
        // §5.2: OpusTags, on a page of its own, with the encoder as vendor and no comments.
        let vendor = Array(Opus.versionString.utf8)
        let tags = Array("OpusTags".utf8) + littleEndian(UInt64(vendor.count), bytes: 4) + vendor + [0, 0, 0, 0]
        var out: [UInt8] = []
        head.withUnsafeBufferPointer { pages.add($0) }
        pages.closePage(granule: 0, flags: .beginningOfStream, into: &out)
        tags.withUnsafeBufferPointer { pages.add($0) }
        pages.closePage(granule: 0, into: &out)
        return out
    }

    func encode(_ pcm: UnsafeBufferPointer<Int16>, into out: inout [UInt8]) throws(CallRecordingError) {
        try add(pcm, into: &out)
        if pages.packets >= Self.packetsPerPage { closePage(into: &out) }
    }

    private func add(_ pcm: UnsafeBufferPointer<Int16>, into out: inout [UInt8]) throws(CallRecordingError) {
        do {
            _ = try encoder.encode(pcm, into: &packet)
        } catch {
            throw .codec(error.description)
        }
        if pages.wouldOverflow(packet.count) { closePage(into: &out) }
        packet.withUnsafeBufferPointer { pages.add($0) }
        packetsEncoded += 1
    }

    func flush(into out: inout [UInt8]) -> [(offset: Int, bytes: [UInt8])] {
        if pages.packets > 0 { closePage(into: &out) }
        return []
    }

    func finish(into out: inout [UInt8]) throws(CallRecordingError) -> [(offset: Int, bytes: [UInt8])] {
        // One packet of silence pushes the last real audio out of the encoder's delay; the
        // final granule then trims the file to exactly the audio given (§4.4).
        let audio = packetsEncoded * Self.granulePerFrame
        // It goes on the last page (added, never closing a page by itself).
        try withBuffer(silence) { (pcm) throws(CallRecordingError) in try add(pcm, into: &out) }
        pages.closePage(granule: preSkip + audio, flags: .endOfStream, into: &out)
        return []
    }

    private func closePage(into out: inout [UInt8]) {
        pages.closePage(granule: packetsEncoded * Self.granulePerFrame, into: &out)
    }

    private func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
    }
}
