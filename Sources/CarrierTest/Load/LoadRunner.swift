import Foundation
import IrisAPI
import IrisClient
import Synchronization

/// Runs a `LoadPlan` through a gateway's control API: a pacer starts calls (each on a thread
/// of its own) at the plan's rate and under its concurrency cap, and a scraper reads the
/// gateway's `/metrics` every second. `progress` gets a line every few seconds.
public final class LoadRunner: Sendable {
    public let connection: IrisRtcConnection
    public let profile: String?
    public let plan: LoadPlan
    public let name: String
    public let progress: @Sendable (String) -> Void

    private struct State {
        var active = 0
        var calls: [LoadCall] = []
    }
    private let state = Mutex(State())
    /// Signalled when a call ends (a slot frees).
    private let changed = NSCondition()
    private let stopping = Atomic<Bool>(false)

    public init(
        connection: IrisRtcConnection, profile: String?, plan: LoadPlan, name: String = "load",
        progress: @escaping @Sendable (String) -> Void
    ) {
        self.connection = connection
        self.profile = profile
        self.plan = plan
        self.name = name
        self.progress = progress
    }

    /// Asks a run in progress to start no more calls (those in progress go on to their end).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    public func run() -> LoadResult {
        let start = Date()
        let startMs = Int64(start.timeIntervalSince1970 * 1000)
        let scraper = MetricsScraper(connection: connection, start: start)
        scraper.start()
        var attempts = 0
        var lastReport = start
        while !stopping.load(ordering: .relaxed) {
            let elapsed = Date().timeIntervalSince(start)
            if let limit = plan.callLimit, attempts >= limit { break }
            if let d = plan.durationSec, elapsed >= d { break }
            // A free slot (a call ending wakes us), then the start.
            changed.lock()
            while state.withLock({ $0.active }) >= plan.concurrent && !stopping.load(ordering: .relaxed) {
                _ = changed.wait(until: Date().addingTimeInterval(1))
            }
            changed.unlock()
            if stopping.load(ordering: .relaxed) { break }
            let at = Date()
            let index = attempts
            attempts += 1
            state.withLock { $0.active += 1 }
            let thread = Thread { [self] in
                let call = self.call(index, start: start, startMs: startMs)
                state.withLock {
                    $0.active -= 1
                    $0.calls.append(call)
                }
                changed.lock()
                changed.broadcast()
                changed.unlock()
            }
            thread.name = "irisgw-load-call"
            thread.start()
            if Date().timeIntervalSince(lastReport) >= 5 {
                lastReport = Date()
                let (active, done) = state.withLock { ($0.active, $0.calls) }
                progress(
                    String(
                        format: "  %.0f s: %d started, %d in progress, %d ended (%d answered)",
                        Date().timeIntervalSince(start),
                        attempts, active, done.count, done.filter(\.answered).count))
            }
            // The pace: the next start no sooner than 1/rate after this one.
            let next = at.addingTimeInterval(1 / plan.rate(at: at.timeIntervalSince(start)))
            changed.lock()
            while Date() < next && !stopping.load(ordering: .relaxed) { _ = changed.wait(until: next) }
            changed.unlock()
        }
        // Every call started ends within its own bounds (answer timeout, hold, audio check,
        // the end's wait); this bound only guards against a stuck one.
        let bound = Date().addingTimeInterval(plan.answerTimeoutSec + plan.holdSec + 60)
        changed.lock()
        while state.withLock({ $0.active }) > 0 && Date() < bound {
            _ = changed.wait(until: min(bound, Date().addingTimeInterval(1)))
        }
        changed.unlock()
        let samples = scraper.stop()
        let calls = state.withLock { $0.calls }
        return LoadResult(
            name: name, profile: profile, plan: plan, startedAt: start.timeIntervalSince1970,
            durationSec: (Date().timeIntervalSince(start) * 10).rounded() / 10, calls: calls, gateway: samples)
    }

    /// One call: create, wait for the answer or the end, check audio on every K-th, hold,
    /// hang up, and wait for the end.
    private func call(_ index: Int, start: Date, startMs: Int64) -> LoadCall {
        var c = LoadCall(index: index + 1, target: plan.target(of: index), startSec: Date().timeIntervalSince(start))
        place(&c, audio: plan.checksAudio(index), startMs: startMs)
        c.endSec = Date().timeIntervalSince(start)
        return c
    }

    private func place(_ c: inout LoadCall, audio: Bool, startMs: Int64) {
        let stream: IrisRtcStream
        do { stream = try IrisRtcStream(source: audio ? .tone(hz: plan.toneHz, amplitude: 0.3) : .silence) } catch {
            c.refused = "cannot open the client's media: \(error)"
            return
        }
        let session = IrisRtcAudioSession(connection: connection, stream: stream, delegate: nil)
        defer { session.stop() }
        do {
            try session.createWithTN(targetTN: c.target, sourceTN: plan.source, profile: profile)
        } catch {
            c.refused = "\(error)"
            return
        }
        let over = { session.endedEvent != nil }
        _ = Self.wait(plan.answerTimeoutSec) { session.status == .connected || over() }
        if session.status == .connected && !over() {
            c.answered = true
            let answeredAt = Date()
            if audio {
                let leg = stream.leg
                let heard = Self.wait(5) { leg.toneLevel(hz: plan.toneHz, lastSeconds: 0.4) > 0.3 || over() }
                c.audioLevel = (leg.toneLevel(hz: plan.toneHz, lastSeconds: 0.4) * 100).rounded() / 100
                c.audioPassed = heard && !over()
            }
            let left = plan.holdSec - Date().timeIntervalSince(answeredAt)
            if left > 0 { _ = Self.wait(left, over) }
            if over() { c.dropped = true } else { try? session.close() }
        } else if !over() {
            c.cancelledByUs = true
            try? session.close()
        }
        _ = session.waitForEnd(timeout: 10)
        let events = session.events
        let t0 = events.first?.at ?? startMs
        if let ringing = events.first(where: { $0.status == .connecting }) { c.postDialDelayMs = Int(ringing.at - t0) }
        if let answer = events.first(where: { $0.status == .connected }) {
            c.answerMs = Int(answer.at - t0)
            c.answerSec = Double(answer.at - startMs) / 1000
            c.answered = true
        }
        if let end = session.endedEvent {
            c.endReason = end.reason?.rawValue
            c.sipCode = end.sip?.code
            c.q850Cause = end.sip?.cause
        }
    }

    /// Polls `condition` every 20 ms until it holds or `seconds` pass; whether it held.
    static func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

