import Testing

@testable import Media

@Suite struct SequenceNumberTests {
    struct Script: Sendable, CustomTestStringConvertible {
        let name: String
        var configuration = RTPSequenceConfiguration()
        let sequence: [UInt16]
        let verdicts: [RTPSequenceVerdict]
        var testDescription: String { name }
    }

    static let scripts: [Script] = [
        Script(
            name: "probation then in order", sequence: [10, 11, 12],
            verdicts: [.probation, .inOrder(extended: 11), .inOrder(extended: 12)]),
        Script(
            name: "probation restarts when not sequential", sequence: [10, 20, 21, 22],
            verdicts: [.probation, .probation, .inOrder(extended: 21), .inOrder(extended: 22)]),
        Script(
            name: "no probation with minSequential 1",
            configuration: RTPSequenceConfiguration(minSequential: 1), sequence: [500, 501],
            verdicts: [.inOrder(extended: 500), .inOrder(extended: 501)]),
        Script(
            name: "wrap 65535 -> 0", sequence: [65533, 65534, 65535, 0, 1],
            verdicts: [
                .probation, .inOrder(extended: 65534), .inOrder(extended: 65535),
                .inOrder(extended: 65536), .inOrder(extended: 65537)
            ]),
        Script(
            name: "gap is loss, not a jump", sequence: [1, 2, 2002],
            verdicts: [.probation, .inOrder(extended: 2), .inOrder(extended: 2002)]),
        Script(
            name: "reordering", sequence: [10, 11, 13, 12, 14],
            verdicts: [
                .probation, .inOrder(extended: 11), .inOrder(extended: 13), .late(extended: 12),
                .inOrder(extended: 14)
            ]),
        Script(
            name: "late packet from before the wrap", sequence: [65533, 65534, 0, 65535, 1],
            verdicts: [
                .probation, .inOrder(extended: 65534), .inOrder(extended: 65536),
                .late(extended: 65535), .inOrder(extended: 65537)
            ]),
        Script(
            name: "duplicates of highest and of older", sequence: [5, 6, 7, 7, 6, 8, 6],
            verdicts: [
                .probation, .inOrder(extended: 6), .inOrder(extended: 7), .duplicate(extended: 7),
                .duplicate(extended: 6), .inOrder(extended: 8), .duplicate(extended: 6)
            ]),
        Script(
            name: "late then its duplicate", sequence: [1, 2, 4, 3, 3],
            verdicts: [
                .probation, .inOrder(extended: 2), .inOrder(extended: 4), .late(extended: 3),
                .duplicate(extended: 3)
            ]),
        Script(
            name: "duplicate detected 99 behind", sequence: [0, 1] + Array(2...100) + [1],
            verdicts: [.probation] + (1...100).map { .inOrder(extended: UInt64($0)) } + [.duplicate(extended: 1)]),
        Script(
            name: "100 behind is already a jump (MAX_MISORDER)", sequence: [0, 1] + Array(2...101) + [1],
            verdicts: [.probation] + (1...101).map { .inOrder(extended: UInt64($0)) } + [.badJump]),
        Script(
            name: "big jump then restart after two sequential packets (A.1)",
            sequence: [100, 101, 102, 5000, 5001, 5002],
            verdicts: [
                .probation, .inOrder(extended: 101), .inOrder(extended: 102), .badJump,
                .restarted(extended: 5001), .inOrder(extended: 5002)
            ]),
        Script(
            name: "single stray jump is dropped, stream goes on", sequence: [100, 101, 40000, 102],
            verdicts: [.probation, .inOrder(extended: 101), .badJump, .inOrder(extended: 102)]),
        Script(
            name: "far behind is a jump, not late", sequence: [1000, 1001, 800, 801],
            verdicts: [.probation, .inOrder(extended: 1001), .badJump, .restarted(extended: 801)])
    ]

    @Test(arguments: scripts)
    func verdicts(_ script: Script) {
        var tracker = RTPSequenceTracker(configuration: script.configuration)
        let verdicts = script.sequence.map { tracker.update(sequenceNumber: $0) }
        #expect(verdicts == script.verdicts)
    }

