// The async forms: callable from any task, they hop onto the loop and suspend until the
// reply (or its failure; every command has a deadline, so they always return while the
// loop runs).
extension RedisClient {
    /// Sends `command` and returns its reply; a Redis error reply throws `.server`.
    /// `timeout`: a blocking command's server-side block time in seconds (see `send`).
    public func command(_ command: [RedisArgument], timeout: Double? = nil) async throws(RedisError) -> RedisValue {
        try await awaitResult { [self] done in send(command, timeout: timeout, then: done) }
    }

    /// Runs `script` (EVALSHA, falling back to EVAL once on NOSCRIPT) and returns its result.
    public func eval(
        _ script: RedisScript, keys: [RedisArgument] = [], args: [RedisArgument] = [], timeout: Double? = nil
    ) async throws(RedisError) -> RedisValue {
        try await awaitResult { [self] done in eval(script, keys: keys, args: args, timeout: timeout, then: done) }
    }

    private func awaitResult(
        _ start: @escaping @Sendable (@escaping Completion) -> Void
    ) async throws(RedisError) -> RedisValue {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<RedisValue, RedisError>, Never>) in
            onLoop { start { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }
}