/// Reads the gateway's `/metrics` every second on a thread of its own.
final class MetricsScraper: Sendable {
    let connection: IrisRtcConnection
    let origin: Date
    private let samples = Mutex<[GatewaySample]>([])
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(connection: IrisRtcConnection, start: Date) {
        self.connection = connection
        origin = start
    }

    func start() {
        let thread = Thread { [self] in
            var lastCPU: (sec: Double, cpu: Double)?
            repeat {
                guard let text = try? connection.metricsText() else { continue }
                let m = PrometheusSamples(text)
                let now = Date().timeIntervalSince(origin)
                var s = GatewaySample(sec: (now * 10).rounded() / 10)
                s.mediaLoad = m.values("irisgw_media_thread_load").max()
                if let cpu = m.value("process_cpu_seconds_total") {
                    if let last = lastCPU, now > last.sec {
                        s.cpuPercent = max(0, 100 * (cpu - last.cpu) / (now - last.sec))
                    }
                    lastCPU = (now, cpu)
                }
                s.residentBytes = m.value("process_resident_memory_bytes").map { Int($0) }
                s.sessions = Int(m.values("irisgw_sessions_active").reduce(0, +))
                samples.withLock { $0.append(s) }
            } while done.wait(timeout: .now() + 1) == .timedOut
            finished.signal()
        }
        thread.name = "irisgw-load-metrics"
        thread.start()
    }

    /// Stops the thread and returns what it read.
    func stop() -> [GatewaySample] {
        done.signal()
        finished.wait()
        return samples.withLock { $0 }
    }
}

/// Samples of a Prometheus text exposition, by metric name (labels kept as written).
public struct PrometheusSamples: Sendable {
    public private(set) var samples: [(name: String, labels: String, value: Double)] = []

    public init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else {
                continue
            }
            let series = line[..<space]
            if let brace = series.firstIndex(of: "{") {
                samples.append((String(series[..<brace]), String(series[brace...]), v))
            } else {
                samples.append((String(series), "", v))
            }
        }
    }

    /// Every sample of `name`, whatever its labels.
    public func values(_ name: String) -> [Double] { samples.filter { $0.name == name }.map(\.value) }
    /// The sample of `name` whose labels contain `labels` (all of them when empty): the first.
    public func value(_ name: String, labels: String = "") -> Double? {
        samples.first { $0.name == name && (labels.isEmpty || $0.labels.contains(labels)) }?.value
    }
}
