import Testing

@testable import Media

// MARK: - Deterministic simulation

/// SplitMix64: a small seeded generator, so every scenario replays identically.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// One packet on the simulated wire.
private struct WirePacket {
    var header: JitterBuffer.Packet
    var index: Int
    var send: Double
    var arrival: Double
    var payload: [UInt8] { Sim.payload(header.sequenceNumber, header.ssrc) }
}

/// What one pop answered, reduced to what the tests compare.
private enum Out: Equatable {
    case frame(UInt16, ssrc: UInt32)
    case conceal(next: UInt16?)
    case silence

    var isFrame: Bool { if case .frame = self { true } else { false } }
    var isConceal: Bool { if case .conceal = self { true } else { false } }
    var sequence: UInt16? { if case .frame(let s, _) = self { s } else { nil } }
}

private enum Sim {
    static let ssrc: UInt32 = 0x1BAD_CAFE

    /// Payload naming its packet, so a played frame can be checked byte for byte.
    static func payload(_ sequence: UInt16, _ ssrc: UInt32) -> [UInt8] {
        var bytes = [UInt8(sequence >> 8), UInt8(sequence & 0xFF), UInt8(ssrc & 0xFF)]
        bytes += Array(repeating: UInt8(sequence & 0x7F), count: 157)
        return bytes
    }

    /// `count` packets of one stream. The sender's clock runs `senderSpeed` times ours;
    /// `delay(i)` is packet i's network delay, nil when it is lost.
    static func stream(
        count: Int, firstSequence: UInt16 = 1_000, firstTimestamp: UInt32 = 777_000,
        ssrc: UInt32 = ssrc, clockRate: Int = 8_000, frame: Double = 0.020,
        start: Double = 0, senderSpeed: Double = 1, firstIndex: Int = 0,
        delay: (Int) -> Double? = { _ in 0.030 }
    ) -> [WirePacket] {
        let step = UInt32((frame * Double(clockRate)).rounded())
        var packets: [WirePacket] = []
        for i in 0..<count {
            let send = start + Double(i) * frame / senderSpeed
            guard let d = delay(firstIndex + i) else { continue }
            let header = JitterBuffer.Packet(
                sequenceNumber: firstSequence &+ UInt16(truncatingIfNeeded: i),
                timestamp: firstTimestamp &+ UInt32(i) &* step,
                marker: i == 0, ssrc: ssrc, payloadType: 0)
            packets.append(WirePacket(header: header, index: firstIndex + i, send: send, arrival: send + d))
        }
        return packets
    }
}

/// Feeds packets in arrival order and pops on a fixed tick, checking the buffer's bounds
/// after every step.
private struct Driver {
    var buffer: JitterBuffer
    var outputs: [Out] = []
    var depthsAtPop: [Double] = []
    var targetsAtPop: [Double] = []
    var maxDepth = 0.0
    var payloadMismatches = 0
    var insertOutcomes: [JitterBuffer.InsertOutcome] = []

    init(_ configuration: JitterBufferConfiguration = .init()) {
        buffer = JitterBuffer(configuration: configuration)
    }

    /// Runs ticks `start + k·tick` for k in 0..<ticks; packets are inserted when their
    /// arrival time has come. The run stops early once every packet was inserted and the
    /// buffer is drained, so the end of a scenario's stream is not an underrun.
    mutating func run(_ packets: [WirePacket], start: Double = 0.005, tick: Double = 0.020, ticks: Int) {
        let ordered = packets.enumerated().sorted {
            ($0.element.arrival, $0.offset) < ($1.element.arrival, $1.offset)
        }.map(\.element)
        var next = 0
        for k in 0..<ticks {
            let now = start + Double(k) * tick
            while next < ordered.count, ordered[next].arrival <= now {
                insert(ordered[next])
                next += 1
            }
            if next == ordered.count, buffer.depth == 0, buffer.isPlaying { return }
            pop(now: now)
        }
    }

