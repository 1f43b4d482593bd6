/// A `RedisClient`'s counters since it was made; read on its loop (`statistics`).
public struct RedisStatistics: Sendable, Hashable {
    /// Commands asked for (`send`, `command`, each EVALSHA/EVAL of `eval`), failed or not.
    public var commands = 0
    /// Commands that ended with a `RedisError` (error replies, `.unavailable`, `.timeout` ...).
    public var failures = 0
    /// Commands that ended with `.timeout`.
    public var timeouts = 0
    /// Connections re-made after one was lost (the first connection is not counted).
    public var reconnects = 0

    public init() {}
}
