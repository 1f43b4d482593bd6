import Foundation
import Synchronization

/// Records a call to a file as it runs: 20 ms frames of the trunk's and the app's audio go
/// in on the media thread, a writer thread of its own turns them into WAV or Ogg Opus and
/// appends them to the file.
///
/// - `append` never blocks and never allocates: it copies the frame into a bounded queue
///   under a lock the writer thread holds only to copy the queue out. When the queue is
///   full (a stalled disk) the oldest frame is dropped and counted; it becomes silence in
///   the file, so the timeline stays whole.
/// - The file is whole on disk every `flushInterval` (WAV sizes patched, Ogg page written):
///   a crash loses at most that much audio plus what the queue held.
/// - `pause()` / `resume()`: frames appended meanwhile are written as silence and the
///   stretch is reported by `finish`.
/// - The file is created 0600, new (an existing file is an error), by `init`: create the
///   writer off the media thread.
public final class CallRecordingWriter: Sendable {
    /// The settings the writer was created with.
    public let configuration: CallRecordingConfiguration
    /// The file being written.
    public let path: String
    private let inbox: Inbox

    /// What the caller and the writer thread share, behind one lock.
    private final class Inbox: Sendable {
        struct State {
            var queue: RecordingFrameQueue
            /// Frames appended since the start, dropped ones included: the file's timeline.
            var frames = 0
            var pausedSince: Int?
            var paused: [(start: Int, end: Int)] = []
            var finishing = false
            var result: CallRecordingOutcome?
            var waiters: [@Sendable (CallRecordingOutcome) -> Void] = []
        }
        let state: Mutex<State>
        /// Wakes the writer thread early (to finish); appends never signal it.
        let wake = DispatchSemaphore(value: 0)

        init(_ state: State) { self.state = Mutex(state) }
    }

    /// Creates the file (mode 0600) with its header and starts the writer thread. Throws
    /// `CallRecordingError` for settings that cannot record or a file that cannot be created.
    public convenience init(path: String, configuration: CallRecordingConfiguration) throws(CallRecordingError) {
        // Settings first: a refusal leaves no file behind.
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        try self.init(path: path, configuration: configuration, sink: try RecordingFile(path: path))
    }

    /// The writer over any sink (tests hold or fail the writer thread's writes with one).
    init(path: String, configuration: CallRecordingConfiguration, sink: RecordingSink) throws(CallRecordingError) {
        self.path = path
        self.configuration = configuration
        let encoder: RecordingEncoder
        let header: [UInt8]
        do {
            encoder = try Self.encoder(configuration)
            header = try encoder.header()
            try withBuffer(header) { (bytes) throws(CallRecordingError) in
                try sink.append(UnsafeRawBufferPointer(bytes))
            }
        } catch {
            sink.close()
            throw error
        }
        let queue = RecordingFrameQueue(capacity: configuration.queueFrames, frameSamples: configuration.frameSamples)
        inbox = Inbox(.init(queue: queue))
        // Handed over: from here on the writer thread alone touches it.
        nonisolated(unsafe) let drain = RecordingDrain(
            path: path, configuration: configuration, encoder: encoder, sink: sink, headerBytes: header.count)
        let thread = Thread { [inbox] in Self.run(inbox, drain) }
        thread.name = "irisgw-recording"
        thread.start()
    }

    private static func encoder(
        _ configuration: CallRecordingConfiguration
    ) throws(CallRecordingError) -> any RecordingEncoder {
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        let channels = configuration.layout.channels
        switch configuration.format {
        case .wav: return WAVRecordingEncoder(sampleRate: configuration.sampleRate, channels: channels)
        case .ogg:
            return try OggOpusRecordingEncoder(
                sampleRate: configuration.sampleRate, channels: channels, bitrate: configuration.opusBitrate)
        }
    }

    /// An owner that lets go without `finish` still gets a complete file.
    deinit { finish(then: { _ in }) }

