import Foundation
import Glibc
import IOCore
import Synchronization

/// One media thread: an event loop with the RTP sockets of its calls and a 20 ms timerfd
/// tick. A call's media stays on one thread for its whole life, so its state needs no
/// lock; commands from other threads arrive through the loop's queue, never per packet.
final class MediaThread: Sendable {
    let index: Int
    let loop: EventLoop
    private let timer: PeriodicTimer
    /// What only the thread touches: its calls and its measurements (checked in debug builds).
    private let state: LoopBoundBox<State>
    /// Calls on this thread (read from other threads only to balance load: approximate).
    private let calls = Atomic<Int>(0)
    var callCount: Int { calls.load(ordering: .relaxed) }
    /// Calls being placed on this thread by `MediaEngine.openCall` (not attached yet).
    let placing = Atomic<Int>(0)
    /// The busy fraction of the last second (CPU over wall time) in millionths, and the
    /// calls at that measurement: the engine reads them to place and admit calls.
    private let busyPPM = Atomic<Int>(0)
    private let callsAtMeasurement = Atomic<Int>(0)

    private struct State {
        var pipelines: [Int: CallPipeline] = [:]
        /// The thread's io_uring (UDPRing) when its I/O goes through one; nil: epoll.
        var ring: UDPRing?
        var loadWindow: (cpu: Double, wall: Double)?
        // Measurements: per-frame processing time histogram (1 µs buckets up to 20 ms), late ticks.
        var histogram = [Int](repeating: 0, count: 20_001)
        var lateFrames = 0
        var ticks = 0
    }

    init(index: Int) throws {
        self.index = index
        loop = try EventLoop()
        timer = try PeriodicTimer(interval: 0.020)
        state = LoopBoundBox(State(), loop: loop)
    }

    /// Frames played late so far. On the thread.
    var lateFrames: Int { state.value.lateFrames }

    /// Starts the thread; with `realtimePriority`, under SCHED_RR at that priority; its
    /// sockets' I/O through an io_uring unless `io` is `.epoll`. Returns why that priority
    /// could not be set (the thread runs with normal scheduling then), and why there is no
    /// ring (the thread uses epoll then).
    @discardableResult
    func start(realtimePriority: Int32? = nil, io: MediaIOMode = .automatic) -> (realtime: String?, ring: String?) {
        loop.start(name: "irisgw-media-\(index)")
        let (clock, error, ringError) = loop.sync { [self] () -> (clockid_t?, String?, String?) in
            loop.register(fd: timer.fd) { [unowned self] in self.onTick() }
            // The ring is set up here: its only submitter is this thread.
            var ringError: String?
            if io != .epoll {
                do {
                    let ring = try UDPRing()
                    state.value.ring = ring
                    loop.setWaiter(ring)
                } catch {
                    ringError = "\(error)"
                }
            }
            var clock = clockid_t()
            let cpu = pthread_getcpuclockid(pthread_self(), &clock) == 0 ? clock : nil
            guard let realtimePriority else { return (cpu, nil, ringError) }
            var param = sched_param()
            param.sched_priority = realtimePriority
            let rc = pthread_setschedparam(pthread_self(), Int32(SCHED_RR), &param)
            return (
                cpu, rc == 0 ? nil : "SCHED_RR priority \(realtimePriority): \(String(cString: strerror(rc)))",
                ringError
            )
        }
        if let clock { cpuClock.store(Int64(clock), ordering: .releasing) }
        return (error, ringError)
    }

    /// Whether the thread's sockets go through an io_uring. On the thread.
    var usesRing: Bool { state.value.ring != nil }

    /// The ring's counters (nil on epoll). On the thread.
    var ringStatistics: UDPRing.Statistics? { state.value.ring?.statistics }

    /// The thread's CPU clock (`Int64.min` until known), readable from any thread. A thread's
    /// CPU clock id is negative (the kernel encodes the thread id in it), so no id is a sentinel.
    private let cpuClock = Atomic<Int64>(.min)

