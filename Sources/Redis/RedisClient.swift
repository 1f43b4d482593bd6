import IOCore

/// A connection to one Redis server on one IOCore `EventLoop`, shared by whoever needs Redis
/// on that loop: commands are pipelined (many in flight, replies matched first in first
/// out) and nothing blocks. Connects at `start()` or the first command, logs in (AUTH,
/// SELECT) from the endpoint, and reconnects with back-off when the connection drops;
/// while it is down commands fail at once with `.unavailable` (nothing is queued for
/// later). Every command has a deadline (`settings.commandTimeout`): a late reply fails
/// the command with `.timeout` and the connection is re-made, since the replies behind it
/// would be out of step.
///
/// Make it on `loop`'s thread or before `loop` runs; the completion forms (`send`, `eval`,
/// `onStateChange`, `statistics`) are on the loop, the async ones (`command`, `eval`) from
/// any task. A blocking read (BLPOP, XREAD BLOCK) holds the pipeline, so it goes on a second
/// client with its block time as `timeout:`. `close()` when done.
public final class RedisClient: Sendable {
    /// Whether the client can carry commands.
    public enum State: Sendable, Hashable {
        /// Connected and logged in (also after a reconnect: owners re-publish their state).
        case connected
        /// The connection was lost; reconnecting.
        case disconnected
    }

    /// A command's outcome, on the loop. A Redis error reply is `.failure(.server(message))`
    /// (an error inside an array stays a `RedisValue.error`).
    public typealias Completion = (Result<RedisValue, RedisError>) -> Void

    public let endpoint: RedisEndpoint
    public let loop: EventLoop
    public let settings: RedisSettings
    let state: LoopBoundBox<RedisClientState>

    public init(endpoint: RedisEndpoint, loop: EventLoop, settings: RedisSettings = RedisSettings()) {
        self.endpoint = endpoint
        self.loop = loop
        self.settings = settings
        state = LoopBoundBox(RedisClientState(reconnectDelay: settings.reconnectInitialDelay), loop: loop)
    }

    /// Called on the loop when the client becomes connected (first time and after every
    /// reconnect) and when a connection it had is lost. Not called by `close()`. On the loop.
    public var onStateChange: ((State) -> Void)? {
        get { state.value.onStateChange }
        set { state.value.onStateChange = newValue }
    }

    /// Connected and logged in. On the loop.
    public var isConnected: Bool { state.value.phase == .ready }

    /// The counters. On the loop.
    public var statistics: RedisStatistics { state.value.statistics }

    /// Why the last connection ended or could not be made (a refused connect, a wrong
    /// password's error reply); nil until one did. On the loop.
    public var lastError: RedisError? { state.value.lastError }

    /// Connects now rather than at the first command. From any thread.
    public func start() {
        onLoop { [self] in
            if state.value.phase == .idle { connect() }
        }
    }

    /// Fails what is in flight with `.closed`, closes the connection and stops reconnecting;
    /// commands after it fail with `.closed`. From any thread.
    public func close() {
        onLoop { [self] in
            guard state.value.phase != .closed else { return }
            let (connection, orphans) = { (s: inout RedisClientState) in
                s.phase = .closed
                s.generation += 1
                loop.cancel(s.reconnectTimer)
                s.reconnectTimer = nil
                defer { s.connection = nil }
                return (s.connection, s.inFlight.removeAll())
            }(&state.value)
            connection?.close()
            for pending in orphans { finish(pending, .failure(.closed)) }
        }
    }

    /// Sends `command` (pipelined behind those in flight); `completion` gets its reply on
    /// the loop, possibly before this returns (`.unavailable` while down). `timeout`: the
    /// server-side block time of a blocking command in seconds (BLPOP's timeout, XREAD's
    /// BLOCK / 1000), added to `settings.commandTimeout` for its deadline. On the loop.
    public func send(_ command: [RedisArgument], timeout: Double? = nil, then completion: @escaping Completion) {
        loop.assertInLoop()
        precondition(!command.isEmpty, "a Redis command needs a name")
        state.value.statistics.commands += 1
        if state.value.phase == .idle { connect() }
        let phase = state.value.phase
        if phase == .ready || (phase == .connecting && state.value.queueWhileConnecting) {
            write(command, deadline: settings.commandTimeout + (timeout ?? 0), counted: true, completion)
        } else {
            fail(phase == .closed ? .closed : .unavailable, completion)
        }
    }

    /// Queues `command` on the connection with its deadline timer.
    func write(_ command: [RedisArgument], deadline: Double, counted: Bool, _ completion: @escaping Completion) {
        let (id, generation, connection) = { (s: inout RedisClientState) in
            s.nextID += 1
            return (s.nextID, s.generation, s.connection)
        }(&state.value)
        let timer = loop.schedule(after: deadline) { [weak self] in self?.expired(id, generation: generation) }
        state.value.inFlight.append(.init(id: id, counted: counted, timer: timer, completion: completion))
        // A write that fails ends the connection here, which fails this command too.
        connection?.send(RedisArgument.encode(command))
    }

    /// Hands a command's outcome over, counting it.
    func finish(_ pending: RedisClientState.Pending, _ result: Result<RedisValue, RedisError>) {
        loop.cancel(pending.timer)
        guard pending.counted else { return pending.completion(result) }
        if case .failure(let error) = result { count(error) }
        pending.completion(result)
    }

    private func fail(_ error: RedisError, _ completion: Completion) {
        count(error)
        completion(.failure(error))
    }

    private func count(_ error: RedisError) {
        state.value.statistics.failures += 1
        if error == .timeout { state.value.statistics.timeouts += 1 }
    }

    /// Runs `work` on the loop: at once when already there.
    func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.isInLoop { work() } else { loop.execute(work) }
    }
}
