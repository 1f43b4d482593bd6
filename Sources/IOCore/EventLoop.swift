import CLinux
import Foundation
import Glibc
import Synchronization

/// One thread with an epoll set, a timer heap, and a queue of work handed in from other
/// threads. The SIP stack runs on one (everything that owns SIP state: osip, transactions,
/// dialogs); each media thread is another. State confined to a loop needs no lock.
public final class EventLoop: @unchecked Sendable {  // its own state is touched on its thread only; the inbox is locked
    /// A scheduled timer; cancel it with `cancel(_:)`.
    public struct Timer: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private let epfd: Int32
    private let wakeFD: Int32
    private var readers: [Int32: () -> Void] = [:]
    private var writers: [Int32: () -> Void] = [:]
    /// Registered fds whose readability is not watched for now (`setReading`).
    private var paused = Set<Int32>()
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private var heap = TimerHeap()
    private var nextTimerID: UInt64 = 1
    private let running = Atomic<Bool>(false)
    private var thread: Thread?
    private let stopped = DispatchSemaphore(value: 0)
    /// The loop thread's pthread_t (0 before it runs), read from any thread by `isInLoop`.
    private let loopThreadID = Atomic<UInt>(0)

    /// What the loop waits in instead of `epoll_wait`, when set (`setWaiter`).
    private var waiter: (any EventLoopWaiter)?

    /// Runs once per loop iteration after I/O and timers (the osip transaction pump).
    /// Returns how soon (seconds) it wants to run again, or nil for "only on activity".
    public var tick: (() -> Double?)?

    public init() throws {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epfd >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw SocketError("eventfd") }
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.fd = wakeFD
        epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, &ev)
    }

    deinit {
        close(epfd)
        close(wakeFD)
    }

    /// Monotonic seconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// True on the loop's thread.
    public var isInLoop: Bool {
        let id = loopThreadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    /// True while the loop's thread runs: from its first instruction until `stop`.
    public var isRunning: Bool { loopThreadID.load(ordering: .acquiring) != 0 && running.load(ordering: .acquiring) }

    /// True on the thread of any `EventLoop` (where `sync` into another loop is refused in
    /// debug builds: a loop never waits on another).
    public static var isOnAnyLoop: Bool { pthread_getspecific(loopThreadKey) != nil }

    public func start(name: String = "irisgw-loop") {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // `start` returns once the thread is the loop's: from then on its state is the loop's
        // (`isConfinedHere` is false elsewhere).
        let running = DispatchSemaphore(value: 0)
        let t = Thread { [self] in
            loopThreadID.store(UInt(pthread_self()), ordering: .releasing)
            pthread_setspecific(loopThreadKey, Unmanaged.passUnretained(self).toOpaque())
            running.signal()
            // Visible in `top -H` and perf (the kernel keeps the first 15 bytes).
            CLinux_set_thread_name(name)
            run()
            stopped.signal()
        }
        t.name = name
        t.stackSize = 4 << 20
        thread = t
        t.start()
        running.wait()
    }

    /// Stops the loop and waits for its thread to finish.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake()
        if !isInLoop { stopped.wait() }
    }

    /// Runs `work` on the loop thread (soon, in order).
    public func execute(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        wake()
    }

    /// Runs `work` on the loop and waits for its result. For threads that are not event
    /// loops (main, the control API's queue, tests): a loop never waits on another loop.
    public func sync<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T {
        if isInLoop { return work() }
        assert(
            !Self.isOnAnyLoop,
            "an event loop waits on another loop: send it work with `execute` and get the answer back by callback")
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        execute {
            let value = work()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }

    /// Schedules `work` on the loop after `delay` seconds. On the loop (checked in debug builds).
    @discardableResult
    public func schedule(after delay: Double, _ work: @escaping () -> Void) -> Timer {
        assertInLoop()
        let id = nextTimerID
        nextTimerID += 1
        heap.push(deadline: Self.now() + max(0, delay), id: id, work: work)
        return Timer(id: id)
    }

    /// Cancels a timer that has not fired. On the loop (checked in debug builds).
    public func cancel(_ timer: Timer?) {
        assertInLoop()
        if let timer { heap.cancel(timer.id) }
    }

    /// Watches `fd` for readability. On the loop (checked in debug builds).
    public func register(fd: Int32, onReadable: @escaping () -> Void) {
        assertInLoop()
        readers[fd] = onReadable
        paused.remove(fd)
        var ev = epoll_event()
        ev.events = EPOLLIN.rawValue
        ev.data.fd = fd
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)
    }

    public func unregister(fd: Int32) {
        assertInLoop()
        readers[fd] = nil
        writers[fd] = nil
        paused.remove(fd)
        epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nil)
    }

    /// Stops (false) or resumes (true) watching a registered fd for readability, keeping its
    /// handler: a socket that must not be read for now (its request is being answered) would
    /// otherwise wake a level-triggered loop again and again. Hang-ups and errors still call
    /// the handler. On the loop (checked in debug builds).
    public func setReading(fd: Int32, _ enabled: Bool) {
        assertInLoop()
        guard readers[fd] != nil, paused.contains(fd) == enabled else { return }
        if enabled { paused.remove(fd) } else { paused.insert(fd) }
        updateInterest(fd)
    }

    /// Asks for (or stops) a callback when `fd` becomes writable. On the loop (checked in debug builds).
    public func watchWritable(fd: Int32, _ onWritable: (() -> Void)?) {
        assertInLoop()
        writers[fd] = onWritable
        updateInterest(fd)
    }

    private func updateInterest(_ fd: Int32) {
        var ev = epoll_event()
        ev.events = (paused.contains(fd) ? 0 : EPOLLIN.rawValue) | (writers[fd] == nil ? 0 : EPOLLOUT.rawValue)
        ev.data.fd = fd
        epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev)
    }

    /// Makes the loop wait in `waiter` (a media thread's io_uring) instead of `epoll_wait`;
    /// nil goes back to epoll. On the loop (checked in debug builds).
    public func setWaiter(_ waiter: (any EventLoopWaiter)?) {
        assertInLoop()
        self.waiter = waiter
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var tickDelay: Double? = nil
        var epollBacklog = false
        while running.load(ordering: .acquiring) {
            var timeout: Double = 1.0
            if let d = heap.nextDeadline { timeout = min(timeout, max(0, d - Self.now())) }
            if let t = tickDelay { timeout = min(timeout, t) }
            let ms = Int32((timeout * 1000).rounded(.up))
            let n: Int32
            if let waiter {
                // The epoll set is one more thing the waiter watches: its events are read
                // without blocking once it says they are there (or a full batch left more).
                let ready = waiter.wait(epollFD: epfd, timeoutMs: epollBacklog ? 0 : ms) || epollBacklog
                n = ready ? epoll_wait(epfd, &events, Int32(events.count), 0) : 0
                epollBacklog = n == Int32(events.count)
            } else {
                n = epoll_wait(epfd, &events, Int32(events.count), ms)
            }
            if n > 0 {
                for i in 0..<Int(n) {
                    let fd = events[i].data.fd
                    if fd == wakeFD {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                    } else {
                        if events[i].events & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0 { writers[fd]?() }
                        if events[i].events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                            readers[fd]?()
                        }
                    }
                }
            }
            let work = inbox.withLock { items -> [@Sendable () -> Void] in
                let taken = items
                items.removeAll(keepingCapacity: true)
                return taken
            }
            for w in work { w() }
            let now = Self.now()
            while let due = heap.popDue(now: now) { due() }
            tickDelay = tick?()
        }
    }
}

