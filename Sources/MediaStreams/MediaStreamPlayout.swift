/// The agent's audio waiting to be played, with its marks: audio goes in as it arrives,
/// 20 ms frames come out on demand, a mark comes out once every sample queued before it
/// has been handed out (then the gateway echoes it, as Twilio does), and `clear` drops the
/// audio not yet played. A plain value: no lock, no clock (`MediaStreamPlayer` shares one
/// between the loop that receives and the media thread that plays).
public struct MediaStreamPlayout: Sendable {
    /// One hand-out: a frame (nil when nothing is queued) and the marks it completed.
    public struct Frame: Sendable, Equatable {
        public var audio: [Int16]?
        public var marks: [String]

        public init(audio: [Int16]?, marks: [String]) {
            self.audio = audio
            self.marks = marks
        }
    }

    /// Samples per frame (160: 20 ms at 8 kHz).
    public let frameSamples: Int
    /// The most audio queued; audio past it is dropped on arrival and counted.
    public let maxQueuedSamples: Int
    /// Samples refused because the queue was full.
    public private(set) var droppedSamples = 0

    private var samples: [Int16] = []
    private var head = 0
    /// Samples queued and handed out (or cleared) since the start: marks are positions on it.
    private var queuedTotal = 0
    private var playedTotal = 0
    private var marks: [(at: Int, name: String)] = []

    /// `maxQueuedSamples` defaults to two minutes at 8 kHz: agents send speech faster than
    /// real time.
    public init(frameSamples: Int = 160, maxQueuedSamples: Int = 8_000 * 120) {
        self.frameSamples = max(1, frameSamples)
        self.maxQueuedSamples = max(self.frameSamples, maxQueuedSamples)
    }

    /// Audio queued and not yet handed out, in samples.
    public var queuedSamples: Int { samples.count - head }

    /// Marks waiting for their audio to be played.
    public var pendingMarks: [String] { marks.map(\.name) }

    /// Queues `audio` after what is queued (what does not fit is dropped and counted).
    public mutating func add(_ audio: [Int16]) {
        let room = max(0, maxQueuedSamples - queuedSamples)
        let taken = audio.prefix(room)
        droppedSamples += audio.count - taken.count
        samples.append(contentsOf: taken)
        queuedTotal += taken.count
    }

    /// Queues a mark after the queued audio; returns it at once (to echo now) when nothing
    /// is queued before it.
    public mutating func mark(_ name: String) -> [String] {
        guard queuedTotal > playedTotal || !marks.isEmpty else { return [name] }
        marks.append((queuedTotal, name))
        return []
    }

    /// Drops the queued audio; returns the marks that were waiting (Twilio echoes them when
    /// a clear empties its buffer).
    public mutating func clear() -> [String] {
        samples = []
        head = 0
        playedTotal = queuedTotal
        defer { marks = [] }
        return marks.map(\.name)
    }

    /// The next frame: `frameSamples` of queued audio; the last samples before a mark padded
    /// with silence (so the mark is not held back); nil audio when nothing is queued. With it
    /// the marks whose audio has now all been handed out.
    public mutating func next() -> Frame {
        let queued = queuedSamples
        var audio: [Int16]?
        if queued >= frameSamples || (queued > 0 && marks.first.map { $0.at <= queuedTotal } == true) {
            let taken = min(queued, frameSamples)
            var frame = Array(samples[head..<(head + taken)])
            if taken < frameSamples { frame += repeatElement(0, count: frameSamples - taken) }
            head += taken
            playedTotal += taken
            audio = frame
            // Forget what has been played once it is most of the buffer.
            if head > 4_096, head * 2 > samples.count {
                samples.removeFirst(head)
                head = 0
            }
        }
        var done: [String] = []
        while let first = marks.first, first.at <= playedTotal {
            done.append(first.name)
            marks.removeFirst()
        }
        return Frame(audio: audio, marks: done)
    }
}
