/// The bounded queue between the thread that records (the media thread) and the writer
/// thread: frames of both sides in storage allocated once. When full, the oldest frame is
/// dropped, and the frame after it remembers how many went before it, so the writer writes
/// silence in their place and the file's timeline stays whole. Not thread-safe: the writer
/// keeps it behind a lock held only to copy.
struct RecordingFrameQueue {
    /// One queued frame.
    struct Entry {
        /// Frames dropped just before this one (written as silence).
        var silenceBefore = 0
        /// A frame of silence (the recording was paused): no samples stored.
        var silent = false
    }

    let capacity: Int
    let frameSamples: Int
    /// Slot `i` holds the trunk's samples then the app's: `2 * frameSamples` from `i * 2 * frameSamples`.
    private var samples: [Int16]
    private var entries: [Entry]
    private var head = 0
    private(set) var count = 0
    /// Frames dropped so far.
    private(set) var dropped = 0

    init(capacity: Int, frameSamples: Int) {
        self.capacity = capacity
        self.frameSamples = frameSamples
        samples = [Int16](repeating: 0, count: capacity * 2 * frameSamples)
        entries = [Entry](repeating: Entry(), count: capacity)
    }

    /// Queues a frame (nil side, or `silent`: zeros); drops the oldest when full. A side
    /// shorter than a frame is padded with silence, a longer one cut. No allocation.
    mutating func push(trunk: UnsafeBufferPointer<Int16>?, app: UnsafeBufferPointer<Int16>?, silent: Bool) {
        // The dropped frame and the silence it carried pass to the next oldest (or to this one).
        var carried = 0
        if count == capacity {
            carried = entries[head].silenceBefore + 1
            head = (head + 1) % capacity
            count -= 1
            dropped += 1
            if count > 0 {
                entries[head].silenceBefore += carried
                carried = 0
            }
        }
        let slot = (head + count) % capacity
        entries[slot] = Entry(silenceBefore: carried, silent: silent)
        if !silent {
            let start = slot * 2 * frameSamples
            let n = frameSamples
            samples.withUnsafeMutableBufferPointer { storage in
                Self.copy(trunk, to: storage, at: start, frameSamples: n)
                Self.copy(app, to: storage, at: start + n, frameSamples: n)
            }
        }
        count += 1
    }

    /// Moves every queued frame into `batch` (emptying the queue).
    mutating func moveAll(into batch: inout RecordingBatch) {
        let slotSamples = 2 * frameSamples
        samples.withUnsafeBufferPointer { storage in
            batch.samples.withUnsafeMutableBufferPointer { out in
                for index in 0..<count {
                    let slot = (head + index) % capacity
                    batch.entries[index] = entries[slot]
                    guard !entries[slot].silent else { continue }
                    let from = UnsafeBufferPointer(rebasing: storage[(slot * slotSamples)..<((slot + 1) * slotSamples)])
                    _ = UnsafeMutableBufferPointer(rebasing: out[(index * slotSamples)...]).initialize(
                        fromContentsOf: from)
                }
            }
        }
        batch.count = count
        head = 0
        count = 0
    }

    private static func copy(
        _ side: UnsafeBufferPointer<Int16>?, to storage: UnsafeMutableBufferPointer<Int16>, at start: Int,
        frameSamples: Int
    ) {
        let n = min(side?.count ?? 0, frameSamples)
        if let side, n > 0 {
            _ = UnsafeMutableBufferPointer(rebasing: storage[start..<(start + n)])
                .initialize(fromContentsOf: UnsafeBufferPointer(rebasing: side[0..<n]))
        }
        if n < frameSamples { storage[(start + n)..<(start + frameSamples)].update(repeating: 0) }
    }
}

/// The frames the writer thread took from the queue, in storage it keeps between batches.
struct RecordingBatch {
    let frameSamples: Int
    var samples: [Int16]
    var entries: [RecordingFrameQueue.Entry]
    var count = 0

    init(capacity: Int, frameSamples: Int) {
        self.frameSamples = frameSamples
        samples = [Int16](repeating: 0, count: capacity * 2 * frameSamples)
        entries = [RecordingFrameQueue.Entry](repeating: .init(), count: capacity)
    }

    /// Entry `index`'s trunk and app samples.
    func sides(_ index: Int, _ body: (UnsafeBufferPointer<Int16>, UnsafeBufferPointer<Int16>) -> Void) {
        samples.withUnsafeBufferPointer { all in
            let start = index * 2 * frameSamples
            body(
                UnsafeBufferPointer(rebasing: all[start..<(start + frameSamples)]),
                UnsafeBufferPointer(rebasing: all[(start + frameSamples)..<(start + 2 * frameSamples)]))
        }
    }
}
