import Foundation
import Glibc
import IOCore
import Logging
import Synchronization

/// How the media engine runs. Every field has a documented default.
public struct MediaEngineConfiguration: Sendable {
    /// Media threads (each with its own epoll set and 20 ms tick). Default: one per CPU the
    /// process may use (`UsableCPUs`: affinity mask and cgroup quota, the smaller).
    public var threads: Int
    /// Address RTP sockets bind to. Default 127.0.0.1.
    public var host: String
    /// RTP/RTCP ports (RTP even, RTCP = RTP + 1). Default 20000-29999.
    public var portRange: ClosedRange<UInt16>
    /// Seconds a released port pair rests before reuse, so late packets of an old call never
    /// reach a new one. Default 10.
    public var portQuarantine: Double
    /// Real-time priority (SCHED_RR, 1-99) for the media threads, so other processes on the
    /// machine cannot hold a tick back: a media thread that is runnable but waits for a CPU
    /// plays its calls' frames late (`lateFrames`). Needs CAP_SYS_NICE or an RLIMIT_RTPRIO
    /// allowing it; without, the threads keep normal scheduling (`realtime` says which).
    /// Default nil: normal scheduling.
    public var realtimePriority: Int32?
    /// What one call is assumed to cost (a fraction of a core) until enough calls have been
    /// measured to know (`MediaAdmission.callCost`). Default 0.01, on the safe side: a call
    /// transcoding a browser's fullband Opus measured 0.65-0.93 % of a core on a 2-core VM
    /// (docs/media.md, "Load and admission").
    public var callCostEstimate: Double
    /// How the media threads do their socket I/O: io_uring batches (one system call per
    /// batch of packets across all of a thread's calls) or epoll. Default `.automatic`:
    /// io_uring when the kernel allows it, else epoll (logged once).
    public var io: MediaIOMode

    public init(
        threads: Int = UsableCPUs.current().count, host: String = "127.0.0.1",
        portRange: ClosedRange<UInt16> = 20_000...29_999, portQuarantine: Double = 10, realtimePriority: Int32? = nil,
        callCostEstimate: Double = 0.01, io: MediaIOMode = .automatic
    ) {
        self.threads = max(1, threads)
        self.host = host
        self.portRange = portRange
        self.portQuarantine = portQuarantine
        self.realtimePriority = realtimePriority
        self.callCostEstimate = callCostEstimate
        self.io = io
    }
}

/// The media engine: a small fixed pool of media threads; each call is pinned to the least
/// loaded one (measured CPU, `MediaAdmission`) when it is created, and refused when that
/// thread would pass the caller's load budget.
public final class MediaEngine: Sendable {
    public let configuration: MediaEngineConfiguration
    let threads: [MediaThread]
    private let ports: Mutex<RTPPortAllocator>
    private let nextID = Atomic<Int>(1)
    /// Placement decisions one at a time, so two calls placed at once both count.
    private let placement = Mutex(())

    public init(configuration: MediaEngineConfiguration = MediaEngineConfiguration()) throws {
        self.configuration = configuration
        threads = try (0..<configuration.threads).map { try MediaThread(index: $0) }
        ports = Mutex(
            try RTPPortAllocator(
                configuration: .init(range: configuration.portRange, quarantine: configuration.portQuarantine)))
        let started = threads.map { $0.start(realtimePriority: configuration.realtimePriority, io: configuration.io) }
        realtimeError = started.compactMap(\.realtime).first
        let ringError = started.compactMap(\.ring).first
        if let ringError, configuration.io == .uring {
            threads.forEach { $0.stop() }
            throw MediaIOUnavailableError(reason: ringError)
        }
        io = ringError == nil && configuration.io != .epoll ? .uring : .epoll
        ioFallbackReason = configuration.io == .automatic ? ringError : nil
        if let ringError, configuration.io == .automatic,
            !mediaIOFallbackLogged.exchange(true, ordering: .relaxed)
        {
            Logger(.media).warning("media I/O falls back to epoll: io_uring unavailable: \(ringError)")
        }
    }

