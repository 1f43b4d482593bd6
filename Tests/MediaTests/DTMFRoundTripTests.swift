import Testing

@testable import Media

/// One telephone-event packet on the wire: what the sender produced plus the sequence
/// number the RTP layer gave it and the tick it was sent on.
private struct SentTelephoneEvent {
    var packet: DTMFSender.Packet
    var sequenceNumber: UInt16
    var tick: Int
}

/// Runs `sender` over `digits` from the given RTP timestamp and sequence number (both near
/// their wrap by default) until it is idle; one tick is 20 ms.
private func transmitDigits(
    _ digits: String, configuration: DTMFSender.Configuration = .init(),
    durationMs: Int? = nil, startTimestamp: UInt32 = 0xFFFF_FC00, startSequence: UInt16 = 0xFFF8
) throws -> [SentTelephoneEvent] {
    var sender = DTMFSender(configuration: configuration)
    try sender.enqueue(digits, durationMs: durationMs)
    let step = UInt32(configuration.clockRate * configuration.packetIntervalMs / 1000)
    var wire: [SentTelephoneEvent] = []
    var sequence = startSequence
    var tick = 0
    while !sender.isIdle, tick < 100_000 {
        if let packet = sender.tick(timestamp: startTimestamp &+ UInt32(tick) &* step) {
            wire.append(SentTelephoneEvent(packet: packet, sequenceNumber: sequence, tick: tick))
            sequence &+= 1
        }
        tick += 1
    }
    return wire
}

/// Delivers `wire` (each packet on its `tick`, in list order) to a receiver that is also
/// ticked every 20 ms, until well after the last packet; returns every event reported.
private func receiveDigits(
    _ wire: [SentTelephoneEvent], configuration: DTMFReceiver.Configuration = .init()
) -> [DTMFEvent] {
    var receiver = DTMFReceiver(configuration: configuration)
    var events: [DTMFEvent] = []
    let lastTick = (wire.map(\.tick).max() ?? 0) + 50
    var index = 0
    for tick in 0...lastTick {
        let now = Double(tick) * 0.02
        while index < wire.count, wire[index].tick <= tick {
            let item = wire[index]
            events += receiver.receive(
                item.packet.report, timestamp: item.packet.timestamp, sequenceNumber: item.sequenceNumber, now: now)
            index += 1
        }
        events += receiver.tick(now: now)
    }
    return events
}

/// `wire` split into events by RTP timestamp, order kept.
private func telephoneEvents(of wire: [SentTelephoneEvent]) -> [[SentTelephoneEvent]] {
    var groups: [[SentTelephoneEvent]] = []
    for item in wire {
        if let last = groups.last?.last, last.packet.timestamp == item.packet.timestamp {
            groups[groups.count - 1].append(item)
        } else {
            groups.append([item])
        }
    }
    return groups
}

@Suite struct DTMFRoundTripTests {
    /// What the network does to the packets between sender and receiver.
    enum Impairment: String, CaseIterable, Sendable {
        case none
        /// No packet carries the marker bit.
        case markerStripped
        /// The first two packets of every event are lost.
        case firstPacketsLost
        /// Every end (E-bit) packet is lost: digits end by timeout or by the next event.
        case endPacketsLost
        /// All three end packets of every event arrive twice.
        case endPacketsDuplicated
        /// Within each event, packets 2/3 and 4/5 arrive swapped (the first end packet
        /// arrives before the last progress report).
        case reordered
        /// Only the end packets arrive.
        case onlyEndPackets

        /// The duration the receiver should report for a 100 ms digit.
        var expectedDurationMs: Int { self == .endPacketsLost ? 80 : 100 }

        fileprivate func apply(_ wire: [SentTelephoneEvent]) -> [SentTelephoneEvent] {
            telephoneEvents(of: wire).flatMap { event -> [SentTelephoneEvent] in
                switch self {
                case .none: return event
                case .markerStripped:
                    return event.map {
                        var item = $0; item.packet.marker = false; return item
                    }
                case .firstPacketsLost: return Array(event.dropFirst(2))
                case .endPacketsLost: return event.filter { !$0.packet.report.isEnd }
                case .endPacketsDuplicated: return event.flatMap { $0.packet.report.isEnd ? [$0, $0] : [$0] }
                case .reordered:
                    var swapped = event
                    for (a, b) in [(1, 2), (3, 4)] where b < swapped.count {
                        let tickA = swapped[a].tick, tickB = swapped[b].tick
                        swapped.swapAt(a, b)
                        swapped[a].tick = tickA
                        swapped[b].tick = tickB
                    }
                    return swapped
                case .onlyEndPackets: return event.filter { $0.packet.report.isEnd }
                }
            }
        }
    }

