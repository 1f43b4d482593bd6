extension HTTPServerConfiguration {
    /// The control API's listener on `listen` with the serve file's `apiLimits` over the
    /// defaults.
    public init(listen: String, limits: APILimits?) {
        self.init(listen: listen)
        guard let limits else { return }
        if let v = limits.threads { threads = v }
        if let v = limits.maxConnections { maxConnections = v }
        if let v = limits.maxConnectionsPerSource { maxConnectionsPerSource = v }
        if let v = limits.maxWebSockets { maxWebSockets = v }
        if let v = limits.maxWebSocketsPerClient { maxWebSocketsPerClient = v }
        if let v = limits.headerTimeoutSec { headerTimeout = Double(v) }
        if let v = limits.bodyTimeoutSec { bodyTimeout = Double(v) }
        if let v = limits.idleTimeoutSec { idleTimeout = Double(v) }
        if let v = limits.maxHeaderBytes { maxHeaderBytes = v }
        if let v = limits.maxBodyBytes { maxBodyBytes = v }
        if let v = limits.requestQueueLimit { requestQueueLimit = v }
        if let v = limits.webSocketQueueLimit { webSocketQueueLimit = v }
    }
}