    @Test func cyclesCountAcrossSeveralWraps() {
        var tracker = RTPSequenceTracker()
        var seq: UInt16 = 65000
        let total = 3 * 65536 + 10
        for _ in 0..<total {
            _ = tracker.update(sequenceNumber: seq)
            seq &+= 1
        }
        // The first packet was probation; counting starts at 65001.
        #expect(tracker.cycles == 3 * 65536)
        #expect(tracker.highestSequenceNumber == seq &- 1)
        #expect(tracker.extendedHighestSequenceNumber == 65000 + UInt64(total) - 1)
        #expect(tracker.received == UInt64(total) - 1)
        #expect(tracker.expected == UInt64(total) - 1)
    }

    @Test func restartResetsCounters() {
        var tracker = RTPSequenceTracker()
        for seq: UInt16 in 100...200 { _ = tracker.update(sequenceNumber: seq) }
        #expect(tracker.received == 100)
        _ = tracker.update(sequenceNumber: 30000)
        _ = tracker.update(sequenceNumber: 30001)
        #expect(tracker.baseSequenceNumber == 30001)
        #expect(tracker.received == 1)
        #expect(tracker.expected == 1)
        #expect(tracker.cycles == 0)
    }

    @Test func duplicatesCountAsReceivedLikeTheRFC() {
        var tracker = RTPSequenceTracker()
        for seq: UInt16 in [1, 2, 3, 3, 2] { _ = tracker.update(sequenceNumber: seq) }
        #expect(tracker.received == 4)
        #expect(tracker.duplicates == 2)
        #expect(tracker.expected == 2)
    }

    @Test(
        arguments: [
            ([0, 100, 50], [UInt64(1) << 32, (1 << 32) + 100, (1 << 32) + 50]),
            (
                [0xFFFF_FF00, 0x0000_0100, 0xFFFF_FFF0, 0x0000_0200],
                [(1 << 32) + 0xFFFF_FF00, (2 << 32) + 0x100, (1 << 32) + 0xFFFF_FFF0, (2 << 32) + 0x200]
            ),
            (
                [0, 0x7000_0000, 0xE000_0000, 0x5000_0000, 0xC000_0000],
                [
                    1 << 32, (1 << 32) + 0x7000_0000, (1 << 32) + 0xE000_0000, (2 << 32) + 0x5000_0000,
                    (2 << 32) + 0xC000_0000
                ]
            ),
            ([5, 0xFFFF_FFFF], [(1 << 32) + 5, (1 << 32) - 1])
        ] as [([UInt32], [UInt64])])
    func timestampsUnwrap(_ timestamps: [UInt32], _ expected: [UInt64]) {
        var unwrapper = RTPTimestampUnwrapper()
        #expect(timestamps.map { unwrapper.unwrap($0) } == expected)
    }

    @Test func ssrcChangeResetsTheSource() {
        var source = RTPSourceTracker()
        _ = source.update(ssrc: 1, sequenceNumber: 10, timestamp: 100)
        let valid = source.update(ssrc: 1, sequenceNumber: 11, timestamp: 260)
        #expect(
            valid
                == RTPSourceUpdate(
                    sourceChanged: false, verdict: .inOrder(extended: 11), extendedTimestamp: (1 << 32) + 260))

        let switched = source.update(ssrc: 2, sequenceNumber: 9000, timestamp: 5)
        #expect(switched == RTPSourceUpdate(sourceChanged: true, verdict: .probation, extendedTimestamp: (1 << 32) + 5))
        #expect(source.ssrc == 2)
        #expect(!source.sequence.isValid)

        let second = source.update(ssrc: 2, sequenceNumber: 9001, timestamp: 165)
        #expect(second.verdict == .inOrder(extended: 9001))
        #expect(!second.sourceChanged)
        #expect(source.sequence.baseSequenceNumber == 9001)
    }

    @Test func deliverableVerdicts() {
        #expect(RTPSequenceVerdict.inOrder(extended: 1).isDeliverable)
        #expect(RTPSequenceVerdict.late(extended: 1).isDeliverable)
        #expect(RTPSequenceVerdict.restarted(extended: 1).isDeliverable)
        #expect(!RTPSequenceVerdict.duplicate(extended: 1).isDeliverable)
        #expect(!RTPSequenceVerdict.probation.isDeliverable)
        #expect(!RTPSequenceVerdict.badJump.isDeliverable)
        #expect(RTPSequenceVerdict.badJump.extendedSequenceNumber == nil)
    }
}
