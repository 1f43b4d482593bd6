import IOCore

/// Where the resolver asks and how long it waits. Every field has a documented default.
public struct DNSResolverConfiguration: Sendable, Equatable {
    /// DNS servers (numeric host and port). Empty (the default): the system's, from
    /// /etc/resolv.conf.
    public var servers: [SocketAddress]
    /// How long one try waits for an answer, in milliseconds. c-ares doubles it after each
    /// round through the servers. Default 1500.
    public var timeoutMs: Int
    /// Tries per server (each query goes to at most `tries` × servers). Default 2: one
    /// server that never answers costs a query 1.5 s + 3 s.
    public var tries: Int
    /// Seconds a failure is cached (NXDOMAIN, no data, SERVFAIL, timeout). Default 30.
    public var negativeTTL: Double
    /// Names and types cached at most. Default 10,000.
    public var cacheCapacity: Int
    /// Seconds an address from /etc/hosts is kept (the file has no TTL). Default 60.
    public var hostsFileTTL: Double

    public init(
        servers: [SocketAddress] = [], timeoutMs: Int = 1500, tries: Int = 2, negativeTTL: Double = 30,
        cacheCapacity: Int = 10_000, hostsFileTTL: Double = 60
    ) {
        self.servers = servers
        self.timeoutMs = timeoutMs
        self.tries = tries
        self.negativeTTL = negativeTTL
        self.cacheCapacity = cacheCapacity
        self.hostsFileTTL = hostsFileTTL
    }
}
