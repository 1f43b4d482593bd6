import Foundation
import Testing

@testable import Media

// MARK: - Helpers

/// `count` samples of a sine of peak `amplitude`.
private func sine(
    _ frequency: Double, amplitude: Double = 10_000, sampleRate: Double, count: Int
) -> [Int16] {
    (0..<count).map { n in
        Int16((amplitude * sin(2 * Double.pi * frequency * Double(n) / sampleRate)).rounded())
    }
}

/// Signal-to-noise ratio of `decoded` against `original`, in dB.
private func snr(_ original: [Int16], _ decoded: [Int16]) -> Double {
    var signal = 0.0, noise = 0.0
    for (x, y) in zip(original, decoded) {
        signal += Double(x) * Double(x)
        noise += (Double(x) - Double(y)) * (Double(x) - Double(y))
    }
    return 10 * log10(signal / max(noise, 1))
}

@Suite struct CodecTests {
    enum Law: String, CaseIterable, Sendable { case ulaw, alaw }

    private static func g711RoundTrip(_ pcm: [Int16], _ law: Law) -> [Int16] {
        var bytes: [UInt8] = []
        var decoded: [Int16] = []
        switch law {
        case .ulaw:
            G711.encodeULaw(pcm, into: &bytes)
            G711.decodeULaw(bytes, into: &decoded)
        case .alaw:
            G711.encodeALaw(pcm, into: &bytes)
            G711.decodeALaw(bytes, into: &decoded)
        }
        return decoded
    }

    // MARK: - G.711

    @Test(arguments: CodecTests.Law.allCases)
    func g711RoundTripKeepsSNRAbove30dB(law: Law) {
        let pcm = sine(1000, sampleRate: 8000, count: 8000)
        let decoded = Self.g711RoundTrip(pcm, law)
        #expect(decoded.count == pcm.count)
        #expect(snr(pcm, decoded) > 30)
    }

    @Test func g711BufferFormsMatchArrayFormsAndStopAtTheShorterBuffer() {
        let pcm = sine(1000, sampleRate: 8000, count: 160)
        var viaArray: [UInt8] = []
        G711.encodeULaw(pcm, into: &viaArray)
        var viaBuffer = [UInt8](repeating: 0, count: 100)
        let coded = pcm.withUnsafeBufferPointer { input in
            viaBuffer.withUnsafeMutableBufferPointer { G711.encodeULaw(input, into: $0) }
        }
        #expect(coded == 100)
        #expect(viaBuffer == Array(viaArray.prefix(100)))

        var decoded = [Int16](repeating: 0, count: 160)
        let count = viaArray.withUnsafeBufferPointer { input in
            decoded.withUnsafeMutableBufferPointer { G711.decodeALaw(input, into: $0) }
        }
        #expect(count == 160)
    }

    @Test func g711KnownCodeWords() {
        // Silence is 0xFF in µ-law and 0xD5 in A-law (G.711 tables, even bits inverted).
        var bytes: [UInt8] = []
        G711.encodeULaw([0], into: &bytes)
        #expect(bytes == [0xFF])
        G711.encodeALaw([0], into: &bytes)
        #expect(bytes == [0xD5])
    }

    // MARK: - G.722

    @Test(arguments: [Int32(16_000), 8_000])
    func g722RoundTripKeepsA1kHzTone(sampleRate: Int32) throws {
        let encoder = try G722Encoder(sampleRate: sampleRate)
        let decoder = try G722Decoder(sampleRate: sampleRate)
        let frame = Int(sampleRate) / 50
        let pcm = sine(1000, sampleRate: Double(sampleRate), count: Int(sampleRate))
        var bytes: [UInt8] = []
        var decodedFrame: [Int16] = []
        var decoded: [Int16] = []
        for start in stride(from: 0, to: pcm.count, by: frame) {
            let written = try encoder.encode(Array(pcm[start..<start + frame]), into: &bytes)
            // 64 kbit/s: 160 bytes per 20 ms either way.
            #expect(written == 160)
            #expect(decoder.decode(bytes, into: &decodedFrame) == frame)
            decoded += decodedFrame
        }
        let steady = Array(decoded.dropFirst(frame * 2))
        let rate = Double(sampleRate)
        #expect(Goertzel(frequency: 1000, sampleRate: rate).energyRatio(steady) > 0.9)
        #expect(Goertzel(frequency: 2000, sampleRate: rate).energyRatio(steady) < 0.01)
    }

    // MARK: - Opus