    mutating func insert(_ packet: WirePacket) {
        insertOutcomes.append(buffer.insert(packet.header, payload: packet.payload, arrival: packet.arrival))
        noteDepth()
    }

    mutating func pop(now: Double) {
        depthsAtPop.append(buffer.depth)
        targetsAtPop.append(buffer.targetDelay)
        let answer = buffer.pop(now: now)
        switch answer {
        case .frame(let frame):
            let expected = Sim.payload(frame.sequenceNumber, frame.ssrc)
            if Array(buffer.payload(of: frame)) != expected { payloadMismatches += 1 }
            outputs.append(.frame(frame.sequenceNumber, ssrc: frame.ssrc))
        case .conceal(let next):
            outputs.append(.conceal(next: next?.sequenceNumber))
        case .silence:
            outputs.append(.silence)
        }
        noteDepth()
    }

    mutating func noteDepth() { maxDepth = max(maxDepth, buffer.depth) }

    var stats: JitterBuffer.Statistics { buffer.statistics }
    var played: [UInt16] { outputs.compactMap(\.sequence) }
    var concealments: Int { outputs.filter(\.isConceal).count }

    /// Outputs from the first frame to the last frame (the playing stretch).
    var playingStretch: ArraySlice<Out> {
        guard let first = outputs.firstIndex(where: \.isFrame),
            let last = outputs.lastIndex(where: \.isFrame)
        else { return [] }
        return outputs[first...last]
    }

    /// Walks the playing stretch: every frame or concealment stands for the next sequence
    /// number, and each frame must be that number. True when no frame is skipped, repeated
    /// or out of order, and nothing else (silence) interrupts the stretch.
    var isContinuous: Bool { continuity(silenceStandsIn: false) }

    /// Played sequence numbers each one more than the last: nothing skipped or repeated.
    var playedConsecutively: Bool {
        zip(played, played.dropFirst()).allSatisfy { $0 &+ 1 == $1 }
    }

    /// Played sequence numbers increasing (within a short step): no repeat, no reversal.
    var playedInOrder: Bool {
        zip(played, played.dropFirst()).allSatisfy { ($1 &- $0) >= 1 && ($1 &- $0) < 100 }
    }

    /// As `isContinuous`; with `silenceStandsIn`, a silence inside the stretch may stand
    /// for a lost frame (after a long run of losses the buffer stops concealing).
    func continuity(silenceStandsIn: Bool) -> Bool {
        var expected: UInt16?
        for out in playingStretch {
            switch out {
            case .frame(let s, _):
                if let e = expected, e != s { return false }
                expected = s &+ 1
            case .conceal:
                guard let e = expected else { return false }
                expected = e &+ 1
            case .silence:
                guard silenceStandsIn, let e = expected else { return false }
                expected = e &+ 1
            }
        }
        return true
    }
}

// MARK: - Tests

@Suite struct JitterBufferTests {
    @Test func steadyStreamPlaysEveryTickAtTheMinimumDelay() {
        var driver = Driver()
        driver.run(Sim.stream(count: 500), ticks: 520)
        let stats = driver.stats
        #expect(driver.played.count == 500)
        let continuous = driver.isContinuous
        #expect(continuous)
        #expect(driver.outputs.prefix(while: { !$0.isFrame }).count <= 3)
        #expect(driver.playingStretch.count == 500)
        #expect(stats.concealed == 0 && stats.lost == 0 && stats.late == 0)
        #expect(stats.targetMilliseconds == 40)
        // Once playing, every pop finds exactly the minimum depth.
        let playingDepths = zip(driver.outputs, driver.depthsAtPop).filter { $0.0.isFrame }
            .map(\.1).dropLast(1)
        #expect(playingDepths.allSatisfy { abs($0 - 0.040) < 1e-9 })
        #expect(driver.payloadMismatches == 0)
    }

