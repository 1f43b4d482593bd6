import Formats

/// Where recordings go and how long they stay (serve key `recordings`).
public struct RecordingSettings: Sendable, Equatable {
    /// The directory recordings are written to (0700; files 0600). Default nil:
    /// `<dataDir>/recordings`.
    public var directory: String?
    /// Days a recording file is kept after its call ended; older files are deleted (their
    /// records keep the path, with the file gone). Default nil: kept until removed by hand.
    public var retentionDays: Int?

    public init(directory: String? = nil, retentionDays: Int? = nil) {
        self.directory = directory
        self.retentionDays = retentionDays
    }
}

/// WebSocket media streams (serve key `mediaStreams`): the voice agents' legs and forks.
public struct MediaStreamSettings: Sendable, Equatable {
    /// PEM CA certificates a `wss://` agent's certificate is checked against. Default nil:
    /// the system's CAs.
    public var caFile: String?
    /// Seconds to open an agent's WebSocket. Default 10.
    public var connectTimeoutSec: Int
    /// Audio messages (20 ms each) waiting for a slow agent before the oldest is dropped
    /// (counted); the call never waits. Default 50 (one second).
    public var maxQueuedFrames: Int
    /// Forks one session may hold at once. Default 4.
    public var maxForksPerSession: Int

    public init(
        caFile: String? = nil, connectTimeoutSec: Int = 10, maxQueuedFrames: Int = 50, maxForksPerSession: Int = 4
    ) {
        self.caFile = caFile
        self.connectTimeoutSec = connectTimeoutSec
        self.maxQueuedFrames = maxQueuedFrames
        self.maxForksPerSession = maxForksPerSession
    }
}

extension ServeConfiguration {
    static let mediaServiceKeys = ["recordings", "mediaStreams"]

    static func recordings(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError)
        -> RecordingSettings
    {
        let o = try schema.object(value, at: path, keys: ["dir", "retentionDays"])
        return RecordingSettings(
            directory: try o.optional("dir") { (v, p) throws(ProfileError) in try schema.string(v, at: p) },
            retentionDays: try o.optional("retentionDays") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...36_500)
            })
    }

    static func mediaStreams(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError)
        -> MediaStreamSettings
    {
        let o = try schema.object(
            value, at: path, keys: ["caFile", "connectTimeoutSec", "maxQueuedFrames", "maxForksPerSession"])
        let d = MediaStreamSettings()
        return MediaStreamSettings(
            caFile: try o.optional("caFile") { (v, p) throws(ProfileError) in try schema.string(v, at: p) },
            connectTimeoutSec: try o.optional("connectTimeoutSec") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...120)
            } ?? d.connectTimeoutSec,
            maxQueuedFrames: try o.optional("maxQueuedFrames") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...3_000)
            } ?? d.maxQueuedFrames,
            maxForksPerSession: try o.optional("maxForksPerSession") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 0...16)
            } ?? d.maxForksPerSession)
    }
}
