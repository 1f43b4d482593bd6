import DNS

/// One stream's settings.
public struct MediaStreamConfiguration: Sendable {
    /// The agent: `ws://host:port/path` or `wss://`.
    public var url: String
    /// Extra header fields of the upgrade request (an Authorization, say).
    public var headers: [String: String] = [:]
    /// The CA certificates (PEM) a `wss://` agent's certificate is checked against; nil: the
    /// system's store.
    public var caFile: String?
    /// What the gateway's audio is sent as (default mu-law 8 kHz, as Twilio).
    public var audioFormat: MediaStreamAudioFormat = .mulaw8k
    /// Seconds to connect and upgrade (default 10).
    public var connectTimeout: Double = 10
    /// Audio messages waiting to be sent at most (default 50: one second of one track); past
    /// it the oldest is dropped and counted.
    public var maxQueuedAudioFrames = 50
    /// Bytes the socket may hold unsent before the queue stops feeding it (default 32 KiB).
    public var lowWaterBytes = 32_768
    /// The largest agent message taken, in bytes (default 1 MiB); larger ones are refused
    /// (and over 16 MiB the WebSocket closes with 1009).
    public var maxMessageBytes = MediaStreamJSON.defaultLimit
    /// How the agent's name is resolved.
    public var dns = DNSResolverConfiguration()

    public init(url: String) { self.url = url }
}
