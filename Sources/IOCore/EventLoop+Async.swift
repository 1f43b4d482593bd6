extension EventLoop {
    /// Runs `work` on the loop and suspends until its result: the async counterpart of
    /// `sync`, for callers on the cooperative pool, which must not block a thread waiting
    /// for a loop. Runs `work` in place when already on the loop.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        if isInLoop { return work() }
        return await withCheckedContinuation { continuation in
            execute { continuation.resume(returning: work()) }
        }
    }
}