    /// Queues one 20 ms frame of each side (`configuration.frameSamples` samples; nil: that
    /// side is silent; a short side is padded with silence, a long one cut). Never blocks;
    /// ignored once `finish` was called. For the media thread.
    public func append(trunk: UnsafeBufferPointer<Int16>?, app: UnsafeBufferPointer<Int16>?) {
        inbox.state.withLock { state in
            guard !state.finishing else { return }
            state.queue.push(trunk: trunk, app: app, silent: state.pausedSince != nil)
            state.frames += 1
        }
    }

    /// `append` for arrays (tests, tools): allocation-free like the buffer form.
    public func append(trunk: [Int16]?, app: [Int16]?) {
        func with(_ side: [Int16]?, _ body: (UnsafeBufferPointer<Int16>?) -> Void) {
            if let side { side.withUnsafeBufferPointer { body($0) } } else { body(nil) }
        }
        with(trunk) { t in with(app) { a in append(trunk: t, app: a) } }
    }

    /// From the next frame on, frames are written as silence until `resume()`. Idempotent.
    public func pause() {
        inbox.state.withLock { state in
            if state.pausedSince == nil, !state.finishing { state.pausedSince = state.frames }
        }
    }

    /// From the next frame on, audio is written again. Idempotent.
    public func resume() {
        inbox.state.withLock { state in
            guard let since = state.pausedSince else { return }
            state.paused.append((since, state.frames))
            state.pausedSince = nil
        }
    }

    /// True between `pause()` and `resume()`.
    public var isPaused: Bool { inbox.state.withLock { $0.pausedSince != nil } }

    /// Frames dropped so far because the queue was full.
    public var droppedFrames: Int { inbox.state.withLock { $0.queue.dropped } }

    /// Completes the file once every frame appended before it is written (final sizes or
    /// last page), closes it, and calls `completion` on the writer thread with what the file
    /// holds, or the first write error. Later calls get the same result; later appends are
    /// ignored. Never blocks.
    public func finish(then completion: @escaping @Sendable (CallRecordingOutcome) -> Void) {
        let done = inbox.state.withLock { state in
            if let since = state.pausedSince, !state.finishing {
                state.paused.append((since, state.frames))
                state.pausedSince = nil
            }
            state.finishing = true
            if state.result == nil { state.waiters.append(completion) }
            return state.result
        }
        if let done { completion(done) } else { inbox.wake.signal() }
    }

