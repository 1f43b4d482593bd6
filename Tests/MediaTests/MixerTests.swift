import Testing

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

/// One frame of a sine of peak `amplitude`, continuing from sample `offset`.
private func toneFrame(
    _ frequency: Double, amplitude: Double = 8_000, sampleRate: Double = 8_000, count: Int = 160, offset: Int = 0
) -> [Int16] {
    (0..<count).map { n in
        Int16((amplitude * sin(2 * Double.pi * frequency * Double(n + offset) / sampleRate)).rounded())
    }
}

@Suite struct MixerTests {
    static let frequencies = [400.0, 700.0, 1100.0]

    private static func output(_ mixer: Mixer, _ party: Mixer.Party) throws -> [Int16] {
        var pcm: [Int16] = []
        try mixer.copyOutput(for: party, into: &pcm)
        return pcm
    }

    private static func amplitude(_ pcm: [Int16], at frequency: Double, sampleRate: Double = 8_000) -> Double {
        Goertzel(frequency: frequency, sampleRate: sampleRate).amplitude(pcm)
    }

    @Test(arguments: [8_000, 16_000])
    func eachPartyHearsTheOthersAndNotItself(sampleRate: Int) throws {
        let mixer = Mixer(configuration: .init(sampleRate: sampleRate))
        #expect(mixer.frameSamples == sampleRate / 50)
        let parties = try (0..<3).map { _ in try mixer.join() }
        for tick in 0..<5 {
            for (party, frequency) in zip(parties, Self.frequencies) {
                try mixer.submit(
                    toneFrame(
                        frequency, sampleRate: Double(sampleRate), count: mixer.frameSamples,
                        offset: tick * mixer.frameSamples),
                    from: party)
            }
            mixer.mix()
            for (index, party) in parties.enumerated() {
                let heard = try Self.output(mixer, party)
                #expect(heard.count == mixer.frameSamples)
                for (other, frequency) in Self.frequencies.enumerated() {
                    let level = Self.amplitude(heard, at: frequency, sampleRate: Double(sampleRate))
                    if other == index {
                        #expect(level < 1, "party \(index) hears itself at \(level)")
                    } else {
                        #expect(abs(level - 8_000) < 20, "party \(index) hears party \(other) at \(level)")
                    }
                }
            }
        }
    }

    @Test func sumsSaturateInsteadOfWrapping() throws {
        let mixer = Mixer()
        let loud = try (0..<2).map { _ in try mixer.join() }
        let listener = try mixer.join()
        for party in loud { try mixer.submit([Int16](repeating: 30_000, count: 160), from: party) }
        mixer.mix()
        #expect(try Self.output(mixer, listener).allSatisfy { $0 == Int16.max })
        #expect(try Self.output(mixer, loud[0]).allSatisfy { $0 == 30_000 })
        for party in loud { try mixer.submit([Int16](repeating: -30_000, count: 160), from: party) }
        mixer.mix()
        #expect(try Self.output(mixer, listener).allSatisfy { $0 == Int16.min })

        let full = Mixer()
        let everyone = try (0..<8).map { _ in try full.join() }
        for party in everyone { try full.submit([Int16](repeating: .max, count: 160), from: party) }
        full.mix()
        for party in everyone { #expect(try Self.output(full, party).allSatisfy { $0 == .max }) }
    }

    @Test func partiesJoinAndLeaveMidStream() throws {
        let mixer = Mixer()
        let a = try mixer.join()
        let b = try mixer.join()
        var c: Mixer.Party?
        var oldC: Mixer.Party?
        var heardCByTick: [Bool] = []
        for tick in 0..<10 {
            if tick == 3 { c = try mixer.join() }
            if tick == 6, let party = c {
                #expect(mixer.leave(party))
                #expect(!mixer.leave(party))
                oldC = party
                c = nil
            }
            try mixer.submit(toneFrame(400, offset: tick * 160), from: a)
            try mixer.submit(toneFrame(700, offset: tick * 160), from: b)
            if let c { try mixer.submit(toneFrame(1100, offset: tick * 160), from: c) }
            mixer.mix()
            let heardByA = try Self.output(mixer, a)
            heardCByTick.append(Self.amplitude(heardByA, at: 1100) > 4_000)
            #expect(Self.amplitude(heardByA, at: 700) > 7_900)
            #expect(mixer.partyCount == (c == nil ? 2 : 3))
        }
        #expect(heardCByTick == [false, false, false, true, true, true, false, false, false, false])

        let stale = try #require(oldC)
        #expect(throws: MixerError.unknownParty) { try mixer.submit([1], from: stale) }
        #expect(mixer.withOutput(for: stale) { $0.count } == nil)
        // The slot is reused, but the old handle stays dead.
        let d = try mixer.join()
        #expect(d.slot == stale.slot)
        #expect(!mixer.contains(stale))
        #expect(mixer.contains(d))
    }

    @Test func aPartyThatSendsNothingIsSilentAndHearsTheRest() throws {
        let mixer = Mixer()
        let talker = try mixer.join()
        let quiet = try mixer.join()
        try mixer.submit(toneFrame(700), from: talker)
        mixer.mix()
        #expect(try Self.output(mixer, quiet) == toneFrame(700))
        #expect(try Self.output(mixer, talker).allSatisfy { $0 == 0 })
        // Submissions last one tick only.
        mixer.mix()
        #expect(try Self.output(mixer, quiet).allSatisfy { $0 == 0 })
    }

    @Test func shortFramesArePaddedLongFramesAndOverflowRefused() throws {
        let mixer = Mixer(configuration: .init(maximumParties: 2, sampleRate: 16_000))
        let a = try mixer.join()
        let b = try mixer.join()
        #expect(throws: MixerError.full(capacity: 2)) { try mixer.join() }
        #expect(throws: MixerError.frameTooLong(count: 321, frameSamples: 320)) {
            try mixer.submit([Int16](repeating: 1, count: 321), from: a)
        }
        try mixer.submit([5, 6, 7], from: a)
        mixer.mix()
        let heard = try Self.output(mixer, b)
        #expect(heard.count == 320)
        #expect(Array(heard.prefix(3)) == [5, 6, 7])
        #expect(heard.dropFirst(3).allSatisfy { $0 == 0 })
        #expect(mixer.withOutput(for: b) { $0.count } == 320)
    }
}