    @Test(arguments: DTMFDigit.allCases, Impairment.allCases)
    func everyDigitPressedTwiceIsReportedTwice(digit: DTMFDigit, impairment: Impairment) throws {
        let key = String(digit.character)
        let wire = try transmitDigits(key + key)
        #expect(telephoneEvents(of: wire).count == 2, "two events with distinct timestamps")
        let received = receiveDigits(impairment.apply(wire))
        let ms = impairment.expectedDurationMs
        #expect(
            received == [.began(digit), .ended(digit, durationMs: ms), .began(digit), .ended(digit, durationMs: ms)])
    }

    @Test func allSixteenDigitsInOneStringArriveInOrder() throws {
        let digits = "0123456789*#ABCD"
        let received = receiveDigits(try transmitDigits(digits))
        let expected = try DTMFDigit.digits(digits).flatMap { [DTMFEvent.began($0), .ended($0, durationMs: 100)] }
        #expect(received == expected)
    }

    @Test func digitsOverlappingInTransitAreNotMerged() throws {
        // The next digit's first packet arrives before the previous digit's end packets.
        var wire = try transmitDigits("12")
        let groups = telephoneEvents(of: wire)
        wire =
            groups[0].filter { !$0.packet.report.isEnd } + [groups[1][0]]
            + groups[0].filter { $0.packet.report.isEnd }.map {
                var late = $0; late.tick = groups[1][0].tick; return late
            }
            + groups[1].dropFirst()
        #expect(
            receiveDigits(wire) == [
                .began(.one), .ended(.one, durationMs: 80), .began(.two), .ended(.two, durationMs: 100)
            ])
    }

    @Test(arguments: [8_000, 16_000, 48_000])
    func otherClockRatesKeepMilliseconds(clockRate: Int) throws {
        let wire = try transmitDigits("5#", configuration: .init(clockRate: clockRate), durationMs: 160)
        let received = receiveDigits(wire, configuration: .init(clockRate: clockRate))
        #expect(
            received == [.began(.five), .ended(.five, durationMs: 160), .began(.pound), .ended(.pound, durationMs: 160)]
        )
    }

    @Test func longEventIsSentInSegmentsAndReportedOnceWithItsWholeDuration() throws {
        let wire = try transmitDigits("7", durationMs: 20_000)
        let segments = telephoneEvents(of: wire)
        // 20 s at 8 kHz = 160000 units: three segments of at most 0xFFFF.
        #expect(segments.count == 3)
        #expect(segments.flatMap { $0 }.filter(\.packet.marker).count == 1)
        #expect(segments.dropLast().allSatisfy { $0.allSatisfy { !$0.packet.report.isEnd } })
        for (earlier, later) in zip(segments, segments.dropFirst()) {
            #expect(later[0].packet.timestamp == earlier[0].packet.timestamp &+ 0xFFFF)
        }
        #expect(receiveDigits(wire) == [.began(.seven), .ended(.seven, durationMs: 20_000)])
        // Losing the packets around a segment boundary does not split the digit.
        let boundary = try #require(wire.firstIndex { $0.packet.timestamp != wire[0].packet.timestamp })
        var lossy = wire
        lossy.removeSubrange((boundary - 3)..<(boundary + 2))
        #expect(receiveDigits(lossy) == [.began(.seven), .ended(.seven, durationMs: 20_000)])
    }
}

@Suite struct DTMFReceiverTests {
    private static func report(_ digit: DTMFDigit, _ duration: UInt16, end: Bool = false) -> TelephoneEvent {
        TelephoneEvent(digit: digit, isEnd: end, duration: duration)
    }