    /// The I/O path the media threads use: `.uring` or `.epoll` (never `.automatic`).
    public let io: MediaIOMode
    /// Why `.automatic` fell back to epoll; nil when it did not.
    public let ioFallbackReason: String?

    /// Why the media threads could not take `configuration.realtimePriority` (they run with
    /// normal scheduling then); nil when they did or none was asked for.
    public let realtimeError: String?

    /// Stops every thread; calls still open are dropped with their sockets.
    public func shutdown() {
        threads.forEach { $0.stop() }
    }

    /// Opens a call's media: two RTP/RTCP port pairs and sockets, pinned to one thread.
    /// `events` is called on that thread (never per packet). With a `loadBudget` (0...1 of a
    /// thread's CPU), a call that would push the least loaded thread past it is refused with
    /// `MediaOverloadError` before anything is opened.
    public func openCall(
        _ configuration: MediaCallConfiguration, loadBudget: Double? = nil,
        events: @escaping @Sendable (MediaEvent) -> Void = { _ in }
    ) throws -> MediaCall {
        let thread = try place(budget: loadBudget)
        // Counted as placing until its thread attaches it (the attach stops counting it).
        var handedOver = false
        defer { if !handedOver { thread.placing.subtract(1, ordering: .relaxed) } }
        // Another process may hold ports of our range: a pair that will not bind is skipped
        // (it rests in quarantine like a used one) and the next is tried.
        var lastError: any Error = SocketError("no RTP ports", code: EADDRINUSE)
        for _ in 0..<32 {
            do {
                let call = try openCallOnce(configuration, on: thread, events: events)
                handedOver = true
                return call
            } catch let e as SocketError where e.code == EADDRINUSE {
                lastError = e
            }
        }
        throw lastError
    }

    /// The thread a new call goes to, counted as placing there until it is attached.
    private func place(budget: Double?, pending: Int = 0) throws(MediaOverloadError) -> MediaThread {
        try placement.withLock { _ throws(MediaOverloadError) -> MediaThread in
            let loads = threads.map(\.load)
            guard
                let i = MediaAdmission.place(
                    loads, budget: budget, defaultCost: configuration.callCostEstimate, pending: pending)
            else {
                let cost = MediaAdmission.callCost(loads, defaultCost: configuration.callCostEstimate)
                throw MediaOverloadError(
                    predicted: loads.map { MediaAdmission.predicted($0, cost: cost) }.min() ?? 0, budget: budget ?? 0)
            }
            threads[i].placing.add(1, ordering: .relaxed)
            return threads[i]
        }
    }

    /// Whether a new call would be admitted under `budget` now, with `pending` calls already
    /// admitted but not opened (an inbound INVITE is admitted before the app joins it).
    /// Throws the refusal.
    public func admit(budget: Double, pending: Int = 0) throws(MediaOverloadError) {
        let thread = try place(budget: budget, pending: pending)
        thread.placing.subtract(1, ordering: .relaxed)
    }

    /// Each media thread's load, as last measured (for `/metrics`).
    public func loads() -> [MediaThreadLoad] { threads.map(\.load) }

    private func openCallOnce(
        _ configuration: MediaCallConfiguration, on thread: MediaThread,
        events: @escaping @Sendable (MediaEvent) -> Void
    ) throws -> MediaCall {
        let (trunkPorts, platformPorts) = try ports.withLock { alloc -> (RTPPortPair, RTPPortPair) in
            let now = EventLoop.now()
            let a = try alloc.allocate(now: now)
            do {
                return (a, try alloc.allocate(now: now))
            } catch {
                try? alloc.release(a, now: now)
                throw error
            }
        }
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let host = self.configuration.host
        // Built here, then handed to its thread, which attaches it: the caller (the SIP loop,
        // say) never waits on a media thread. Nothing else reaches the pipeline before the
        // thread has it, and commands sent after this return queue behind the attach.
        nonisolated(unsafe) let pipeline: CallPipeline
        do {
            pipeline = try CallPipeline(
                id: id, configuration: configuration, host: host, trunkPorts: trunkPorts, platformPorts: platformPorts,
                thread: thread, events: events)
        } catch {
            release(trunkPorts, platformPorts)
            throw error
        }
        let call = MediaCall(
            id: id, engine: self, thread: thread, tap: configuration.trunkTap, trunk: pipeline.trunk.address,
            platform: pipeline.platform.address, ports: (trunkPorts, platformPorts), events: events)
        thread.loop.execute {
            thread.attach(pipeline)
            thread.placing.subtract(1, ordering: .relaxed)
        }
        return call
    }

