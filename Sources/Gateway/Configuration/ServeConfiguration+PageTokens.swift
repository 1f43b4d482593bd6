import Formats

/// What one routing id's page tokens may hold at once (docs/api.md "Page tokens",
/// docs/operations.md). Every page token of a routing id counts against the same quota, so
/// minting more tokens for it gains nothing; the API key is not limited by it.
public struct PageTokenLimits: Sendable, Equatable {
    /// Live sessions of the routing id (created by its pages or with the key, inbound calls
    /// routed to it) past which a page's create is refused with 429. Default 4.
    public var sessionsPerRoutingId: Int
    /// Event WebSockets opened with the routing id's page tokens, per API listener, past
    /// which another is refused with 429 (none is replaced). Default 4.
    public var webSocketsPerRoutingId: Int

    public init(sessionsPerRoutingId: Int = 4, webSocketsPerRoutingId: Int = 4) {
        self.sessionsPerRoutingId = sessionsPerRoutingId
        self.webSocketsPerRoutingId = webSocketsPerRoutingId
    }

    static let keys = ["sessionsPerRoutingId", "webSocketsPerRoutingId"]
}

extension ServeConfiguration {
    /// The `pageTokens` section: `{ sessionsPerRoutingId: 4, webSocketsPerRoutingId: 4 }`,
    /// each key optional (1-10000).
    static func pageTokenLimits(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError) -> PageTokenLimits {
        let o = try schema.object(value, at: path, keys: PageTokenLimits.keys)
        let d = PageTokenLimits()
        return PageTokenLimits(
            sessionsPerRoutingId: try o.optional("sessionsPerRoutingId") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...10_000)
            }
                ?? d.sessionsPerRoutingId,
            webSocketsPerRoutingId: try o.optional("webSocketsPerRoutingId") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...10_000)
            }
                ?? d.webSocketsPerRoutingId)
    }
}
