// The threads that run handlers. Handlers may block (they hop to the gateway's SIP loop and
// wait), so they run here and never on the event loop; only complete requests are queued,
// so a slow client cannot hold a worker.

import Foundation
import Synchronization

final class HTTPWorkerPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var stopping = false
        var queued: Int { jobs.count - head }
    }

    let threads: Int
    let queueLimit: Int
    private let state = Mutex(State())
    /// One signal per job queued, and one per thread at stop.
    private let available = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init(threads: Int, queueLimit: Int) {
        self.threads = threads
        self.queueLimit = queueLimit
    }

    func start(name: String) {
        for i in 0..<threads {
            let thread = Thread { [self] in
                run()
                exited.signal()
            }
            thread.name = "\(name)-\(i)"
            thread.start()
        }
    }

    /// Queues `job`; false (nothing queued) when `queueLimit` jobs are waiting already or
    /// the pool is stopping.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let queued = state.withLock { s -> Bool in
            guard !s.stopping, s.queued < queueLimit else { return false }
            s.jobs.append(job)
            return true
        }
        if queued { available.signal() }
        return queued
    }

    /// Drops the jobs not started yet and waits for the running ones to finish. Not to be
    /// called from a job.
    func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopping = true; s.jobs = []; s.head = 0 }
            return !s.stopping
        }
        guard first else { return }
        for _ in 0..<threads { available.signal() }
        for _ in 0..<threads { exited.wait() }
    }

    private func run() {
        while true {
            available.wait()
            let job = state.withLock { s -> (@Sendable () -> Void)?? in
                if s.stopping { return .some(nil) }
                guard s.head < s.jobs.count else { return nil }
                let job = s.jobs[s.head]
                s.head += 1
                if s.head == s.jobs.count {
                    s.jobs.removeAll(keepingCapacity: true)
                    s.head = 0
                } else if s.head >= 64, s.head >= s.jobs.count / 2 {
                    s.jobs.removeFirst(s.head)
                    s.head = 0
                }
                return .some(job)
            }
            switch job {
            case .some(.some(let work)): work()
            case .some(.none): return
            case .none: continue
            }
        }
    }
}