    func release(_ a: RTPPortPair, _ b: RTPPortPair) {
        ports.withLock { alloc in
            let now = EventLoop.now()
            try? alloc.release(a, now: now)
            try? alloc.release(b, now: now)
        }
    }

    /// Measurements across threads: per-frame processing percentiles (µs), late frames.
    public func measurements() -> (p50: Int, p99: Int, frames: Int, lateFrames: Int) {
        var p50 = 0, p99 = 0, frames = 0, late = 0
        for t in threads {
            let m = t.loop.sync { (t.percentiles([0.5, 0.99]), t.lateFrames) }
            p50 = max(p50, m.0.values[0])
            p99 = max(p99, m.0.values[1])
            frames += m.0.count
            late += m.1
        }
        return (p50, p99, frames, late)
    }

    /// CPU seconds used by all media threads so far.
    public var cpuTime: Double { threads.reduce(0) { $0 + $1.cpuTime } }

    public func resetMeasurements() {
        for t in threads { t.loop.sync { t.resetMeasurements() } }
    }
}

/// A handle on one call's media; every method may be called from any thread.
public final class MediaCall: Sendable {
    public let id: Int
    /// Local RTP addresses to put in the SDP of each side.
    public let trunkAddress: SocketAddress
    public let platformAddress: SocketAddress
    private let engine: MediaEngine
    /// The call's thread; a merge may move the call to its partner's.
    private let threadRef: Mutex<MediaThread>
    private var thread: MediaThread { threadRef.withLock { $0 } }
    private let ports: (RTPPortPair, RTPPortPair)
    private let events: @Sendable (MediaEvent) -> Void
    private let closed = Atomic<Bool>(false)
    /// The trunk leg's tap, put back into every configuration the call is rebuilt with.
    private let tap: (any MediaPacketTap)?

    init(
        id: Int, engine: MediaEngine, thread: MediaThread, tap: (any MediaPacketTap)?, trunk: SocketAddress,
        platform: SocketAddress, ports: (RTPPortPair, RTPPortPair),
        events: @escaping @Sendable (MediaEvent) -> Void
    ) {
        self.id = id
        self.engine = engine
        self.threadRef = Mutex(thread)
        self.tap = tap
        self.trunkAddress = trunk
        self.platformAddress = platform
        self.ports = ports
        self.events = events
    }

    /// Replaces the call's codecs and addresses (the carrier's answer chose another codec
    /// than the one the call was opened with) on the same sockets, so the addresses already in
    /// the SDP stay valid and packets waiting in them are kept. Codec, jitter and DTMF state
    /// start afresh. Returns at once: the rebuild runs on the call's media thread, before any
    /// command sent after it, and `completion` runs there with nil or why the rebuild failed.
    public func reconfigure(
        _ configuration: MediaCallConfiguration, completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        guard !closed.load(ordering: .acquiring) else {
            completion?(nil)
            return
        }
        var tapped = configuration
        tapped.trunkTap = tap
        let configuration = tapped
        let id = self.id, ports = self.ports, events = self.events, thread = self.thread
        let host = engine.configuration.host
        thread.loop.execute {
            guard let old = thread.remove(id) else {
                completion?(nil)
                return
            }
            do {
                _ = try thread.install(
                    id: id, configuration: configuration, host: host, ports: ports, events: events, replacing: old)
                completion?(nil)
            } catch {
                completion?(error)
            }
        }
    }

