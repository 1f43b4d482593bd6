import IOCore

// The connection's life: open, log in, match replies to commands, drop, back off, reopen.
extension RedisClient {
    /// Opens a connection and pipelines the login (AUTH, SELECT; a PING when there is
    /// neither, so "connected" always means the server answered).
    func connect() {
        let generation = { (s: inout RedisClientState) in
            s.generation += 1
            s.phase = .connecting
            s.reconnectTimer = nil
            return s.generation
        }(&state.value)
        let connection: StreamConnection<RedisFramer>
        do {
            connection = try StreamConnection.connect(
                to: endpoint.address, loop: loop, framer: RedisFramer(),
                settings: StreamConnectionSettings(maxQueuedBytes: settings.maxQueuedBytes))
        } catch {
            return lost(generation, why: .unavailable)
        }
        connection.onFrames = { [weak self] _, replies in self?.received(replies, generation: generation) }
        connection.onClose = { [weak self] _, failure in
            let why: RedisError = if case .framing(let error as RedisError) = failure { error } else { .connectionLost }
            self?.lost(generation, why: why)
        }
        let login = loginCommands
        state.value.connection = connection
        state.value.handshakeLeft = login.count
        connection.start()
        for command in login {
            write(command, deadline: settings.commandTimeout, counted: false) { [weak self] result in
                self?.loggedIn(result, generation: generation)
            }
        }
    }

    private var loginCommands: [[RedisArgument]] {
        var commands: [[RedisArgument]] = []
        if let password = endpoint.password {
            commands.append(
                ["AUTH"] + (endpoint.username.map { [RedisArgument($0)] } ?? []) + [RedisArgument(password)])
        }
        if endpoint.database != 0 { commands.append(["SELECT", RedisArgument(endpoint.database)]) }
        return commands.isEmpty ? [["PING"]] : commands
    }

    private func loggedIn(_ result: Result<RedisValue, RedisError>, generation: UInt64) {
        guard generation == state.value.generation else { return }
        if case .failure(let error) = result { return lost(generation, why: error) }
        let becameReady = { (s: inout RedisClientState) -> Bool in
            s.handshakeLeft -= 1
            guard s.handshakeLeft == 0 else { return false }
            s.phase = .ready
            s.queueWhileConnecting = false
            s.reconnectDelay = settings.reconnectInitialDelay
            if s.everConnected { s.statistics.reconnects += 1 }
            s.everConnected = true
            return true
        }(&state.value)
        if becameReady { state.value.onStateChange?(.connected) }
    }

    private func received(_ replies: [RedisValue], generation: UInt64) {
        for reply in replies {
            guard generation == state.value.generation else { return }
            guard let pending = state.value.inFlight.popFirst() else {
                return lost(generation, why: .protocolError("a reply with no command waiting for it"))
            }
            if case .error(let message) = reply {
                finish(pending, .failure(.server(message)))
            } else {
                finish(pending, .success(reply))
            }
        }
    }

    /// A command's deadline passed: it fails with `.timeout`, and the connection goes (the
    /// reply, if it ever comes, would be taken for the next command's).
    func expired(_ id: UInt64, generation: UInt64) {
        guard generation == state.value.generation,
            let pending = state.value.inFlight.remove(where: { $0.id == id })
        else { return }
        lost(generation, why: .timeout, first: pending)
    }

    /// The connection `generation` ended (or could not open, or we drop it): commands in
    /// flight fail with `.connectionLost` (`first`, the one that timed out, with `why`) after
    /// the owner heard `.disconnected` if it was connected, and a reconnect is scheduled
    /// after the back-off delay, which doubles up to `reconnectMaxDelay`.
    func lost(_ generation: UInt64, why: RedisError, first: RedisClientState.Pending? = nil) {
        guard generation == state.value.generation, state.value.phase != .closed else { return }
        let maxDelay = settings.reconnectMaxDelay
        let (connection, orphans, wasReady, wait) = { (s: inout RedisClientState) in
            defer {
                s.phase = .waiting
                s.generation += 1
                s.connection = nil
                s.queueWhileConnecting = false
                s.lastError = why
                s.reconnectDelay = min(s.reconnectDelay * 2, maxDelay)
            }
            return (s.connection, s.inFlight.removeAll(), s.phase == .ready, min(s.reconnectDelay, maxDelay))
        }(&state.value)
        state.value.reconnectTimer = loop.schedule(after: wait) { [weak self] in self?.reconnect() }
        connection?.close()
        // The owner hears of the drop before the failures it causes.
        if wasReady { state.value.onStateChange?(.disconnected) }
        if let first { finish(first, .failure(why)) }
        for pending in orphans { finish(pending, .failure(.connectionLost)) }
    }

    private func reconnect() {
        guard state.value.phase == .waiting else { return }
        connect()
    }
}