    @Test(arguments: [
        (8_000, 0.010), (8_000, 0.030), (8_000, 0.040), (8_000, 0.060), (48_000, 0.020)
    ])
    func otherFrameDurationsAreLearntAndPlayed(clockRate: Int, frame: Double) {
        var configuration = JitterBufferConfiguration(clockRate: clockRate)
        configuration.minimumDelay = max(0.040, 2 * frame)
        var driver = Driver(configuration)
        let packets = Sim.stream(count: 200, clockRate: clockRate, frame: frame, delay: { _ in 0.015 })
        // The media loop pops once per frame's worth of audio.
        driver.run(packets, start: frame / 2, tick: frame, ticks: 215)
        #expect(abs(driver.buffer.frameDuration - frame) < 1e-9)
        #expect(driver.played.count == 200)
        let continuous = driver.isContinuous
        #expect(continuous)
        #expect(driver.stats.lost == 0)
    }

    @Test func swappedPairsAreReorderedWithoutLoss() {
        // Packet 2k is overtaken by 2k+1 and arrives 3 ms after it.
        let packets = Sim.stream(count: 400) { i in i % 2 == 0 ? 0.030 + 0.023 : 0.030 }
        var driver = Driver()
        driver.run(packets, ticks: 430)
        #expect(driver.played.count == 400)
        let continuous = driver.isContinuous
        #expect(continuous)
        #expect(driver.stats.lost == 0)
        #expect(driver.stats.late == 0)
        #expect(driver.concealments == 0)
    }

    @Test func duplicatesAreDroppedAndCounted() {
        var packets = Sim.stream(count: 300)
        // Every 10th packet again 5 ms later (still buffered), every 15th again 200 ms later
        // (already played).
        let early = packets.filter { $0.index % 10 == 0 }.map { p in
            var copy = p; copy.arrival += 0.005; return copy
        }
        let old = packets.filter { $0.index % 15 == 7 }.map { p in
            var copy = p; copy.arrival += 0.200; return copy
        }
        packets += early + old
        var driver = Driver()
        driver.run(packets, ticks: 330)
        #expect(driver.stats.duplicates == early.count + old.count)
        #expect(driver.played.count == 300)
        #expect(Set(driver.played).count == 300)
        let continuous = driver.isContinuous
        #expect(continuous)
        #expect(driver.insertOutcomes.filter { $0 == .duplicate }.count == early.count + old.count)
    }

    @Test(arguments: [(0.05, UInt64(5)), (0.20, UInt64(20))])
    func randomLossIsConcealedOncePerLostPacket(lossRate: Double, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let count = 3_000
        var lost = Set<Int>()
        // Up to 8 ms of jitter; the first and last packets are never lost so the playing
        // stretch is well defined.
        let packets = Sim.stream(count: count) { i in
            let jitter = random.unit() * 0.008
            if i > 0, i < count - 1, random.unit() < lossRate {
                lost.insert(i)
                return nil
            }
            return 0.030 + jitter
        }
        var driver = Driver()
        driver.run(packets, ticks: count + 20)
        let stats = driver.stats
        #expect(lost.count > Int(Double(count) * lossRate * 0.8))
        #expect(stats.lost == lost.count)
        // Each loss costs one concealment (a silence after more than three in a row).
        let standIns = driver.playingStretch.filter { !$0.isFrame }
        #expect(standIns.count == lost.count)
        #expect(standIns.filter { $0 == .silence }.count <= lost.count / 100)
        #expect(stats.concealed == standIns.filter(\.isConceal).count)
        #expect(driver.played.count == count - lost.count)  // every packet that came was played
        let continuous = driver.continuity(silenceStandsIn: true)
        #expect(continuous)  // one output per tick, in order, no frame skipped
        #expect(stats.late == 0 && stats.duplicates == 0)
        #expect(driver.payloadMismatches == 0)
    }

    @Test func concealmentOffersTheNextFrameForFEC() {
        let packets = Sim.stream(count: 50) { i in i == 20 ? nil : 0.030 }
        var driver = Driver()
        driver.run(packets, ticks: 60)
        #expect(driver.outputs.contains(.conceal(next: 1_021)))
        #expect(driver.stats.lost == 1 && driver.stats.concealed == 1)
    }