    public func address(of leg: MediaLeg) -> SocketAddress { leg == .trunk ? trunkAddress : platformAddress }

    /// An offer/answer named `address` for a leg's peer: RTP goes there until the peer's real
    /// source latches, and the source policy opens a new learning window (RTPSourcePolicy).
    /// Call it for every offer/answer, also when the address did not change.
    public func setRemote(_ leg: MediaLeg, _ address: SocketAddress) {
        let id = self.id
        thread.loop.execute { [thread] in thread.pipeline(id)?.leg(leg).setRemote(address) }
    }

    /// Bridges `held` into this call: a three-way call of both trunk legs and this call's
    /// platform leg (mix-minus), or with `includesPlatform` false the two trunk legs alone
    /// (each hears the other; nothing goes to either platform leg). `held` moves to this call's media thread (its pipeline is
    /// rebuilt there with its sockets, without passthrough), and this call's pipeline is
    /// rebuilt too if it was relaying. `completion` runs on a media thread with nil or the error. Closing either
    /// call ends the bridge.
    public func merge(
        with held: MediaCall, configuration: MediaCallConfiguration, heldConfiguration: MediaCallConfiguration,
        includesPlatform: Bool = true, completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        guard held !== self else { return completion(MediaMergeError.sameCall) }
        guard !closed.load(ordering: .acquiring), !held.closed.load(ordering: .acquiring) else {
            return completion(MediaMergeError.closed)
        }
        let hostThread = thread, heldThread = held.thread
        let hostID = id, heldID = held.id, heldPorts = held.ports, heldEvents = held.events
        let host = engine.configuration.host, ports = self.ports, events = self.events
        // Step 1, on the held call's thread: take its pipeline off (its sockets close).
        heldThread.loop.execute {
            // Its sockets go along to the host's thread (no window in which the ports are free).
            // Handed over: this thread lets go of it before the host's thread takes it.
            nonisolated(unsafe) let previous = heldThread.remove(heldID)
            held.threadRef.withLock { $0 = hostThread }
            // Step 2, on the host's thread: rebuild both for mixing and link them.
            hostThread.loop.execute {
                do {
                    var mine = configuration, theirs = heldConfiguration
                    mine.allowPassthrough = false
                    theirs.allowPassthrough = false
                    mine.trunkTap = self.tap
                    theirs.trunkTap = held.tap
                    let hostPipeline: CallPipeline
                    if let p = hostThread.pipeline(hostID), !p.passthrough {
                        hostPipeline = p
                    } else {
                        hostPipeline = try hostThread.install(
                            id: hostID, configuration: mine, host: host, ports: ports, events: events,
                            replacing: hostThread.remove(hostID))
                    }
                    let member = try hostThread.install(
                        id: heldID, configuration: theirs, host: host, ports: heldPorts,
                        events: heldEvents, replacing: previous)
                    let conference = try MediaConference(
                        host: hostPipeline, member: member, includesPlatform: includesPlatform)
                    hostPipeline.conference = conference
                    member.conference = conference
                    completion(nil)
                } catch {
                    completion(error)
                }
            }
        }
    }

    /// Starts RTP supervision now: `.timeout` after `seconds` without trunk RTP, even if none
    /// ever came (call it when the call is answered; ringing without early media is silent).
    public func armRTPTimeout(_ seconds: Double) {
        let id = self.id
        thread.loop.execute { [thread] in thread.pipeline(id)?.armTimeout(seconds, now: EventLoop.now()) }
    }

    /// Adds a consumer of the call's decoded audio: from the next tick after the call has
    /// audio, both tracks every 20 ms on the media thread (`MediaAudioSink`). A relaying call
    /// (the same codec on both legs) is rebuilt to transcode, so there are frames to hand out.
    public func addAudioSink(_ sink: any MediaAudioSink) { changeAudio { $0.add(sink) } }

    /// Stops handing audio to `sink` (it may still get the frame of a tick under way).
    public func removeAudioSink(_ sink: any MediaAudioSink) { changeAudio { $0.remove(sink) } }

