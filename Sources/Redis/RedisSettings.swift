/// How a `RedisClient` waits and reconnects. Every field has a documented default.
public struct RedisSettings: Sendable, Hashable {
    /// Seconds for a reply to arrive once the command is sent (the connection's AUTH/SELECT
    /// too): on expiry the command fails with `.timeout` and the connection is re-made, since
    /// the replies behind it would be out of step. A blocking command adds its own block time
    /// (`timeout:`). Default 2.
    public var commandTimeout: Double
    /// Seconds before the first reconnect attempt after a drop. Default 0.1.
    public var reconnectInitialDelay: Double
    /// The delay doubles after each failed attempt up to this many seconds. Default 2.
    public var reconnectMaxDelay: Double
    /// Bytes of commands queued toward a server that does not read before the connection is
    /// dropped. Default 64 MiB (a command with a large value must fit).
    public var maxQueuedBytes: Int

    public init(
        commandTimeout: Double = 2, reconnectInitialDelay: Double = 0.1, reconnectMaxDelay: Double = 2,
        maxQueuedBytes: Int = 64 << 20
    ) {
        self.commandTimeout = commandTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaxDelay = reconnectMaxDelay
        self.maxQueuedBytes = maxQueuedBytes
    }
}
