import Synchronization

/// A `MediaStreamPlayout` shared between the thread that receives the agent's messages
/// (the connection's handler, on the client loop) and the media thread that plays them:
/// `handle` takes the connection's events, `nextFrame` hands out 20 ms and echoes the marks
/// that frame completed through `echo` (usually `MediaStreamConnection.sendMark`, which
/// never blocks). The lock is held for a copy only.
public final class MediaStreamPlayer: Sendable {
    private let playout: Mutex<MediaStreamPlayout>
    private let echo: @Sendable (String) -> Void

    /// A player of `frameSamples` frames (160: 8 kHz) holding at most `maxQueuedSamples`.
    public init(
        frameSamples: Int = 160, maxQueuedSamples: Int = 8_000 * 120, echo: @escaping @Sendable (String) -> Void
    ) {
        playout = Mutex(MediaStreamPlayout(frameSamples: frameSamples, maxQueuedSamples: maxQueuedSamples))
        self.echo = echo
    }

    /// Takes a connection event: audio is queued, a mark queued (or echoed at once when
    /// nothing is queued), `clear` drops the queued audio (echoing the marks it drops).
    public func handle(_ event: MediaStreamEvent) {
        let echoes: [String] = playout.withLock { p in
            switch event {
            case .audio(let samples):
                p.add(samples)
                return []
            case .mark(let name):
                return p.mark(name)
            case .clear:
                return p.clear()
            default:
                return []
            }
        }
        for name in echoes { echo(name) }
    }

    /// The next 20 ms to play, nil when nothing is queued (play silence or comfort noise).
    public func nextFrame() -> [Int16]? {
        let frame = playout.withLock { $0.next() }
        for name in frame.marks { echo(name) }
        return frame.audio
    }

    /// Audio waiting, in samples.
    public var queuedSamples: Int { playout.withLock { $0.queuedSamples } }

    /// Samples dropped because the queue was full.
    public var droppedSamples: Int { playout.withLock { $0.droppedSamples } }
}
