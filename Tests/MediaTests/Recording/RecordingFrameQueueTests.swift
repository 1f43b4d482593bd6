import Testing

@testable import Media

@Suite struct RecordingFrameQueueTests {
    /// Pushes frames whose samples are all `value` (nil: a silent, paused frame).
    private static func push(_ queue: inout RecordingFrameQueue, _ values: [Int16?]) {
        for value in values {
            let frame = [Int16](repeating: value ?? 0, count: queue.frameSamples)
            frame.withUnsafeBufferPointer { queue.push(trunk: $0, app: nil, silent: value == nil) }
        }
    }

    /// (silence before, first trunk sample or nil when silent) of each entry taken.
    private static func take(_ queue: inout RecordingFrameQueue) -> [(Int, Int16?)] {
        var batch = RecordingBatch(capacity: queue.capacity, frameSamples: queue.frameSamples)
        queue.moveAll(into: &batch)
        return (0..<batch.count).map { index in
            var first: Int16 = 0
            batch.sides(index) { trunk, app in
                first = trunk[0]
                #expect(app.allSatisfy { $0 == 0 })
            }
            return (batch.entries[index].silenceBefore, batch.entries[index].silent ? nil : first)
        }
    }

    @Test(
        arguments: [
            // capacity, pushed, expected (silence before, value) and dropped
            (3, [1, 2, nil, 4, 5], [(2, nil), (0, 4), (0, 5)], 2),
            (1, [1, 2, 3], [(2, 3)], 2),
            (4, [1, 2], [(0, 1), (0, 2)], 0)
        ] as [(Int, [Int16?], [(Int, Int16?)], Int)])
    func keepsTheNewestAndCountsTheRest(capacity: Int, pushed: [Int16?], expected: [(Int, Int16?)], dropped: Int) {
        var queue = RecordingFrameQueue(capacity: capacity, frameSamples: 4)
        Self.push(&queue, pushed)
        #expect(queue.dropped == dropped)
        let taken = Self.take(&queue)
        #expect(taken.map(\.0) == expected.map(\.0) && taken.map(\.1) == expected.map(\.1))
        #expect(queue.count == 0)
        // After a move the queue starts over, the drop count stays.
        Self.push(&queue, [9])
        #expect(Self.take(&queue).map(\.1) == [9] && queue.dropped == dropped)
    }

    @Test func shortSidesArePaddedLongOnesCut() {
        var queue = RecordingFrameQueue(capacity: 2, frameSamples: 4)
        let short: [Int16] = [7, 7]
        let long: [Int16] = [3, 3, 3, 3, 3, 3]
        short.withUnsafeBufferPointer { s in
            long.withUnsafeBufferPointer { queue.push(trunk: s, app: $0, silent: false) }
        }
        var batch = RecordingBatch(capacity: 2, frameSamples: 4)
        queue.moveAll(into: &batch)
        batch.sides(0) { trunk, app in
            #expect(Array(trunk) == [7, 7, 0, 0] && Array(app) == [3, 3, 3, 3])
        }
    }
}