    @Test func endPacketAloneReportsTheDigitWithItsDuration() {
        var receiver = DTMFReceiver()
        #expect(
            Array(receiver.receive(Self.report(.nine, 960, end: true), timestamp: 1000, sequenceNumber: 7, now: 0))
                == [.began(.nine), .ended(.nine, durationMs: 120)])
        #expect(receiver.activeDigit == nil)
    }

    @Test func midEventStartReportsOnceAndTimeoutEndsWithTheLastDuration() {
        var receiver = DTMFReceiver(configuration: .init(endTimeoutMs: 100))
        #expect(
            Array(receiver.receive(Self.report(.three, 480), timestamp: 50, sequenceNumber: 1, now: 1.0)) == [
                .began(.three)
            ])
        #expect(receiver.receive(Self.report(.three, 640), timestamp: 50, sequenceNumber: 2, now: 1.02).isEmpty)
        #expect(receiver.activeDigit == .three)
        #expect(receiver.tick(now: 1.10).isEmpty, "80 ms of silence is within the timeout")
        #expect(Array(receiver.tick(now: 1.13)) == [.ended(.three, durationMs: 80)])
        #expect(receiver.tick(now: 5).isEmpty)
        // Late reports of the timed-out event, E bit or not, are not a new digit.
        #expect(receiver.receive(Self.report(.three, 800), timestamp: 50, sequenceNumber: 3, now: 5).isEmpty)
        #expect(receiver.receive(Self.report(.three, 800, end: true), timestamp: 50, sequenceNumber: 4, now: 5).isEmpty)
    }

    @Test func sameTimestampAfterAnEndIsANewEventOnlyWhenSentLater() {
        var receiver = DTMFReceiver()
        _ = receiver.receive(Self.report(.four, 160), timestamp: 9, sequenceNumber: 10, now: 0)
        #expect(
            Array(receiver.receive(Self.report(.four, 800, end: true), timestamp: 9, sequenceNumber: 14, now: 0.1))
                == [.ended(.four, durationMs: 100)])
        // A progress report sent before the end, arriving late: ignored.
        #expect(receiver.receive(Self.report(.four, 480), timestamp: 9, sequenceNumber: 12, now: 0.1).isEmpty)
        // A retransmitted end: ignored.
        #expect(
            receiver.receive(Self.report(.four, 800, end: true), timestamp: 9, sequenceNumber: 15, now: 0.12).isEmpty)
        // A sender that reuses the timestamp for its next press (no E bit, newer sequence).
        #expect(
            Array(receiver.receive(Self.report(.four, 160), timestamp: 9, sequenceNumber: 20, now: 0.3)) == [
                .began(.four)
            ])
        // A different key at the same timestamp ends the current one.
        #expect(
            Array(receiver.receive(Self.report(.six, 160), timestamp: 9, sequenceNumber: 21, now: 0.32))
                == [.ended(.four, durationMs: 20), .began(.six)])
        // A late report of the previous key, sent earlier, is ignored.
        #expect(receiver.receive(Self.report(.four, 320), timestamp: 9, sequenceNumber: 19, now: 0.33).isEmpty)
    }

    @Test func reportsOlderThanTheCurrentEventAreIgnored() {
        var receiver = DTMFReceiver()
        _ = receiver.receive(Self.report(.one, 160), timestamp: 0xFFFF_FF00, sequenceNumber: 1, now: 0)
        #expect(
            Array(receiver.receive(Self.report(.two, 160), timestamp: 0x0000_0100, sequenceNumber: 2, now: 0.2))
                == [.ended(.one, durationMs: 20), .began(.two)])
        #expect(
            receiver.receive(Self.report(.one, 800, end: true), timestamp: 0xFFFF_FF00, sequenceNumber: 3, now: 0.2)
                .isEmpty)
        #expect(receiver.activeDigit == .two)
    }

    @Test func durationWrappingAtOneTimestampKeepsCounting() {
        var receiver = DTMFReceiver()
        var events: [DTMFEvent] = []
        var sequence: UInt16 = 0
        for units in stride(from: 60_000, through: 70_000, by: 400) {
            events += receiver.receive(
                Self.report(.zero, UInt16(truncatingIfNeeded: units), end: units == 70_000),
                timestamp: 77, sequenceNumber: sequence, now: Double(sequence) * 0.05)
            sequence &+= 1
        }
        #expect(events == [.began(.zero), .ended(.zero, durationMs: 8_750)])
    }

    @Test func nonDTMFEventsAreIgnored() {
        var receiver = DTMFReceiver()
        #expect(
            receiver.receive(TelephoneEvent(event: 16, duration: 160), timestamp: 1, sequenceNumber: 1, now: 0).isEmpty)
        #expect(receiver.activeDigit == nil)
    }

    @Test func resetEndsADigitStillHeld() {
        var receiver = DTMFReceiver()
        _ = receiver.receive(Self.report(.b, 320), timestamp: 1, sequenceNumber: 1, now: 0)
        #expect(Array(receiver.reset()) == [.ended(.b, durationMs: 40)])
        #expect(receiver.reset().isEmpty)
    }
}

