import CarrierTest
import Foundation
import Media
import Testing

@Suite struct AudioWAVTests {
    @Test func roundTripAndHeader() throws {
        let samples: [Int16] = [0, 1, -1, 32_767, -32_768, 1234]
        let bytes = try WAVFile(sampleRate: 8_000, samples: samples).encoded()
        #expect(bytes.count == 44 + 12)
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8) && Array(bytes[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(Array(bytes[4..<8]) == [48, 0, 0, 0])  // 36 + 12
        #expect(Array(bytes[16..<24]) == [16, 0, 0, 0, 1, 0, 1, 0])  // fmt size, PCM, mono
        #expect(Array(bytes[24..<32]) == [0x40, 0x1F, 0, 0, 0x80, 0x3E, 0, 0])  // 8000 Hz, 16000 B/s
        #expect(Array(bytes[32..<36]) == [2, 0, 16, 0])  // align 2, 16 bits
        #expect(Array(bytes[36..<44]) == Array("data".utf8) + [12, 0, 0, 0])
        #expect(Array(bytes[44..<50]) == [0, 0, 1, 0, 0xFF, 0xFF])
        let back = try WAVFile(bytes: bytes)
        #expect(back.samples == samples && back.sampleRate == 8_000)
        #expect(throws: WAVError.self) { try WAVFile(bytes: Array("RIFF....WAVX".utf8)) }
    }
}

@Suite struct RTPAudioDecoderTests {
    /// A PCMU packet: 12-byte header and `payload`.
    static func packet(seq: UInt16, ts: UInt32, ssrc: UInt32 = 0x1234, pt: UInt8 = 0, payload: [UInt8]) -> [UInt8] {
        var p: [UInt8] = [0x80, pt, UInt8(seq >> 8), UInt8(seq & 0xFF)]
        p += [24, 16, 8, 0].map { UInt8((ts >> $0) & 0xFF) }
        p += [24, 16, 8, 0].map { UInt8((ssrc >> $0) & 0xFF) }
        return p + payload
    }

    /// Ten 20 ms frames of a sine, μ-law.
    static let frames: [[UInt8]] = (0..<10).map { f in
        let pcm = (0..<160).map { i in Int16(8_000 * sin(2 * Double.pi * 440 * Double(f * 160 + i) / 8_000)) }
        var bytes: [UInt8] = []
        G711.encodeULaw(pcm, into: &bytes)
        return bytes
    }

    static func decoded(_ frame: Int) -> [Int16] {
        var pcm: [Int16] = []
        G711.decodeULaw(frames[frame], into: &pcm)
        return pcm
    }

    @Test func lossDuplicateAndReorder() {
        let base: UInt32 = 0xFFFF_FF00  // the timestamp wraps inside the stream
        func p(_ f: Int) -> [UInt8] {
            Self.packet(seq: UInt16(100 + f), ts: base &+ UInt32(f * 160), payload: Self.frames[f])
        }
        // Frame 3 lost, 5 twice, 7 and 8 swapped, a telephone-event and an unknown type among them.
        let event = Self.packet(seq: 50, ts: base, pt: 101, payload: [1, 0x80, 0, 160])
        let video = Self.packet(seq: 51, ts: base, pt: 96, payload: [1, 2, 3])
        let packets = [p(0), p(1), p(2), event, p(4), p(5), p(5), p(6), p(8), video, p(7), p(9)]
        let out = RTPAudioDecoder.decode(packets)
        #expect(out.sampleRate == 8_000 && out.skipped == 1)
        #expect(out.samples.count == 10 * 160)
        for f in 0..<10 {
            let got = Array(out.samples[(f * 160)..<((f + 1) * 160)])
            #expect(got == (f == 3 ? [Int16](repeating: 0, count: 160) : Self.decoded(f)), "frame \(f)")
        }
    }

    @Test func newSSRCAndJumpsStartAfterWhatIsThere() {
        let a = Self.packet(seq: 1, ts: 1_000, ssrc: 1, payload: Self.frames[0])
        let b = Self.packet(seq: 2, ts: 1_160, ssrc: 1, payload: Self.frames[1])
        let c = Self.packet(seq: 9, ts: 77_777, ssrc: 2, payload: Self.frames[2])  // another SSRC
        let d = Self.packet(seq: 10, ts: 77_777 + 8_000 * 60, ssrc: 2, payload: Self.frames[3])  // a minute on
        let out = RTPAudioDecoder.decode([a, b, c, d])
        #expect(out.samples == Self.decoded(0) + Self.decoded(1) + Self.decoded(2) + Self.decoded(3))
        #expect(out.skipped == 0)
    }

    @Test func pcmaAndG722() throws {
        let pcm = (0..<320).map { i in Int16(6_000 * sin(2 * Double.pi * 1_000 * Double(i) / 16_000)) }
        var g722: [UInt8] = []
        try G722Encoder().encode(pcm, into: &g722)
        var alaw: [UInt8] = []
        G711.encodeALaw(Array(pcm.prefix(160)), into: &alaw)
        let out = RTPAudioDecoder.decode([
            Self.packet(seq: 1, ts: 0, pt: 9, payload: g722), Self.packet(seq: 2, ts: 320, pt: 8, payload: alaw),
            Self.packet(seq: 3, ts: 480, pt: 13, payload: [40]), [0x00, 0x01]
        ])
        #expect(out.sampleRate == 16_000 && out.skipped == 1)  // the 2-byte non-RTP
        #expect(out.samples.count == 320 * 2 + 160 * 2)  // 160 A-law samples doubled after a 20 ms gap (ts 160...319)
        // A dynamic number named by the caller.
        let named = RTPAudioDecoder.decode(
            [Self.packet(seq: 1, ts: 0, pt: 97, payload: Self.frames[0])], payloadTypes: [97: "pcmu"])
        #expect(named.samples == Self.decoded(0) && named.skipped == 0)
    }
}