    @Test(arguments: [Int32(8_000), 16_000, 48_000])
    func opusRoundTripKeepsA1kHzTone(sampleRate: Int32) throws {
        let encoder = try OpusEncoder(sampleRate: sampleRate)
        let decoder = try OpusDecoder(sampleRate: sampleRate)
        let frame = Opus.samples(milliseconds: 20, sampleRate: sampleRate)
        let pcm = sine(1000, sampleRate: Double(sampleRate), count: frame * 50)
        var packet: [UInt8] = []
        var decodedFrame: [Int16] = []
        var decoded: [Int16] = []
        for start in stride(from: 0, to: pcm.count, by: frame) {
            let length = try encoder.encode(Array(pcm[start..<start + frame]), into: &packet)
            #expect(length == packet.count)
            #expect((3...Opus.maxPacketSize).contains(length))
            #expect(try decoder.decode(packet, into: &decodedFrame) == frame)
            #expect(decodedFrame.count == frame)
            decoded += decodedFrame
        }
        // Skip the codec's look-ahead and start-up.
        let steady = Array(decoded.dropFirst(frame * 5))
        let rate = Double(sampleRate)
        #expect(Goertzel(frequency: 1000, sampleRate: rate).energyRatio(steady) > 0.8)
        #expect(Goertzel(frequency: 2000, sampleRate: rate).energyRatio(steady) < 0.05)
        // 20 ms is 960 ticks of the 48 kHz RTP clock whatever the codec's rate.
        #expect(encoder.rtpTimestampIncrement(forSamples: frame) == 960)
    }

    @Test func g711ToOpusToG711ChainKeepsA1kHzTone() throws {
        let encoder = try OpusEncoder(sampleRate: 8000)
        let decoder = try OpusDecoder(sampleRate: 8000)
        let pcm = sine(1000, sampleRate: 8000, count: 8000)
        var ulaw: [UInt8] = []
        var linear: [Int16] = []
        var packet: [UInt8] = []
        var out: [Int16] = []
        for start in stride(from: 0, to: pcm.count, by: 160) {
            // PSTN side: µ-law in, straight into an 8 kHz Opus encoder with no resampling.
            G711.encodeULaw(Array(pcm[start..<start + 160]), into: &ulaw)
            G711.decodeULaw(ulaw, into: &linear)
            _ = try encoder.encode(linear, into: &packet)
            try decoder.decode(packet, into: &linear)
            G711.encodeULaw(linear, into: &ulaw)
            G711.decodeULaw(ulaw, into: &linear)
            out += linear
        }
        let steady = Array(out.dropFirst(160 * 5))
        #expect(steady.count == 8000 - 800)
        #expect(Goertzel(frequency: 1000, sampleRate: 8000).energyRatio(steady) > 0.8)
        #expect(Goertzel(frequency: 2000, sampleRate: 8000).energyRatio(steady) < 0.05)
    }

    @Test func opusFECAndConcealmentProduceFullFrames() throws {
        let encoder = try OpusEncoder(sampleRate: 8000, bitrate: 24_000, inbandFEC: true, expectedLossPercent: 20)
        let decoder = try OpusDecoder(sampleRate: 8000)
        let pcm = sine(1000, sampleRate: 8000, count: 160 * 20)
        var packets: [[UInt8]] = []
        var packet: [UInt8] = []
        for start in stride(from: 0, to: pcm.count, by: 160) {
            _ = try encoder.encode(Array(pcm[start..<start + 160]), into: &packet)
            packets.append(packet)
        }
        var frame: [Int16] = []
        for index in 0..<10 { try decoder.decode(packets[index], into: &frame) }

        // Packet 10 is lost; packet 11 carries its FEC copy.
        #expect(try decoder.decodeFEC(nextPacket: packets[11], into: &frame) == 160)
        #expect(frame.count == 160)
        #expect(Goertzel(frequency: 1000, sampleRate: 8000).energyRatio(frame) > 0.5)
        try decoder.decode(packets[11], into: &frame)

        // Packet 12 is lost with nothing to recover it from: conceal.
        #expect(try decoder.concealLoss(into: &frame) == 160)
        #expect(frame.count == 160)
        #expect(try decoder.concealLoss(frameSize: 480, into: &frame) == 480)
        #expect(frame.count == 480)
        #expect(decoder.lastFrameSize == 480)
    }

    @Test func opusEncodeReusesTheOutputBuffer() throws {
        let encoder = try OpusEncoder()
        var packet: [UInt8] = []
        packet.reserveCapacity(Opus.maxPacketSize)
        let capacity = packet.capacity
        let pcm = sine(1000, sampleRate: 8000, count: 160)
        for _ in 0..<5 { _ = try encoder.encode(pcm, into: &packet) }
        #expect(packet.capacity == capacity)
    }

    // MARK: - Packet loss concealment

    @Test func plcFillsTheRequestedCountFromHistory() throws {
        let plc = try PacketLossConcealer()
        let pcm = sine(1000, sampleRate: 8000, count: 800)
        for start in stride(from: 0, to: pcm.count, by: 160) {
            var frame = Array(pcm[start..<start + 160])
            plc.receive(&frame)
        }
        let filled = plc.fill(count: 160)
        #expect(filled.count == 160)
        #expect(Goertzel(frequency: 1000, sampleRate: 8000).energyRatio(filled) > 0.5)
        #expect(plc.fill(count: 0).isEmpty)
    }

    // MARK: - DTMF

    static let allDigits = Array("0123456789*#ABCD").map(String.init)

