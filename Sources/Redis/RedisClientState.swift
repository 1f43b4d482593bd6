import IOCore

/// What a `RedisClient` changes as it runs, boxed on its loop (`LoopBoundBox`).
struct RedisClientState {
    enum Phase {
        /// Made; connects at `start()` or the first command.
        case idle
        /// A connection is being opened and its AUTH/SELECT (or PING) answered.
        case connecting
        /// Connected and logged in.
        case ready
        /// The connection was lost; a reconnect is scheduled (commands fail `.unavailable`).
        case waiting
        /// `close()` was called.
        case closed
    }

    /// A command sent and not yet answered.
    struct Pending {
        let id: UInt64
        /// Counted in `statistics` (a caller's, not the connection's own AUTH/SELECT).
        let counted: Bool
        let timer: EventLoop.Timer
        let completion: RedisClient.Completion
    }

    var phase = Phase.idle
    var connection: StreamConnection<RedisFramer>?
    /// Bumped for every connection and every drop: handlers of an old one find it changed.
    var generation: UInt64 = 0
    var inFlight = RedisFIFO<Pending>()
    var nextID: UInt64 = 0
    /// AUTH/SELECT replies still awaited before the connection is ready.
    var handshakeLeft = 0
    /// Commands wait for the first connection; after a drop they fail at once.
    var queueWhileConnecting = true
    var everConnected = false
    var reconnectDelay: Double
    var reconnectTimer: EventLoop.Timer?
    var lastError: RedisError?
    var statistics = RedisStatistics()
    var onStateChange: ((RedisClient.State) -> Void)?

    init(reconnectDelay: Double) { self.reconnectDelay = reconnectDelay }
}