    @Test func jitterBurstsRaiseTheTargetWhichComesBackAfterCalm() {
        // 10 s calm, 10 s with a 120 ms stall every second (packets held, then released
        // together), 60 s calm.
        let count = 4_000
        let packets = Sim.stream(count: count) { i in
            let t = Double(i) * 0.020
            guard t >= 10, t < 20 else { return 0.030 }
            let intoSecond = t - t.rounded(.down)
            return intoSecond < 0.120 ? 0.030 + (0.120 - intoSecond) : 0.030
        }
        var driver = Driver()
        driver.run(packets, ticks: count + 20)
        let tick = { (t: Double) in Int(t / 0.020) }
        let targetBefore = driver.targetsAtPop[tick(9.5)]
        let targetDuring = driver.targetsAtPop[tick(15)...tick(20)].max() ?? 0
        let depthDuring = driver.depthsAtPop[tick(15)...tick(20)].max() ?? 0
        #expect(targetBefore <= 0.040 + 1e-9)
        #expect(targetDuring >= 0.120)
        #expect(depthDuring >= 0.120)
        // The later stalls are absorbed: no concealment in the second half of the bursts.
        #expect(driver.outputs[tick(15)..<tick(20)].filter(\.isConceal).isEmpty)
        // Calm again: the target and the depth come back down, one frame at a time.
        #expect(abs(driver.targetsAtPop[tick(75)] - 0.040) < 1e-9)
        #expect(driver.depthsAtPop[tick(75)...tick(79)].allSatisfy { $0 <= 0.060 + 1e-9 })
        #expect(driver.stats.shrinkDrops >= 3)
        #expect(driver.stats.lost == 0)
        // Every frame played once, in order; the only ones missing were skipped to shrink.
        let inOrder = driver.playedInOrder
        #expect(inOrder)
        #expect(driver.played.count + driver.stats.shrinkDrops + driver.stats.late == count)
    }

    @Test func depthNeverExceedsTheMaximumDelay() {
        var random = SeededGenerator(seed: 99)
        // Wild jitter: 0 to 600 ms, far beyond what the buffer may hold.
        let packets = Sim.stream(count: 2_000) { _ in 0.020 + random.unit() * 0.600 }
        var driver = Driver()
        driver.run(packets, ticks: 2_100)
        #expect(driver.maxDepth <= 0.200 + 1e-9)
        #expect(driver.targetsAtPop.allSatisfy { $0 <= 0.200 + 1e-9 })
        #expect(driver.stats.targetMilliseconds == 200)
        #expect(driver.stats.played > 500 && driver.stats.late > 0)
        #expect(driver.outputs.filter(\.isFrame).count == driver.stats.played)
    }

    @Test(arguments: [1.005, 0.995])
    func clockDriftKeepsTheLevelBounded(senderSpeed: Double) {
        // Two minutes of simulated time with the sender 0.5 % fast or slow.
        var random = SeededGenerator(seed: 7)
        let count = 6_000
        let packets = Sim.stream(count: count, senderSpeed: senderSpeed) { _ in
            0.030 + random.unit() * 0.005
        }
        var driver = Driver()
        driver.run(packets, ticks: Int(120.0 / 0.020) + 60)
        let stats = driver.stats
        let playing = driver.depthsAtPop.dropFirst(5).prefix(5_900)
        #expect(playing.allSatisfy { $0 <= 0.080 + 1e-9 })
        // 0.5 % of 6000 frames is 30 frames to drop or stand in for.
        #expect(stats.shrinkDrops + stats.concealed <= 45)
        if senderSpeed > 1 {
            #expect(stats.shrinkDrops >= 20)
        } else {
            #expect(stats.concealed >= 20)
        }
        #expect(stats.lost == 0)
        #expect(stats.played + stats.shrinkDrops == count)
    }