    /// Generates `digits`, optionally through µ-law, and returns what the detector hears.
    private static func detect(_ digits: String, throughULaw: Bool) throws -> String {
        let generator = try DTMFGenerator()
        let detector = try DTMFDetector()
        try generator.queue(digits)
        var pcm: [Int16] = []
        var ulaw: [UInt8] = []
        var heard = ""
        // 105 ms per digit plus a trailing second of silence.
        for _ in 0..<(digits.count * 105 / 20 + 50) {
            generator.generate(count: 160, into: &pcm)
            if throughULaw {
                G711.encodeULaw(pcm, into: &ulaw)
                G711.decodeULaw(ulaw, into: &pcm)
            }
            heard += detector.process(pcm)
        }
        return heard
    }

    @Test(arguments: CodecTests.allDigits, [false, true])
    func dtmfGenerateThenDetectEachDigit(digit: String, throughULaw: Bool) throws {
        #expect(try Self.detect(digit, throughULaw: throughULaw) == digit)
    }

    @Test(arguments: [false, true])
    func dtmfGenerateThenDetectAllDigitsInOneStream(throughULaw: Bool) throws {
        let digits = Self.allDigits.joined()
        #expect(try Self.detect(digits, throughULaw: throughULaw) == digits)
    }

    @Test func dtmfGeneratorRunsDryWithSilence() throws {
        let generator = try DTMFGenerator()
        try generator.queue("5")
        var pcm: [Int16] = []
        // 50 ms tone + 55 ms gap = 840 samples, then silence.
        #expect(generator.generate(count: 1600, into: &pcm) == 840)
        #expect(pcm.count == 1600)
        #expect(pcm[840...].allSatisfy { $0 == 0 })
        #expect(generator.generate(count: 160, into: &pcm) == 0)
    }

    @Test func dtmfDetectorIgnoresAPureTone() throws {
        let detector = try DTMFDetector()
        #expect(detector.process(sine(1000, sampleRate: 8000, count: 8000)) == "")
    }

    // MARK: - Goertzel

    @Test func goertzelMeasuresAmplitude() {
        let pcm = sine(1000, amplitude: 5000, sampleRate: 8000, count: 800)
        #expect(abs(Goertzel(frequency: 1000, sampleRate: 8000).amplitude(pcm) - 5000) < 5)
        #expect(Goertzel(frequency: 1500, sampleRate: 8000).amplitude(pcm) < 5)
        #expect(Goertzel(frequency: 1000, sampleRate: 8000).energyRatio([Int16](repeating: 0, count: 80)) == 0)
    }

    // MARK: - Errors

    @Test(arguments: [Int32(44_100), 0, 7_999, -8_000])
    func opusRejectsBadSampleRates(sampleRate: Int32) {
        #expect(throws: OpusError.self) { try OpusEncoder(sampleRate: sampleRate) }
        do {
            _ = try OpusDecoder(sampleRate: sampleRate)
            Issue.record("decoder accepted \(sampleRate) Hz")
        } catch {
            #expect(error.code == -1)
            #expect(error.message == "invalid argument")
            #expect(error.description.contains("decoder create"))
        }
    }

    @Test func opusRejectsBadInput() throws {
        #expect(throws: OpusError.self) { try OpusEncoder(channels: 3) }
        #expect(throws: OpusError.self) { try OpusEncoder(complexity: 11) }
        let encoder = try OpusEncoder()
        var packet: [UInt8] = []
        // 100 samples is not an Opus frame duration at 8 kHz.
        #expect(throws: OpusError.self) { try encoder.encode([Int16](repeating: 0, count: 100), into: &packet) }
        #expect(packet.isEmpty)
        #expect(throws: OpusError.self) { try encoder.encode([], into: &packet) }

        let decoder = try OpusDecoder()
        var pcm: [Int16] = []
        #expect(throws: OpusError.self) { try decoder.decode([], into: &pcm) }
        // TOC code 3 with a frame count of 0 is malformed (RFC 6716 §3.2.5).
        #expect(throws: OpusError(code: -4, operation: "decode")) { try decoder.decode([0x03, 0x00], into: &pcm) }
        #expect(pcm.isEmpty)
        #expect(throws: OpusError.self) { try decoder.concealLoss(frameSize: 0, into: &pcm) }
        #expect(throws: OpusError.self) { try decoder.concealLoss(frameSize: 100_000, into: &pcm) }
    }

    @Test func spandspRejectsBadInput() throws {
        #expect(throws: SpanDSPError.unsupportedBitRate(32_000)) { try G722Encoder(bitRate: 32_000) }
        #expect(throws: SpanDSPError.unsupportedSampleRate(44_100)) { try G722Decoder(sampleRate: 44_100) }
        var bytes: [UInt8] = []
        #expect(throws: SpanDSPError.oddSampleCount(3)) { try G722Encoder().encode([1, 2, 3], into: &bytes) }
        #expect(throws: SpanDSPError.invalidDigit("x")) { try DTMFGenerator().queue("12x") }
        let generator = try DTMFGenerator()
        try generator.queue(String(repeating: "1", count: 100))
        #expect(throws: SpanDSPError.dtmfQueueFull(29)) { try generator.queue(String(repeating: "2", count: 29)) }
        // All or nothing: the 28 that do fit are still accepted afterwards.
        try generator.queue(String(repeating: "3", count: 28))
    }
}
