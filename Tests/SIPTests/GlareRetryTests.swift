import Testing

@testable import SIP

/// SplitMix64: a tiny seeded generator so "many draws" tests are deterministic.
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

struct GlareRetryTests {
    @Test(arguments: [
        (true, 210...400),
        (false, 0...200)
    ])
    func tickRangeFollowsCallIDOwnership(ownsCallID: Bool, expected: ClosedRange<Int>) {
        #expect(GlareRetry.tickRange(ownsCallID: ownsCallID) == expected)
    }

    @Test func generatorIsAskedForTheRFCRangeInTenMillisecondTicks() {
        var seen: [ClosedRange<Int>] = []
        _ = GlareRetry.delay(ownsCallID: true) {
            seen.append($0); return $0.lowerBound
        }
        _ = GlareRetry.delay(ownsCallID: false) {
            seen.append($0); return $0.lowerBound
        }
        #expect(seen == [210...400, 0...200])
    }

    @Test(arguments: [
        // (ownsCallID, ticks drawn, expected seconds)
        (true, 210, 2.1), (true, 400, 4.0), (true, 317, 3.17),
        (false, 0, 0.0), (false, 200, 2.0), (false, 1, 0.01)
    ])
    func deterministicDraws(ownsCallID: Bool, ticks: Int, seconds: Double) {
        #expect(GlareRetry.delay(ownsCallID: ownsCallID) { _ in ticks } == seconds)
    }

    @Test(arguments: [
        (true, 10_000, 4.0), (true, -7, 2.1), (true, 0, 2.1),
        (false, 201, 2.0), (false, -1, 0.0)
    ])
    func outOfRangeDrawsAreClamped(ownsCallID: Bool, ticks: Int, seconds: Double) {
        #expect(GlareRetry.delay(ownsCallID: ownsCallID) { _ in ticks } == seconds)
    }

    @Test func retryAtAddsTheDelayToNow() {
        #expect(GlareRetry.retryAt(now: 100, ownsCallID: true) { $0.upperBound } == 104)
        #expect(GlareRetry.retryAt(now: 100, ownsCallID: false) { $0.lowerBound } == 100)
    }

    @Test(arguments: [true, false])
    func manyDrawsStayInBoundsOnTheTenMillisecondGrid(ownsCallID: Bool) {
        var generator = SplitMix64(state: ownsCallID ? 42 : 7)
        let bounds = ownsCallID ? 2.1...4.0 : 0.0...2.0
        var lowest = Double.infinity
        var highest = -Double.infinity
        for _ in 0..<5000 {
            let d = GlareRetry.delay(ownsCallID: ownsCallID) { Int.random(in: $0, using: &generator) }
            #expect(bounds.contains(d))
            let ticks = d * 100
            #expect(abs(ticks - ticks.rounded()) < 1e-6)
            lowest = min(lowest, d)
            highest = max(highest, d)
        }
        // 5000 draws over ~200 ticks reach both ends of the range.
        #expect(lowest == bounds.lowerBound)
        #expect(highest == bounds.upperBound)
    }

    @Test func systemGeneratorStaysInBounds() {
        for _ in 0..<1000 {
            #expect((2.1...4.0).contains(GlareRetry.delay(ownsCallID: true)))
            #expect((0.0...2.0).contains(GlareRetry.delay(ownsCallID: false)))
        }
    }
}