    /// `finish(then:)`, awaited.
    public func finish() async throws(CallRecordingError) -> CallRecordingSummary {
        let result = await withCheckedContinuation { continuation in
            finish { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    // MARK: - The writer thread

    /// How often the writer thread wakes to take what the queue holds (appends never wake it).
    static let drainInterval = 0.1

    private static func run(_ inbox: Inbox, _ drain: RecordingDrain) {
        var batch = RecordingBatch(
            capacity: drain.configuration.queueFrames, frameSamples: drain.configuration.frameSamples)
        let flushEvery = Duration.milliseconds(Int64(drain.configuration.flushInterval * 1000))
        var nextFlush = ContinuousClock.now + flushEvery
        while true {
            // Wake for the next drain, or sooner for the next flush, so flushes keep their interval.
            let untilFlush = ContinuousClock.now.duration(to: nextFlush) / .milliseconds(1) / 1000
            _ = inbox.wake.wait(timeout: .now() + max(0, min(drainInterval, untilFlush)))
            let finishing = inbox.state.withLock { state in
                state.queue.moveAll(into: &batch)
                return state.finishing
            }
            drain.write(batch)
            if finishing {
                let (paused, dropped) = inbox.state.withLock { ($0.paused, $0.queue.dropped) }
                let result = drain.finish(paused: paused, dropped: dropped)
                let waiters = inbox.state.withLock { state in
                    state.result = result
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter(result) }
                return
            }
            if ContinuousClock.now >= nextFlush {
                drain.flush()
                nextFlush = ContinuousClock.now + flushEvery
            }
        }
    }
}

/// What `finish` reports: the summary of a complete file, or the first write failure.
public typealias CallRecordingOutcome = Result<CallRecordingSummary, CallRecordingError>

/// The writer thread's side: encoder, file and counts. Only that thread touches it.
private final class RecordingDrain {
    let path: String
    let configuration: CallRecordingConfiguration
    private let encoder: RecordingEncoder
    private let sink: RecordingSink
    private var bytes: Int
    private var framesWritten = 0
    /// The first write or codec failure: nothing more is written after it.
    private var failure: CallRecordingError?
    private var out: [UInt8] = []
    private var pcm: [Int16]
    private let silence: [Int16]

    init(
        path: String, configuration: CallRecordingConfiguration, encoder: RecordingEncoder, sink: RecordingSink,
        headerBytes: Int
    ) {
        self.path = path
        self.configuration = configuration
        self.encoder = encoder
        self.sink = sink
        bytes = headerBytes
        pcm = [Int16](repeating: 0, count: configuration.frameSamples * configuration.layout.channels)
        silence = pcm
    }

    /// Encodes and appends a batch: each entry's dropped frames as silence, then the entry.
    func write(_ batch: RecordingBatch) {
        guard failure == nil, batch.count > 0 else { return }
        out.removeAll(keepingCapacity: true)
        do throws(CallRecordingError) {
            for index in 0..<batch.count {
                let entry = batch.entries[index]
                for _ in 0..<entry.silenceBefore { try encodeSilence() }
                if entry.silent {
                    try encodeSilence()
                } else {
                    var failed: CallRecordingError?
                    batch.sides(index) { trunk, app in
                        do throws(CallRecordingError) { try encode(trunk: trunk, app: app) } catch { failed = error }
                    }
                    if let failed { throw failed }
                }
            }
            try appendOut()
        } catch {
            failure = error
        }
    }

    /// Makes the file whole on disk as it stands.
    func flush() {
        guard failure == nil else { return }
        out.removeAll(keepingCapacity: true)
        let patches = encoder.flush(into: &out)
        do throws(CallRecordingError) {
            try appendOut()
            for patch in patches { try sink.patch(patch.bytes, at: patch.offset) }
        } catch {
            failure = error
        }
    }

    func finish(paused: [(start: Int, end: Int)], dropped: Int) -> CallRecordingOutcome {
        if failure == nil {
            out.removeAll(keepingCapacity: true)
            do throws(CallRecordingError) {
                let patches = try encoder.finish(into: &out)
                try appendOut()
                for patch in patches { try sink.patch(patch.bytes, at: patch.offset) }
            } catch {
                failure = error
            }
        }
        sink.close()
        if let failure { return .failure(failure) }
        let seconds = { (frames: Int) in Double(frames) / 50 }
        return .success(
            CallRecordingSummary(
                path: path, duration: seconds(framesWritten), bytes: bytes,
                pausedIntervals: paused.map { .init(start: seconds($0.start), end: seconds($0.end)) },
                droppedFrames: dropped))
    }

    private func encode(trunk: UnsafeBufferPointer<Int16>, app: UnsafeBufferPointer<Int16>) throws(CallRecordingError) {
        let n = configuration.frameSamples
        switch configuration.layout {
        case .stereo:
            for i in 0..<n {
                pcm[2 * i] = trunk[i]
                pcm[2 * i + 1] = app[i]
            }
        case .mixed:
            for i in 0..<n { pcm[i] = Int16(clamping: Int32(trunk[i]) + Int32(app[i])) }
        }
        try withBuffer(pcm) { (frame) throws(CallRecordingError) in try encoder.encode(frame, into: &out) }
        framesWritten += 1
    }

    private func encodeSilence() throws(CallRecordingError) {
        try withBuffer(silence) { (frame) throws(CallRecordingError) in try encoder.encode(frame, into: &out) }
        framesWritten += 1
    }

    private func appendOut() throws(CallRecordingError) {
        guard !out.isEmpty else { return }
        try withBuffer(out) { (bytes) throws(CallRecordingError) in try sink.append(UnsafeRawBufferPointer(bytes)) }
        bytes += out.count
    }
}
