import Testing

@testable import Media

/// A small deterministic generator (SplitMix64), so every run mutates the same way.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `bytes` with a few random octets changed, and sometimes cut short or extended.
private func mutate(_ bytes: [UInt8], using generator: inout SplitMix64) -> [UInt8] {
    var out = bytes
    for _ in 0..<Int.random(in: 1...4, using: &generator) where !out.isEmpty {
        out[Int.random(in: 0..<out.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
    }
    switch Int.random(in: 0..<4, using: &generator) {
    case 0: out.removeLast(Int.random(in: 0...out.count, using: &generator))
    case 1:
        out += (0..<Int.random(in: 1...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    default: break
    }
    return out
}

/// Mutated packets must be rejected with a typed error or decode to something that
/// survives its own round trip; nothing may trap.
@Suite struct RTPMutationTests {
    @Test func mutatedRTPNeverTraps() throws {
        var generator = SplitMix64(state: 3550)
        let seeds = try RTPPacketTests.roundTrips.map { try $0.packet.serialize() }
        var accepted = 0
        for index in 0..<20_000 {
            let bytes = mutate(seeds[index % seeds.count], using: &generator)
            guard let packet = try? RTPPacket(parsing: bytes) else { continue }
            accepted += 1
            #expect(try RTPPacket(parsing: packet.serialize()) == packet)
        }
        #expect(accepted > 0)
    }

    @Test func mutatedRTCPNeverTraps() throws {
        var generator = SplitMix64(state: 3551)
        let seeds = try RTCPPacketTests.compounds.map { try $0.packet.serialize() }
        var accepted = 0
        for index in 0..<20_000 {
            let bytes = mutate(seeds[index % seeds.count], using: &generator)
            guard let compound = try? RTCPCompoundPacket(parsing: bytes, allowReducedSize: index % 2 == 0) else {
                continue
            }
            accepted += 1
            // Padding may leave an opaque body unaligned, which cannot be written back.
            guard let again = try? compound.serialize() else { continue }
            #expect(try RTCPCompoundPacket(parsing: again, allowReducedSize: true) == compound)
        }
        #expect(accepted > 0)
    }
}
