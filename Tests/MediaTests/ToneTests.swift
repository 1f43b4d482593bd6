import Testing
@testable import Media
#if canImport(Glibc)
import Glibc
#endif

/// Alternating runs of tone and silence (a run of silence is 8+ exact zeros), as counts.
private func onOffRuns(_ pcm: [Int16]) -> [(on: Bool, count: Int)] {
    var runs: [(on: Bool, count: Int)] = []
    var index = 0
    while index < pcm.count {
        var end = index
        while end < pcm.count, pcm[end] == 0 { end += 1 }
        let on = end - index < 8
        if on { end = max(end, index + 1) }
        if let last = runs.last, last.on == on {
            runs[runs.count - 1].count += end - index
        } else {
            runs.append((on, end - index))
        }
        index = end
    }
    return runs
}

@Suite struct ToneTests {
    struct Cadence: Sendable, CustomTestStringConvertible {
        let ringback: Ringback
        /// On, off, ... sample counts of one cycle at 8 kHz.
        let cycle: [Int]
        let frequencies: [Double]
        var testDescription: String { ringback.rawValue }
    }

    static let cadences: [Cadence] = [
        Cadence(ringback: .us, cycle: [16_000, 32_000], frequencies: [440, 480]),
        Cadence(ringback: .uk, cycle: [3_200, 1_600, 3_200, 16_000], frequencies: [400, 450]),
        Cadence(ringback: .europe, cycle: [8_000, 32_000], frequencies: [425]),
    ]

    @Test(arguments: cadences)
    func ringbackCadences(_ cadence: Cadence) throws {
        let tone = try CallProgressTone(ringback: cadence.ringback)
        let cycleSamples = cadence.cycle.reduce(0, +)
        var pcm: [Int16] = []
        var all: [Int16] = []
        for _ in 0..<(2 * cycleSamples / 160) {
            #expect(tone.nextFrame(into: &pcm))
            #expect(pcm.count == 160)
            all += pcm
        }
        let runs = onOffRuns(all)
        // Two whole cycles; a sine's zero crossings can land on exact zeros, so on-runs
        // are measured to within a few samples.
        let expected = cadence.cycle + cadence.cycle
        #expect(runs.count == expected.count)
        for (index, (run, count)) in zip(runs, expected).enumerated() {
            #expect(run.on == index.isMultiple(of: 2))
            #expect(abs(run.count - count) <= 8, "run \(index): \(run.count) samples, expected \(count)")
        }
        // The first on-period holds the ringback's frequencies, together most of the energy.
        let first = Array(all.prefix(1_600))
        let share = cadence.frequencies.map { Goertzel(frequency: $0, sampleRate: 8_000).energyRatio(first) }.reduce(0, +)
        #expect(share > 0.9)
    }

    @Test func countriesMapToRingbacks() {
        #expect(Ringback.forCountry("us") == .us)
        #expect(Ringback.forCountry("CA") == .us)
        #expect(Ringback.forCountry("GB") == .uk)
        #expect(Ringback.forCountry("ie") == .uk)
        #expect(Ringback.forCountry("DE") == .europe)
        #expect(Ringback.forCountry("") == .europe)
    }

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
        CNCase(bytes: [0x28, 0x80, 0x70, 0x01], level: 40, coefficients: [0x80, 0x70, 0x01]),
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
