import Foundation
import Media
import Testing

struct WAVFileTests {
    @Test func roundTripThroughAFile() throws {
        let samples = (0..<4_000).map { Int16(truncatingIfNeeded: $0 &* 977) } + [.min, .max, 0, -1]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iris-wav-\(UUID().uuidString.prefix(8)).wav"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try WAVFile(sampleRate: 48_000, samples: samples).write(to: path)
        #expect(FileManager.default.fileSize(path) == 44 + 2 * samples.count)
        let read = try WAVFile(contentsOf: path)
        #expect(read.sampleRate == 48_000)
        #expect(read.samples == samples)
    }

    @Test func stereoIsDownmixed() throws {
        var bytes = try WAVFile(sampleRate: 8_000, samples: []).encoded()
        // Rewrite the header for 2 channels and append interleaved frames.
        bytes[22] = 2
        bytes[32] = 4
        let frames: [(Int16, Int16)] = [(100, 300), (-1_000, 1_000), (.max, .max), (.min, .min)]
        for (left, right) in frames {
            for value in [left, right] {
                bytes.append(UInt8(truncatingIfNeeded: UInt16(bitPattern: value)))
                bytes.append(UInt8(truncatingIfNeeded: UInt16(bitPattern: value) >> 8))
            }
        }
        bytes[40] = UInt8(frames.count * 4)
        let wav = try WAVFile(bytes: bytes)
        #expect(wav.sampleRate == 8_000)
        #expect(wav.samples == [200, 0, .max, .min])
        #expect(wav.channels == [[100, -1_000, .max, .min], [300, 1_000, .max, .min]])
    }

    @Test func stereoRoundTripKeepsTheChannelsApart() throws {
        let left: [Int16] = [1, -2, .max, .min, 5]
        let right: [Int16] = [-7, 8, 9]
        let bytes = try WAVFile(sampleRate: 16_000, left: left, right: right).encoded()
        #expect(bytes.count == 44 + 5 * 4)
        #expect(Array(bytes[22..<36]) == [2, 0, 0x80, 0x3E, 0, 0, 0, 0xFA, 0, 0, 4, 0, 16, 0])
        let read = try WAVFile(bytes: bytes)
        #expect(read.sampleRate == 16_000 && read.duration == 5.0 / 16_000)
        #expect(read.channels == [left, right + [0, 0]])
    }

    @Test func otherFormatsAreRefused() throws {
        var eightBit = try WAVFile(sampleRate: 8_000, samples: [1, 2]).encoded()
        eightBit[34] = 8
        #expect(throws: WAVError.unsupportedBitsPerSample(8)) { try WAVFile(bytes: eightBit) }
        var float = try WAVFile(sampleRate: 8_000, samples: [1, 2]).encoded()
        float[20] = 3
        #expect(throws: WAVError.unsupportedEncoding(formatTag: 3)) { try WAVFile(bytes: float) }
        var sixChannels = try WAVFile(sampleRate: 8_000, samples: [1, 2]).encoded()
        sixChannels[22] = 6
        #expect(throws: WAVError.unsupportedChannelCount(6)) { try WAVFile(bytes: sixChannels) }
        #expect(throws: WAVError.notWAV) { try WAVFile(bytes: Array("RIFF0000AVI ".utf8)) }
        #expect(throws: WAVError.self) { try WAVFile(contentsOf: "/nonexistent/iris.wav") }
    }
}

extension FileManager {
    fileprivate func fileSize(_ path: String) -> Int {
        (try? attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }
}