@Suite struct DTMFSenderTests {
    @Test func oneDigitSchedule() throws {
        var sender = DTMFSender()
        try sender.enqueue("1")
        var packets: [DTMFSender.Packet?] = []
        for tick in 0..<10 { packets.append(sender.tick(timestamp: 4000 + UInt32(tick) * 160)) }
        let expected: [DTMFSender.Packet?] = [
            .init(report: TelephoneEvent(digit: .one, duration: 160), timestamp: 4000, marker: true),
            .init(report: TelephoneEvent(digit: .one, duration: 320), timestamp: 4000, marker: false),
            .init(report: TelephoneEvent(digit: .one, duration: 480), timestamp: 4000, marker: false),
            .init(report: TelephoneEvent(digit: .one, duration: 640), timestamp: 4000, marker: false),
            .init(report: TelephoneEvent(digit: .one, isEnd: true, duration: 800), timestamp: 4000, marker: false),
            .init(report: TelephoneEvent(digit: .one, isEnd: true, duration: 800), timestamp: 4000, marker: false),
            .init(report: TelephoneEvent(digit: .one, isEnd: true, duration: 800), timestamp: 4000, marker: false),
            nil, nil, nil
        ]
        #expect(packets == expected)
        #expect(sender.isIdle)
    }

    @Test func nextDigitWaitsForTheGapAndGetsItsOwnTimestamp() throws {
        var sender = DTMFSender()
        try sender.enqueue("12")
        var starts: [(tick: Int, packet: DTMFSender.Packet)] = []
        for tick in 0..<20 {
            if let packet = sender.tick(timestamp: UInt32(tick) * 160), packet.marker { starts.append((tick, packet)) }
        }
        // 100 ms tone + 50 ms gap: the next tick at or after 150 ms is tick 8 (160 ms).
        #expect(starts.map(\.tick) == [0, 8])
        #expect(starts.map(\.packet.timestamp) == [0, 1280])
        #expect(starts.map(\.packet.report.event) == [1, 2])
    }

    @Test func durationsFollowTheTimestampsWhenATickIsSkipped() throws {
        var sender = DTMFSender()
        try sender.enqueue("9")
        _ = sender.tick(timestamp: 0)
        // The media loop missed one tick.
        let packet = sender.tick(timestamp: 320)
        #expect(packet?.report.duration == 480)
    }

    @Test func timestampsSteppingBackNeverShrinkTheDuration() throws {
        var sender = DTMFSender()
        try sender.enqueue("2", durationMs: 10_000)
        var durations: [UInt16] = []
        for timestamp: UInt32 in [70_000, 70_160, 70_320, 0, 70_480, 130_000, 140_000] {
            if let packet = sender.tick(timestamp: timestamp) { durations.append(packet.report.duration) }
        }
        #expect(durations == [160, 320, 480, 480, 640, 60_160, 4_625])
    }

    @Test func badRequestsThrowAndQueueNothing() {
        var sender = DTMFSender()
        #expect(throws: DTMFError.invalidDigit("x")) { try sender.enqueue("12x") }
        #expect(throws: DTMFError.invalidDuration(milliseconds: 0)) { try sender.enqueue("1", durationMs: 0) }
        #expect(throws: DTMFError.invalidGap(milliseconds: -1)) { try sender.enqueue("1", gapMs: -1) }
        #expect(sender.isIdle)
        #expect(sender.queuedCount == 0)
    }

    @Test func cancelDropsQueuedDigitsButFinishesTheCurrentOne() throws {
        var sender = DTMFSender()
        try sender.enqueue("123")
        _ = sender.tick(timestamp: 0)
        sender.cancelQueued()
        var ends = 0
        for tick in 1..<40 { if sender.tick(timestamp: UInt32(tick) * 160)?.report.isEnd == true { ends += 1 } }
        #expect(ends == 3)
        #expect(sender.isIdle)
    }

    @Test func inbandSenderProducesFramesOfDigitAudioThenSilence() throws {
        let sender = try InbandDTMFSender(durationMs: 60, gapMs: 40)
        try sender.enqueue("5")
        #expect(sender.isActive)
        var pcm: [Int16] = []
        var withAudio = 0
        for _ in 0..<10 {
            if sender.nextFrame(into: &pcm) { withAudio += 1 }
            #expect(pcm.count == 160)
        }
        #expect(withAudio == 5, "60 ms + 40 ms of digit audio is five 20 ms frames")
        #expect(!sender.isActive)
        #expect(pcm.allSatisfy { $0 == 0 })
        #expect(throws: SpanDSPError.invalidDigit("x")) { try sender.enqueue("x") }
    }
}