    @Test(arguments: [Int64(80_000), Int64(-80_000)])
    func timestampJumpWithMarkerResynchronisesWithoutLongSilence(jump: Int64) {
        var packets = Sim.stream(count: 200)
        for i in 100..<200 {
            let t = Int64(packets[i].header.timestamp) + jump
            packets[i].header.timestamp = UInt32(truncatingIfNeeded: t)
            packets[i].header.marker = i == 100
        }
        var driver = Driver()
        driver.run(packets, ticks: 220)
        #expect(driver.stats.resyncs == 1)
        #expect(driver.played.count == 200)
        let continuous = driver.isContinuous
        #expect(continuous)  // not even one tick of silence at the jump
        #expect(driver.stats.targetMilliseconds == 40)
    }

    @Test func ssrcChangeFlushesAndResynchronises() {
        let first = Sim.stream(count: 100)
        let newSSRC: UInt32 = 0x5EED
        // The new source starts 2 s in, with its own sequence and timestamp origins.
        let second = Sim.stream(
            count: 100, firstSequence: 40_000, firstTimestamp: 9, ssrc: newSSRC, start: 2.2,
            firstIndex: 100)
        // A straggler of the old source after the switch.
        var straggler = first[99]
        straggler.arrival = 2.3
        var driver = Driver()
        driver.run(first + second + [straggler], ticks: 220)
        let stats = driver.stats
        #expect(stats.resyncs == 1)
        #expect(stats.late == 1)
        let newFrames = driver.outputs.compactMap { out -> UInt16? in
            if case .frame(let s, newSSRC) = out { s } else { nil }
        }
        #expect(newFrames == (0..<100).map { 40_000 + UInt16($0) })
        // The old stream was complete before the switch here; its frames all played first.
        let firstNew = driver.outputs.firstIndex(of: .frame(40_000, ssrc: newSSRC)) ?? 0
        #expect(
            driver.outputs[firstNew...].allSatisfy {
                if case .frame(_, let s) = $0 { s == newSSRC } else { true }
            })
        #expect(driver.played.count == 200)
    }

    @Test func ssrcChangeDiscardsTheOldSourcesBufferedFrames() {
        var driver = Driver()
        let old = Sim.stream(count: 10)
        for p in old { driver.insert(p) }  // all buffered, nothing played yet
        let new = Sim.stream(count: 10, firstSequence: 5, ssrc: 0x77, start: 0.3)
        for p in new { driver.insert(p) }
        for k in 0..<20 { driver.pop(now: 0.5 + Double(k) * 0.020) }
        #expect(driver.stats.resyncs == 1)
        #expect(driver.outputs.allSatisfy { if case .frame(_, let s) = $0 { s == 0x77 } else { true } })
        #expect(driver.played == (5..<15).map(UInt16.init))
    }

    @Test func sequenceAndTimestampWrapDuringTheRun() {
        var random = SeededGenerator(seed: 3)
        var lost = 0
        let packets = Sim.stream(count: 400, firstSequence: 65_300, firstTimestamp: UInt32.max - 20_000) { i in
            if i > 0, i < 399, random.unit() < 0.05 { lost += 1; return nil }
            return i % 7 == 3 ? 0.052 : 0.030  // some reordering too
        }
        var driver = Driver()
        driver.run(packets, ticks: 420)
        #expect(driver.played.count == 400 - lost)
        #expect(driver.played.contains(65_535) && driver.played.contains(0))
        let continuous = driver.isContinuous
        #expect(continuous)
        #expect(driver.stats.lost == lost)
    }

    @Test(arguments: [false, true])
    func dtxGapIsSilenceNotLoss(comfortNoise: Bool) {
        // 2 s of speech, 1 s silent (no packets, timestamps run on, sequence numbers
        // contiguous), 2 s of speech starting with the marker bit.
        let clock = 8_000
        var packets = Sim.stream(count: 100)
        if comfortNoise { packets[99].header.payloadType = 13 }
        var second = Sim.stream(
            count: 100, firstSequence: 1_100, firstTimestamp: 777_000 + 150 * 160, start: 3.0,
            firstIndex: 100)
        second[0].header.marker = true
        _ = clock
        packets += second
        var driver = Driver()
        driver.run(packets, ticks: 270)
        let stats = driver.stats
        #expect(stats.lost == 0)
        #expect(driver.played.count == 200)
        #expect(stats.concealed == (comfortNoise ? 0 : 3))
        let silenceInside = driver.playingStretch.filter { $0 == .silence }.count
        #expect(silenceInside >= 45 && silenceInside <= 55)  // about the 1 s gap
    }

    @Test func floodNeverExceedsTheRingCapacity() {
        // Capacity binds (the delay bound is set far higher).
        var driver = Driver(JitterBufferConfiguration(capacity: 50, maximumDelay: 5.0))
        var flood = Sim.stream(count: 1_000)
        for i in flood.indices { flood[i].arrival = 1.0 }
        for p in flood {
            driver.insert(p)
            #expect(driver.buffer.depth <= 50 * 0.020 + 1e-9)
        }
        #expect(driver.stats.overflowDrops == 950)
        for k in 0..<60 { driver.pop(now: 1.0 + Double(k) * 0.020) }
        #expect(driver.played == (1_950..<2_000).map(UInt16.init))
        #expect(driver.payloadMismatches == 0)
    }

    @Test func floodIsCutToTheMaximumDelay() {
        var driver = Driver()
        var flood = Sim.stream(count: 1_000)
        for i in flood.indices { flood[i].arrival = 1.0 }
        for p in flood { driver.insert(p) }
        #expect(driver.maxDepth <= 0.200 + 1e-9)
        #expect(driver.stats.overflowDrops == 990)
    }

    @Test func latePacketIsDroppedAndRaisesTheTarget() {
        // Packet 50 arrives 300 ms late, long after its successors.
        let packets = Sim.stream(count: 100) { i in i == 50 ? 0.330 : 0.030 }
        var driver = Driver()
        driver.run(packets, ticks: 120)
        #expect(driver.stats.late == 1)
        #expect(driver.stats.lost == 1)
        #expect(driver.insertOutcomes.contains(.late))
        #expect(driver.targetsAtPop.last ?? 0 > 0.150)
        let continuous = driver.isContinuous
        #expect(continuous)
    }

    @Test func underrunHoldsSoALatePacketStillPlays() {
        // Packets 50...54 stall 100 ms and arrive together: nothing is lost, the delay grows.
        let packets = Sim.stream(count: 100) { i in (50...54).contains(i) ? 0.130 - Double(i - 50) * 0.020 : 0.030 }
        var driver = Driver()
        driver.run(packets, ticks: 120)
        #expect(driver.stats.lost == 0)
        #expect(driver.stats.underruns > 0)
        #expect(driver.played.count == 100)
        let consecutive = driver.playedConsecutively
        #expect(consecutive)
        #expect(driver.stats.depthMilliseconds == 0)  // drained at the end
    }

    @Test func sequenceJumpRestartsAfterTwoConsecutivePackets() {
        var packets = Sim.stream(count: 100)
        let jumped = Sim.stream(count: 100, firstSequence: 30_000, start: 2.0, firstIndex: 100)
        packets += jumped
        var driver = Driver()
        driver.run(packets, ticks: 220)
        #expect(driver.stats.discarded == 1)  // the first far packet waits for a second
        #expect(driver.stats.resyncs >= 1)
        #expect(driver.played.count == 199)
        #expect(driver.played.last == 30_099)
    }

    @Test func outageLongerThanTheRingRestartsAtOnce() {
        // 3 s without packets (150 sequence numbers, beyond the 50-slot ring), then 2 s more.
        let packets = Sim.stream(count: 350).filter { $0.index < 100 || $0.index >= 250 }
        var driver = Driver()
        driver.run(packets, ticks: 400)
        #expect(driver.stats.lost == 150)
        #expect(driver.stats.discarded == 0)
        #expect(driver.played.count == 200)  // nothing lost beyond the outage
        #expect(driver.stats.resyncs == 1)
    }

    @Test func returningToAnEarlierSSRCLaterIsAccepted() {
        let a = Sim.stream(count: 50, ssrc: 0xA)
        let b = Sim.stream(count: 50, firstSequence: 7_000, ssrc: 0xB, start: 1.2)
        let backToA = Sim.stream(
            count: 50, firstSequence: 1_050, firstTimestamp: 777_000 + 50 * 160, ssrc: 0xA, start: 3.6)
        var driver = Driver()
        driver.run(a + b + backToA, ticks: 250)
        #expect(driver.stats.resyncs == 2)
        #expect(driver.played.count == 150)
        #expect(driver.stats.late == 0)
    }

    @Test func oversizedPayloadIsRefused() {
        var buffer = JitterBuffer(configuration: .init(maxPayloadSize: 100))
        let header = JitterBuffer.Packet(sequenceNumber: 1, timestamp: 0, ssrc: 1, payloadType: 0)
        #expect(buffer.insert(header, payload: [UInt8](repeating: 1, count: 101), arrival: 0) == .oversized)
        #expect(buffer.insert(header, payload: [UInt8](repeating: 1, count: 100), arrival: 0) == .buffered)
        #expect(buffer.statistics.oversized == 1)
    }

    @Test func staleFrameReferenceReadsEmpty() {
        var buffer = JitterBuffer(configuration: .init(capacity: 4, minimumDelay: 0.020))
        let header = { (s: UInt16) in
            JitterBuffer.Packet(sequenceNumber: s, timestamp: UInt32(s) * 160, ssrc: 1, payloadType: 0)
        }
        _ = buffer.insert(header(0), payload: [1, 2, 3], arrival: 0)
        guard case .frame(let frame) = buffer.pop(now: 0.001) else {
            Issue.record("expected a frame")
            return
        }
        #expect(Array(buffer.payload(of: frame)) == [1, 2, 3])
        #expect(buffer.withPayload(of: frame) { $0.count } == 3)
        // Sequence 4 reuses slot 0.
        for s in UInt16(1)...4 { _ = buffer.insert(header(s), payload: [9], arrival: 0.002) }
        #expect(buffer.payload(of: frame).isEmpty)
    }

    @Test func nonsenseConfigurationDoesNotCrash() {
        var buffer = JitterBuffer(
            configuration: .init(
                clockRate: 0, capacity: 0, maxPayloadSize: -5, minimumDelay: -1, maximumDelay: -2,
                defaultFrameDuration: 0, jitterHalfLife: 0, shrinkWindow: -1, maxUnderrunConcealment: -3))
        let header = JitterBuffer.Packet(sequenceNumber: 1, timestamp: 0, ssrc: 1, payloadType: 0)
        #expect(buffer.insert(header, payload: [], arrival: 0) == .buffered)
        for k in 0..<5 { _ = buffer.pop(now: Double(k) * 0.02) }
        #expect(buffer.configuration.capacity == 2)
    }

    @Test func nonFiniteTimesDoNotCrashOrPoisonTheTarget() {
        var driver = Driver()
        var packets = Sim.stream(count: 100)
        packets[10].arrival = .nan
        packets[20].arrival = .infinity
        for k in 0..<110 {
            let now = 0.005 + Double(k) * 0.020
            if k >= 2, k - 2 < packets.count { driver.insert(packets[k - 2]) }
            driver.pop(now: k == 30 ? .nan : now)
        }
        #expect(driver.stats.targetMilliseconds >= 40 && driver.stats.targetMilliseconds <= 200)
        #expect(driver.stats.played == 100)
    }

    @Test func silenceBeforeAnyPacket() {
        var buffer = JitterBuffer()
        #expect(buffer.pop(now: 0) == .silence)
        #expect(buffer.statistics == JitterBuffer.Statistics(targetMilliseconds: 40))
    }
}
