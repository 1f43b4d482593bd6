import Testing

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

/// Comfort noise (RFC 3389): levels, repeatability, the CN payload.
@Suite struct ComfortNoiseTests {
    @Test(arguments: [UInt8(30), 50, 70])
    func comfortNoiseHasTheRequestedLevelAndIsRepeatable(level: UInt8) {
        var first = ComfortNoiseGenerator(level: level, seed: 7)
        var second = ComfortNoiseGenerator(level: level, seed: 7)
        var other = ComfortNoiseGenerator(level: level, seed: 8)
        var a: [Int16] = [], b: [Int16] = [], c: [Int16] = []
        var energy = 0.0
        var count = 0
        for _ in 0..<50 {
            first.nextFrame(into: &a)
            second.nextFrame(into: &b)
            other.nextFrame(into: &c)
            #expect(a.count == 160)
            #expect(a == b)
            for sample in a { energy += Double(sample) * Double(sample) }
            count += a.count
        }
        #expect(a != c)
        let rms = (energy / Double(count)).squareRoot()
        let dB = 20 * log10(rms / 32_767)
        #expect(abs(dB + Double(level)) < 1, "level -\(level) dBov measured \(dB)")
    }

    @Test func comfortNoiseSilenceAndCNUpdates() {
        var silence: [Int16] = [1, 2]
        ComfortNoiseGenerator.silence(into: &silence)
        #expect(silence == [Int16](repeating: 0, count: 160))
        var generator = ComfortNoiseGenerator(level: 40)
        generator.update(with: ComfortNoisePayload(noiseLevel: 127))
        #expect(generator.level == 127)
        var pcm: [Int16] = []
        generator.nextFrame(into: &pcm)
        #expect(pcm.allSatisfy { $0 == 0 })
        generator.level = 200
        #expect(generator.level == 127)
    }

    struct CNCase: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let level: UInt8
        let coefficients: [UInt8]
        var testDescription: String { "\(bytes)" }
    }

    static let cnCases: [CNCase] = [
        CNCase(bytes: [0x40], level: 64, coefficients: []),
        CNCase(bytes: [0x00], level: 0, coefficients: []),
        CNCase(bytes: [0x7F], level: 127, coefficients: []),
        CNCase(bytes: [0x28, 0x80, 0x70, 0x01], level: 40, coefficients: [0x80, 0x70, 0x01])
    ]

    @Test(arguments: cnCases)
    func comfortNoisePayloadParsesAndSerializes(_ item: CNCase) throws {
        let payload = try ComfortNoisePayload.parse(item.bytes)
        #expect(payload.noiseLevel == item.level)
        #expect(payload.levelDBov == -Int(item.level))
        #expect(payload.reflectionCoefficients == item.coefficients)
        #expect(payload.modelOrder == item.coefficients.count)
        #expect(payload.serialize() == item.bytes)
    }

    @Test func comfortNoisePayloadEdgeCases() throws {
        #expect(throws: ComfortNoiseError.empty) { try ComfortNoisePayload.parse([UInt8]()) }
        // The unused top bit is ignored rather than failing the stream.
        #expect(try ComfortNoisePayload.parse([0xC5]).noiseLevel == 0x45)
        #expect(try ComfortNoisePayload.parse([0x09, 0x10, 0x20][1...]).noiseLevel == 0x10)
    }
}