    /// CPU seconds this thread has used (user + system).
    var cpuTime: Double {
        let id = cpuClock.load(ordering: .acquiring)
        guard id != .min else { return 0 }
        let clock = clockid_t(truncatingIfNeeded: id)
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    func stop() {
        loop.sync { [self] in
            for p in state.value.pipelines.values { detach(p) }
            state.value.pipelines.removeAll()
            loop.unregister(fd: timer.fd)
            loop.setWaiter(nil)
            state.value.ring = nil
        }
        loop.stop()
    }

    /// Adds a call (on the loop). Its sockets' callbacks hold it `unowned(unsafe)`: `remove`
    /// unregisters them before the pipeline can go, so no check per packet is needed.
    func attach(_ pipeline: CallPipeline) {
        state.value.pipelines[pipeline.id] = pipeline
        calls.store(state.value.pipelines.count, ordering: .relaxed)
        let trunk = pipeline.trunk, platform = pipeline.platform
        guard let ring = state.value.ring else {
            loop.register(fd: trunk.socket.fd) { [unowned(unsafe) pipeline] in pipeline.readable(.trunk) }
            loop.register(fd: platform.socket.fd) { [unowned(unsafe) pipeline] in pipeline.readable(.platform) }
            loop.register(fd: trunk.rtcpSocket.fd) { [unowned(unsafe) trunk] in trunk.readRTCP(now: EventLoop.now()) }
            loop.register(fd: platform.rtcpSocket.fd) { [unowned(unsafe) platform] in
                platform.readRTCP(now: EventLoop.now())
            }
            return
        }
        // Each socket gets a multishot receive on the thread's ring; the legs queue their
        // sends there.
        trunk.ring = ring
        platform.ring = ring
        ring.watch(fd: trunk.socket.fd) { [unowned(unsafe) pipeline] datagram, from, length, age in
            pipeline.arrived(.trunk, datagram, from: from, length: length, age: age)
        }
        ring.watch(fd: platform.socket.fd) { [unowned(unsafe) pipeline] datagram, from, length, age in
            pipeline.arrived(.platform, datagram, from: from, length: length, age: age)
        }
        ring.watch(fd: trunk.rtcpSocket.fd) { [unowned(unsafe) trunk] datagram, from, length, _ in
            trunk.rtcpArrived(datagram, from: from, length: length, now: EventLoop.now())
        }
        ring.watch(fd: platform.rtcpSocket.fd) { [unowned(unsafe) platform] datagram, from, length, _ in
            platform.rtcpArrived(datagram, from: from, length: length, now: EventLoop.now())
        }
    }

    /// Builds a call's pipeline on these ports and attaches it (on the loop). A pipeline the
    /// call had before (already removed from its thread) hands over its sockets.
    func install(
        id: Int, configuration: MediaCallConfiguration, host: String, ports: (RTPPortPair, RTPPortPair),
        events: @escaping @Sendable (MediaEvent) -> Void, replacing previous: CallPipeline? = nil
    ) throws -> CallPipeline {
        let p = try CallPipeline(
            id: id, configuration: configuration, host: host, trunkPorts: ports.0, platformPorts: ports.1,
            thread: self, events: events, replacing: previous)
        attach(p)
        return p
    }

    func remove(_ id: Int) -> CallPipeline? {
        guard let p = state.value.pipelines.removeValue(forKey: id) else { return nil }
        // A call leaving a three-way call ends it; the other call carries on alone.
        p.conference?.dissolve()
        detach(p)
        calls.store(state.value.pipelines.count, ordering: .relaxed)
        return p
    }

    func pipeline(_ id: Int) -> CallPipeline? { state.value.pipelines[id] }

    /// Stops reading a call's sockets. On the ring, their receives are cancelled before the
    /// sockets can close (a receive still armed would keep a closed socket, and its port, open).
    private func detach(_ p: CallPipeline) {
        let fds = [p.trunk.socket.fd, p.platform.socket.fd, p.trunk.rtcpSocket.fd, p.platform.rtcpSocket.fd]
        if let ring = state.value.ring {
            for fd in fds { ring.unwatch(fd: fd) }
            p.trunk.ring = nil
            p.platform.ring = nil
        } else {
            for fd in fds { loop.unregister(fd: fd) }
        }
    }

    private func onTick() {
        let expirations = timer.read()
        guard expirations > 0 else { return }
        state.value.ticks += 1
        let start = EventLoop.now()
        // Missed timer expirations mean every call on this thread played a frame late; the
        // buffered streams catch up over the next ticks (the delay must not grow behind a
        // stall).
        let missed = Int(min(expirations - 1, 10))
        let pipelines = state.value.pipelines
        if expirations > 1 { state.value.lateFrames += Int(expirations - 1) * max(1, pipelines.count) }
        for p in pipelines.values { p.tick(now: start, missed: missed) }
        if EventLoop.now() - start > 0.020 { state.value.lateFrames += pipelines.count }
        if state.value.ticks % 50 == 0 { measureLoad(now: start) }
    }

    /// Once a second: the thread's CPU time over the wall time since the last measurement.
    private func measureLoad(now: Double) {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        let cpu = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        if let w = state.value.loadWindow, now > w.wall {
            busyPPM.store(Int((cpu - w.cpu) / (now - w.wall) * 1e6), ordering: .relaxed)
            callsAtMeasurement.store(callCount, ordering: .relaxed)
        }
        state.value.loadWindow = (cpu, now)
    }

    /// The thread's load as last measured, with the calls on it now (any thread).
    var load: MediaThreadLoad {
        MediaThreadLoad(
            busy: Double(busyPPM.load(ordering: .relaxed)) / 1e6,
            calls: callCount + placing.load(ordering: .relaxed),
            callsAtMeasurement: callsAtMeasurement.load(ordering: .relaxed))
    }

    @inline(__always)
    func record(microseconds: Double) {
        let bucket = min(Int(microseconds), 20_000)
        state.value.histogram[bucket] += 1
    }

    /// Percentiles (µs) of recorded per-frame processing times, and their count.
    func percentiles(_ ps: [Double]) -> (values: [Int], count: Int) {
        let histogram = state.value.histogram
        let total = histogram.reduce(0, +)
        guard total > 0 else { return (ps.map { _ in 0 }, 0) }
        return (
            ps.map { p in
                let target = Int((Double(total) * p).rounded(.up))
                var seen = 0
                for (i, n) in histogram.enumerated() {
                    seen += n
                    if seen >= target { return i }
                }
                return histogram.count - 1
            }, total
        )
    }

    func resetMeasurements() {
        state.value.histogram = [Int](repeating: 0, count: 20_001)
        state.value.lateFrames = 0
        state.value.ticks = 0
    }
}