    /// Plays `source` to the trunk instead of the platform leg's RTP (nil: the platform leg
    /// again); what the trunk says still goes to the sinks. Nothing is sent on the platform leg.
    public func setAudioSource(_ source: (any MediaAudioSource)?) { changeAudio { $0.source = source } }

    private func changeAudio(_ change: @escaping @Sendable (CallAudioTap) -> Void) {
        let id = self.id, ports = self.ports, events = self.events, host = engine.configuration.host
        thread.loop.execute { [thread] in
            guard let pipeline = thread.pipeline(id) else { return }
            let audio = pipeline.audio ?? CallAudioTap()
            pipeline.audio = audio
            change(audio)
            guard pipeline.passthrough, !audio.isEmpty else { return }
            var configuration = pipeline.configuration
            configuration.allowPassthrough = false
            // The rebuild keeps the sockets; should it fail, the call stays as it was, untapped.
            _ = try? thread.install(
                id: id, configuration: configuration, host: host, ports: ports, events: events,
                replacing: thread.remove(id))
        }
    }

    /// Silences what a leg sends into the call (the platform's microphone, say).
    public func setMuted(_ leg: MediaLeg, _ muted: Bool) {
        let id = self.id
        thread.loop.execute { [thread] in thread.pipeline(id)?.leg(leg).muted = muted }
    }

    /// Queues DTMF digits to send on a leg as RFC 4733 events.
    public func sendDTMF(_ digits: String, on leg: MediaLeg, durationMs: Int = 100) throws {
        _ = try DTMFDigit.digits(digits)
        let id = self.id
        thread.loop.execute { [thread] in
            guard let leg = thread.pipeline(id)?.leg(leg) else { return }
            // Over the queue's bound (DTMFSender.maxQueued): dropped whole and counted.
            do { try leg.dtmfOut.enqueue(digits, durationMs: durationMs) } catch {
                leg.statistics.dtmfDropped += digits.count
            }
        }
    }

    /// The legs' statistics now, waiting for the media thread: for threads that are not event
    /// loops (the control API's, tools, tests). A loop asks with `statistics(completion:)`.
    public func statistics() -> [MediaLeg: MediaLegStatistics] {
        let id = self.id
        return thread.loop.sync { [thread] in thread.pipeline(id)?.snapshot() ?? [:] }
    }

    /// The legs' statistics, handed to `completion` on the call's media thread (empty once
    /// the call is closed).
    public func statistics(completion: @escaping @Sendable ([MediaLeg: MediaLegStatistics]) -> Void) {
        let id = self.id
        thread.loop.execute { [thread] in completion(thread.pipeline(id)?.snapshot() ?? [:]) }
    }

    /// Closes the sockets; the ports rest in quarantine before reuse. Safe to call twice.
    /// Returns at once: the media thread closes the call after every command sent before,
    /// then hands the legs' final statistics to `completion` there (empty, at once, when the
    /// call was closed already).
    public func close(completion: (@Sendable ([MediaLeg: MediaLegStatistics]) -> Void)? = nil) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else {
            completion?([:])
            return
        }
        let id = self.id, engine = self.engine, ports = self.ports
        thread.loop.execute { [thread] in
            let final = thread.remove(id)?.snapshot() ?? [:]
            // The sockets closed with the pipeline: only now may the ports be handed out again.
            engine.release(ports.0, ports.1)
            completion?(final)
        }
    }

    deinit { close() }
}

extension MediaEngine {
    /// True when every media thread runs a no-op within `timeout` seconds: the threads are
    /// alive and not stuck (a health check; it never blocks a media thread).
    public func responds(within timeout: Double) -> Bool {
        let answered = DispatchSemaphore(value: 0)
        for t in threads { t.loop.execute { answered.signal() } }
        let deadline = DispatchTime.now() + timeout
        return threads.allSatisfy { _ in answered.wait(timeout: deadline) == .success }
    }
}