/// Something an event loop waits in instead of `epoll_wait` (UDPRing: an io_uring that
/// also carries the loop's sockets' I/O). Used on the loop's thread only.
public protocol EventLoopWaiter: AnyObject {
    /// Waits up to `timeoutMs` for work, handles what completed, and returns true when the
    /// loop's epoll set (`epollFD`) has events to read.
    func wait(epollFD: Int32, timeoutMs: Int32) -> Bool
}

/// Marks the threads that run an `EventLoop` (set once by the thread itself).
private let loopThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

/// A binary min-heap of deadlines with lazy cancellation.
struct TimerHeap {
    private var items: [(deadline: Double, id: UInt64, work: () -> Void)] = []
    private var live = Set<UInt64>()
    private var cancelled = Set<UInt64>()

    var nextDeadline: Double? {
        mutating get {
            dropCancelledTop()
            return items.first?.deadline
        }
    }

    mutating func push(deadline: Double, id: UInt64, work: @escaping () -> Void) {
        items.append((deadline, id, work))
        live.insert(id)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].deadline < items[parent].deadline else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func cancel(_ id: UInt64) {
        if live.remove(id) != nil { cancelled.insert(id) }
    }

    mutating func popDue(now: Double) -> (() -> Void)? {
        dropCancelledTop()
        guard let top = items.first, top.deadline <= now else { return nil }
        removeTop()
        live.remove(top.id)
        return top.work
    }

    private mutating func dropCancelledTop() {
        while let top = items.first, cancelled.contains(top.id) {
            cancelled.remove(top.id)
            removeTop()
        }
    }

    private mutating func removeTop() {
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count, items[l].deadline < items[m].deadline { m = l }
            if r < items.count, items[r].deadline < items[m].deadline { m = r }
            if m == i { break }
            items.swapAt(i, m)
            i = m
        }
    }
}
