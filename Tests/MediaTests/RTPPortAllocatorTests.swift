import Testing

@testable import Media

@Suite struct RTPPortAllocatorTests {
    private func allocator(
        _ range: ClosedRange<UInt16>, quarantine: Double = 10, randomOrder: Bool = false
    ) throws -> RTPPortAllocator {
        try RTPPortAllocator(
            configuration: RTPPortAllocator.Configuration(
                range: range, quarantine: quarantine, randomOrder: randomOrder))
    }

    /// The default order is random: a prober learns nothing of the next call's ports from
    /// the last one's, and every free pair is still handed out before the range runs dry.
    @Test func pairsComeInAnOrderNoOneCanGuess() throws {
        var ports = try RTPPortAllocator(configuration: .init(range: 10000...10999))
        let handedOut = try (0..<500).map { _ in try ports.allocate(now: 0).rtp }
        #expect(Set(handedOut).count == 500)
        #expect(handedOut != handedOut.sorted(), "handed out in port order")
        let steps = zip(handedOut, handedOut.dropFirst()).filter { $1 == $0 &+ 2 }.count
        #expect(steps < 50, "\(steps) of 499 pairs followed the one before")
        #expect(throws: RTPPortAllocatorError.exhausted(inUse: 500, quarantined: 0)) { try ports.allocate(now: 0) }
    }

    @Test(arguments: [
        (10000...10009 as ClosedRange<UInt16>, [10000, 10002, 10004, 10006, 10008] as [UInt16]),
        (10001...10010, [10002, 10004, 10006, 10008]),  // odd start skipped; 10010 lacks 10011
        (10001...10011, [10002, 10004, 10006, 10008, 10010]),
        (2...3, [2]),
        (65534...65535, [65534])
    ])
    func handsOutEvenPairsInsideTheRange(_ range: ClosedRange<UInt16>, _ expected: [UInt16]) throws {
        var ports = try allocator(range)
        #expect(ports.capacity == expected.count)
        var handedOut: [UInt16] = []
        for _ in expected {
            let pair = try ports.allocate(now: 0)
            #expect(pair.rtp % 2 == 0)
            #expect(pair.rtcp == pair.rtp + 1)
            #expect(range.contains(pair.rtp) && range.contains(pair.rtcp))
            #expect(ports.isAllocated(pair))
            handedOut.append(pair.rtp)
        }
        #expect(handedOut == expected)
        #expect(throws: RTPPortAllocatorError.exhausted(inUse: expected.count, quarantined: 0)) {
            try ports.allocate(now: 0)
        }
    }

    @Test(arguments: [
        (0...100 as ClosedRange<UInt16>),
        (10000...10000), (10001...10002), (65535...65535), (7...7)
    ])
    func rangeWithoutAPairIsRejected(_ range: ClosedRange<UInt16>) {
        #expect(throws: RTPPortAllocatorError.invalidRange(lower: range.lowerBound, upper: range.upperBound)) {
            try allocator(range)
        }
    }

    @Test func quarantineIsRespected() throws {
        var ports = try allocator(20000...20003, quarantine: 10)
        let a = try ports.allocate(now: 100)
        let b = try ports.allocate(now: 100)
        try ports.release(a, now: 200)
        #expect(!ports.isAllocated(a))
        #expect(ports.quarantinedCount == 1)
        #expect(throws: RTPPortAllocatorError.exhausted(inUse: 1, quarantined: 1)) { try ports.allocate(now: 205) }
        #expect(throws: RTPPortAllocatorError.exhausted(inUse: 1, quarantined: 1)) { try ports.allocate(now: 209.999) }
        #expect(try ports.allocate(now: 210) == a)
        #expect(ports.quarantinedCount == 0)
        try ports.release(b, now: 211)
        try ports.release(a, now: 215)
        // b's quarantine ends first.
        #expect(try ports.allocate(now: 221) == b)
        #expect(throws: RTPPortAllocatorError.exhausted(inUse: 1, quarantined: 1)) { try ports.allocate(now: 224) }
        #expect(try ports.allocate(now: 225) == a)
    }

    @Test func releasedPairsGoToTheBackOfTheQueue() throws {
        var ports = try allocator(30000...30005, quarantine: 0)
        let first = try ports.allocate(now: 0)
        try ports.release(first, now: 0)
        // No quarantine, but the least recently used pair comes first.
        #expect(try ports.allocate(now: 0).rtp == 30002)
        #expect(try ports.allocate(now: 0).rtp == 30004)
        #expect(try ports.allocate(now: 0) == first)
    }

    @Test func releasingWhatIsNotAllocatedFails() throws {
        var ports = try allocator(40000...40009)
        let pair = try ports.allocate(now: 0)
        try ports.release(pair, now: 1)
        #expect(throws: RTPPortAllocatorError.notAllocated(pair)) { try ports.release(pair, now: 2) }
        let never = RTPPortPair(rtp: 40002)
        #expect(throws: RTPPortAllocatorError.notAllocated(never)) { try ports.release(never, now: 2) }
        let outside = RTPPortPair(rtp: 50000)
        #expect(throws: RTPPortAllocatorError.notAllocated(outside)) { try ports.release(outside, now: 2) }
        let odd = RTPPortPair(rtp: 40003)
        #expect(throws: RTPPortAllocatorError.notAllocated(odd)) { try ports.release(odd, now: 2) }
    }

    @Test func longChurnKeepsEveryPairInCirculation() throws {
        var ports = try allocator(10000...10019, quarantine: 1)
        var seen: Set<UInt16> = []
        var now = 0.0
        for _ in 0..<1000 {
            let pair = try ports.allocate(now: now)
            seen.insert(pair.rtp)
            try ports.release(pair, now: now)
            now += 0.5
        }
        #expect(seen.count == 10)
        #expect(ports.inUseCount == 0)
        #expect(ports.quarantinedCount <= 2)
    }

    @Test func errorsExplainThemselves() {
        #expect(
            RTPPortAllocatorError.exhausted(inUse: 3, quarantined: 2).description
                == "no free RTP port pair: 3 in use, 2 in quarantine")
        #expect(RTPPortAllocatorError.invalidRange(lower: 7, upper: 7).description.contains("7...7"))
    }
}
