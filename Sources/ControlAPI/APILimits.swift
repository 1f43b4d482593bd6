import Gateway

/// The serve file's `apiLimits`: caps of the control API's HTTP server
/// (`HTTPServerConfiguration`, which documents each; docs/operations.md has the defaults).
/// What is not given keeps the server's default. Each SDK session holds one event WebSocket,
/// so a backend that runs many sessions from one address needs higher
/// `maxConnectionsPerSource` and `maxWebSocketsPerClient` than the defaults.
public struct APILimits: Sendable, Equatable {
    public var threads: Int?
    public var maxConnections: Int?
    public var maxConnectionsPerSource: Int?
    public var maxWebSockets: Int?
    public var maxWebSocketsPerClient: Int?
    public var headerTimeoutSec: Int?
    public var bodyTimeoutSec: Int?
    public var idleTimeoutSec: Int?
    public var maxHeaderBytes: Int?
    /// Also the size limit of JSON bodies (their nesting limit stays 32).
    public var maxBodyBytes: Int?
    public var requestQueueLimit: Int?
    public var webSocketQueueLimit: Int?

    public init(
        threads: Int? = nil, maxConnections: Int? = nil, maxConnectionsPerSource: Int? = nil,
        maxWebSockets: Int? = nil, maxWebSocketsPerClient: Int? = nil
    ) {
        self.threads = threads
        self.maxConnections = maxConnections
        self.maxConnectionsPerSource = maxConnectionsPerSource
        self.maxWebSockets = maxWebSockets
        self.maxWebSocketsPerClient = maxWebSocketsPerClient
    }

    static let keys = [
        "threads", "maxConnections", "maxConnectionsPerSource", "maxWebSockets", "maxWebSocketsPerClient",
        "headerTimeoutSec", "bodyTimeoutSec", "idleTimeoutSec", "maxHeaderBytes", "maxBodyBytes",
        "requestQueueLimit", "webSocketQueueLimit"
    ]

    /// Reads `apiLimits` from the serve file's top-level keys; errors name the file and key.
    static func read(_ o: ProfileSchema.ObjectFields) throws(ProfileError) -> APILimits? {
        let schema = o.schema
        return try o.optional("apiLimits") { (v, p) throws(ProfileError) in
            let l = try schema.object(v, at: p, keys: keys)
            func count(_ key: String, _ range: ClosedRange<Int>) throws(ProfileError) -> Int? {
                try l.optional(key) { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: range) }
            }
            var limits = APILimits(
                threads: try count("threads", 1...256),
                maxConnections: try count("maxConnections", 1...1_000_000),
                maxConnectionsPerSource: try count("maxConnectionsPerSource", 1...1_000_000),
                maxWebSockets: try count("maxWebSockets", 1...1_000_000),
                maxWebSocketsPerClient: try count("maxWebSocketsPerClient", 1...1_000_000))
            limits.headerTimeoutSec = try count("headerTimeoutSec", 1...600)
            limits.bodyTimeoutSec = try count("bodyTimeoutSec", 1...600)
            limits.idleTimeoutSec = try count("idleTimeoutSec", 1...3600)
            limits.maxHeaderBytes = try count("maxHeaderBytes", 1024...1_048_576)
            limits.maxBodyBytes = try count("maxBodyBytes", 1024...16_777_216)
            limits.requestQueueLimit = try count("requestQueueLimit", 1...100_000)
            limits.webSocketQueueLimit = try count("webSocketQueueLimit", 1...1_000_000)
            return limits
        }
    }
}
