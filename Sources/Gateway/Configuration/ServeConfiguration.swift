import Cluster
import Formats
import Foundation
import Logging
import Media
import SIP

/// The file `irisgw serve --config FILE` reads (JSON5, like the profiles; every key
/// optional, command-line flags win over it). An unknown key, a wrong type or a bad value is
/// an error naming the file and the key path.
///
/// ```json5
/// {
///   profiles: "sip-profiles",          // trunk profiles directory
///   sipListen: ["10.0.0.5:5060", "[2001:db8::5]:5060"],  // SIP over UDP and TCP (one or several)
///   sipAdvertise: "203.0.113.7",       // named in Via/Contact instead of the listener (a 1:1 NAT)
///   apiListen: "127.0.0.1:8080",       // control API
///   rtpHost: "10.0.0.5",               // RTP bind address, written into SDP unless advertised
///   rtpAdvertise: "203.0.113.7",       // written into the trunk legs' SDP instead
///   platformRtpAdvertise: "10.0.0.5",  // written into the platform legs' SDP instead
///   rtpPorts: "20000-29999",
///   dataDir: "/var/lib/irisgw",
///   records: "postgres://irisgw:secret@db.example.net:5432/irisgw",  // default: "<dataDir>/calls.sqlite"
///   callRecordRetentionDays: 90,       // ended calls' records older than this are deleted; 0 keeps them
///   maxCallRecords: 1000000,           // and beyond this many, the oldest; default no count limit
///   webDir: "/usr/local/share/irisgw/app",  // the dialer page at /app (default: found beside the binary)
///   publicURL: "https://gw1.example.net",  // `rtcserver` in inbound notifications
///   drainTimeoutSec: 30,               // SIGTERM: how long calls may go on
///   maxSessions: 1000,
///   roomTokenLifetimeSec: 60,          // default: the inbound ring timeout + 15 s
///   webrtcSetupTimeoutSec: 20,         // a WebRTC app's ICE and DTLS must finish within it
///   webhook: { url: "https://hooks.example.net/irisgw", timeoutSec: 5, retries: 2, caFile: "hooks-ca.pem" },
///   maxInboundSessions: 500,           // default: half of maxSessions
///   mediaRealtimePriority: 10,         // SCHED_RR for the media threads; default: normal scheduling
///   mediaThreads: 2,                   // default: the CPUs the process may use (affinity, cgroup quota)
///   mediaIO: "automatic",              // "uring" | "epoll": how media threads do socket I/O; default automatic
///   mediaLoadBudgetPercent: 80,        // new sessions past it get 503 + Retry-After; default 80
///   hep: "10.0.0.9:9060",              // HEP v3 collector (or { address, captureId, authKey }); default none
///   capture: { maxSessionMiB: 32, maxLiveMiB: 256, maxEndedMiB: 256 },  // captured media's memory (CaptureLimits)
///   sip: { answerUnknownSources: false, requestsPerSecond: 50 },  // ServeConfiguration+SIP.swift
///   apiLimits: { maxConnectionsPerSource: 256, maxWebSocketsPerClient: 1000 },  // ControlAPI: APILimits.swift
///   pageTokens: { sessionsPerRoutingId: 4, webSocketsPerRoutingId: 4 },  // ServeConfiguration+PageTokens.swift
///   cluster: { redis: "redis://10.0.0.9:6379", nodeId: "gw1" },  // ServeConfiguration+Cluster.swift
///   dnsServers: ["10.0.0.53:53"],      // default: /etc/resolv.conf (ServeConfiguration+DNS.swift)
///   sipTlsListen: "0.0.0.0:5061", tlsCertificate: "gw.pem", tlsKey: "gw.key",  // ServeConfiguration+TLS.swift
///   apiTlsCertificate: "api.pem", apiTlsKey: "api.key",  // HTTPS/WSS API (ControlAPI: APITLSSettings.swift)
///   logFormat: "json", logLevel: "info", logLevels: { sip: "debug" },  // ServeConfiguration+Logging.swift
/// }
/// ```
public struct ServeConfiguration: Sendable, Equatable {
    public var profiles: String?
    /// SIP listeners, each UDP and TCP on the same address.
    public var sipListen: [SocketAddress]?
    /// Named in Via sent-by and Contact instead of the listener's address.
    public var sipAdvertise: SIPAdvertisedAddress?
    public var apiListen: String?
    public var rtpHost: String?
    /// Written into the trunk legs' SDP instead of `rtpHost`.
    public var rtpAdvertise: String?
    /// Written into the platform legs' SDP instead of `rtpHost`.
    public var platformRtpAdvertise: String?
    public var rtpPorts: ClosedRange<UInt16>?
    public var dataDir: String?
    /// Where the call records go: a file path (SQLite) or `postgres://user:pass@host:port/db`
    /// (`postgresql://`, `?host=/socket/dir`). Default: `<dataDir>/calls.sqlite`.
    public var records: CallRecordLocation?
    /// Days an ended call's record is kept in `calls.sqlite`, 0-36500; 0 keeps it forever.
    /// Default 90.
    public var callRecordRetentionDays: Int?
    /// Ended calls' records kept at most, 1000-1000000000 (the oldest go first). Default: no
    /// count limit.
    public var maxCallRecords: Int?
    /// The dialer page's files, served at `/app` (default: found beside the executable;
    /// `StaticFiles.locate` in ControlAPI).
    public var webDir: String?
    public var publicURL: String?
    public var drainTimeoutSec: Int?
    public var maxSessions: Int?
    /// Seconds a room token stays valid; default the inbound ring timeout plus 15.
    public var roomTokenLifetimeSec: Int?
    /// Seconds a WebRTC platform leg has for its first ICE check and its DTLS handshake
    /// before the session ends with -416 (2-300). Default 20.
    public var webrtcSetupTimeoutSec: Int?
    public var webhook: Webhook?
    /// Inbound sessions at once over all trunks, so a flood of incoming calls always leaves
    /// room for the apps' outbound ones. Default: half of `maxSessions`.
    public var maxInboundSessions: Int?
    /// SCHED_RR priority (1-99) of the media threads; default none (normal scheduling).
    public var mediaRealtimePriority: Int?
    /// How the media threads read and write their sockets: io_uring when the kernel allows it
    /// (`automatic`, the default), io_uring or nothing (`uring`), or epoll (`epoll`).
    public var mediaIO: MediaIOMode?
    /// Media threads, 1-256. Default: one per CPU the process may use (affinity mask and
    /// cgroup v2 quota, the smaller; `UsableCPUs`).
    public var mediaThreads: Int?
    /// Per cent of a media thread's CPU past which new sessions are refused (503 with
    /// Retry-After), 0-100; 0 refuses every new session (calls in progress go on). Default 80.
    public var mediaLoadBudgetPercent: Int?
    /// A HEP v3 collector for copies of SIP and RTCP: `"HOST:PORT"` (numeric host) or
    /// `{ address: "HOST:PORT", captureId: 2001, authKey: "..." }`. Default none.
    public var hep: HEPSettings?
    /// Bounds on captured media: `{ maxSessionMiB, maxLiveMiB, maxEndedMiB }` (each 1-65536);
    /// what is not given keeps `CaptureLimits`' default.
    public var capture: CaptureLimits?
    /// Recordings' directory and retention (ServeConfiguration+MediaServices.swift).
    public var recordings: RecordingSettings?
    /// Voice agents' and forks' WebSockets (ServeConfiguration+MediaServices.swift).
    public var mediaStreams: MediaStreamSettings?
    /// SIP exposure and bounds (`ServeConfiguration+SIP.swift`).
    public var sip: SIPSettings?
    /// Per-routing-id quotas of page tokens (ServeConfiguration+PageTokens.swift).
    public var pageTokens: PageTokenLimits?
    /// Cluster mode: the Redis and this node's id (ServeConfiguration+Cluster.swift). Default
    /// none: one process with nothing shared.
    public var cluster: ClusterSettings?
    /// `dnsServers`, `dnsTimeoutMs`, `dnsTries`, `dnsNegativeCacheSec` (ServeConfiguration+DNS.swift).
    public var dns: DNSSettings?
    /// `sipTlsListen`, `tlsCertificate`, `tlsKey`, `tlsClientCA`, `tlsVerifyClient`
    /// (ServeConfiguration+TLS.swift).
    public var tls: TLSSettings?
    /// `text` (the default) or `json` lines on stderr.
    public var logFormat: LogFormat?
    /// Every component's level; default `info`.
    public var logLevel: LogLevel?
    /// Single components' levels, over `logLevel`. Default none.
    public var logLevels: [LogComponent: LogLevel]?
    /// The control API listener's keys (`apiListenerKeys`) as written, with the file's name;
    /// nil when the file has none. ControlAPI reads them (`APIListenerSettings`): Gateway
    /// knows their names, not what they mean.
    package var apiListenerFields: ProfileSection?

    /// Inbound notifications POSTed as JSON (the `onNotification` event) to `url`.
    public struct Webhook: Sendable, Equatable {
        /// `http://host:port/path` or `https://host:port/path`. Required.
        public var url: String
        /// For an https URL: PEM file of the CAs that may issue the receiver's certificate.
        /// Default nil: the system trust store.
        public var caFile: String?
        /// Seconds per attempt, 1-60. Default 5.
        public var timeoutSec: Int
        /// Further attempts after a failure (no answer or a non-2xx), 0-10, with 1 s, 2 s, 4 s... between. Default 2.
        public var retries: Int
        public init(url: String, timeoutSec: Int = 5, retries: Int = 2, caFile: String? = nil) {
            self.url = url
            self.caFile = caFile
            self.timeoutSec = timeoutSec
            self.retries = retries
        }
    }

    public init() {}

    public static let keys =
        [
            "profiles", "sipListen", "sipAdvertise", "apiListen", "rtpHost", "rtpAdvertise", "platformRtpAdvertise",
            "rtpPorts", "dataDir", "records", "callRecordRetentionDays", "maxCallRecords", "publicURL",
            "drainTimeoutSec", "webDir", "maxSessions", "maxInboundSessions", "mediaRealtimePriority", "mediaThreads",
            "mediaIO",
            "mediaLoadBudgetPercent", "hep", "capture", "roomTokenLifetimeSec", "webrtcSetupTimeoutSec", "webhook",
            "sip", "pageTokens", "cluster"
        ] + dnsKeys + tlsKeys + apiListenerKeys + mediaServiceKeys + logKeys

    /// The keys of the control API's listener: its caps and its HTTPS (read by ControlAPI).
    static let apiListenerKeys = [
        "apiLimits", "apiTlsCertificate", "apiTlsKey", "apiTlsClientCA", "apiTlsVerifyClient", "apiListenPlain"
    ]

    public static func load(file: URL) throws(ProfileError) -> ServeConfiguration {
        let display = file.relativePath
        guard let data = try? Data(contentsOf: file), let text = String(data: data, encoding: .utf8) else {
            throw ProfileError(file: display, keyPath: "", message: "cannot read the file as UTF-8 text")
        }
        return try parse(text, file: display)
    }

    public static func parse(_ text: String, file: String) throws(ProfileError) -> ServeConfiguration {
        let tree = try ProfileSchema.tree(text, file: file)
        let schema = ProfileSchema(file: file)
        let o = try schema.object(tree, at: "", keys: keys)
        var c = ServeConfiguration()
        func address(_ v: JSON5Value, _ p: String) throws(ProfileError) -> SocketAddress {
            let s = try schema.string(v, at: p)
            // A numeric host and an explicit port (0: the OS picks); no name lookups here.
            guard let a = SocketAddress.parse(s, defaultPort: -1), a.port >= 0, a.withSockAddr({ _, _ in true }) != nil
            else {
                throw schema.fail(p, "must be HOST:PORT with a numeric host, found \"\(s)\"")
            }
            return a
        }
        c.profiles = try o.optional("profiles") { (v, p) throws(ProfileError) in try schema.string(v, at: p) }
        // One listener as a string, or several as an array of strings.
        c.sipListen = try o.optional("sipListen") { (v, p) throws(ProfileError) -> [SocketAddress] in
            guard case .array(let items) = v else { return [try address(v, p)] }
            guard !items.isEmpty else { throw schema.fail(p, "must name at least one HOST:PORT") }
            var out: [SocketAddress] = []
            for (i, item) in items.enumerated() { out.append(try address(item, "\(p)[\(i)]")) }
            return out
        }
        c.sipAdvertise = try o.optional("sipAdvertise") { (v, p) throws(ProfileError) in
            try schema.advertisedAddress(v, at: p)
        }
        c.apiListen = try o.optional("apiListen") { (v, p) throws(ProfileError) in try address(v, p).description }
        c.rtpHost = try o.optional("rtpHost") { (v, p) throws(ProfileError) in try schema.string(v, at: p) }
        c.rtpAdvertise = try o.optional("rtpAdvertise") { (v, p) throws(ProfileError) in
            try schema.numericHost(v, at: p)
        }
        c.platformRtpAdvertise = try o.optional("platformRtpAdvertise") { (v, p) throws(ProfileError) in
            try schema.numericHost(v, at: p)
        }
        c.rtpPorts = try o.optional("rtpPorts") { (v, p) throws(ProfileError) in
            let s = try schema.string(v, at: p)
            let parts = s.split(separator: "-")
            guard parts.count == 2, let lo = UInt16(parts[0]), let hi = UInt16(parts[1]), lo >= 1024, lo < hi,
                lo % 2 == 0
            else {
                throw schema.fail(p, "must be LO-HI with an even LO from 1024 and LO < HI, found \"\(s)\"")
            }
            return lo...hi
        }
        c.dataDir = try o.optional("dataDir") { (v, p) throws(ProfileError) in try schema.string(v, at: p) }
        c.records = try o.optional("records") { (v, p) throws(ProfileError) in
            let s = try schema.string(v, at: p)
            guard let location = CallRecordLocation(records: s) else {
                throw schema.fail(
                    p, "must be a file path or a postgres:// URL, found \"\(redactedPostgresURL(s))\"")
            }
            return location
        }
        c.callRecordRetentionDays = try o.optional("callRecordRetentionDays") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 0...36_500)
        }
        c.maxCallRecords = try o.optional("maxCallRecords") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1000...1_000_000_000)
        }
        c.webDir = try o.optional("webDir") { (v, p) throws(ProfileError) in try schema.string(v, at: p) }
        c.publicURL = try o.optional("publicURL") { (v, p) throws(ProfileError) in
            let s = try schema.string(v, at: p)
            guard s.hasPrefix("http://") || s.hasPrefix("https://") else {
                throw schema.fail(p, "must start with http:// or https://")
            }
            return s
        }
        c.drainTimeoutSec = try o.optional("drainTimeoutSec") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 0...3600)
        }
        c.maxSessions = try o.optional("maxSessions") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1...1_000_000)
        }
        c.maxInboundSessions = try o.optional("maxInboundSessions") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1...1_000_000)
        }
        c.mediaRealtimePriority = try o.optional("mediaRealtimePriority") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1...99)
        }
        c.mediaIO = try o.optional("mediaIO") { (v, p) throws(ProfileError) in
            try schema.choice(v, at: p, MediaIOMode.self)
        }
        c.dns = try dnsSettings(o, schema: schema)
        try logSettings(o, schema: schema, into: &c)
        c.tls = try tlsSettings(o, schema: schema)
        let apiMembers = o.members.filter { apiListenerKeys.contains($0.key) }
        if !apiMembers.isEmpty { c.apiListenerFields = ProfileSection(file: file, members: apiMembers) }
        c.mediaThreads = try o.optional("mediaThreads") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1...256)
        }
        c.mediaLoadBudgetPercent = try o.optional("mediaLoadBudgetPercent") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 0...100)
        }
        c.hep = try o.optional("hep") { (v, p) throws(ProfileError) in try hepSettings(v, at: p, schema: schema) }
        c.recordings = try o.optional("recordings") { (v, p) throws(ProfileError) in
            try recordings(v, at: p, schema: schema)
        }
        c.mediaStreams = try o.optional("mediaStreams") { (v, p) throws(ProfileError) in
            try mediaStreams(v, at: p, schema: schema)
        }
        c.capture = try o.optional("capture") { (v, p) throws(ProfileError) -> CaptureLimits in
            let l = try schema.object(v, at: p, keys: ["maxSessionMiB", "maxLiveMiB", "maxEndedMiB"])
            func mebibytes(_ key: String, _ fallback: Int) throws(ProfileError) -> Int {
                (try l.optional(key) { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 1...65_536) }).map {
                    $0 << 20
                } ?? fallback
            }
            let d = CaptureLimits()
            return CaptureLimits(
                maxSessionBytes: try mebibytes("maxSessionMiB", d.maxSessionBytes),
                maxLiveBytes: try mebibytes("maxLiveMiB", d.maxLiveBytes),
                maxEndedBytes: try mebibytes("maxEndedMiB", d.maxEndedBytes))
        }
        c.sip = try o.optional("sip") { (v, p) throws(ProfileError) in try sipSettings(v, at: p, schema: schema) }
        c.pageTokens = try o.optional("pageTokens") { (v, p) throws(ProfileError) in
            try pageTokenLimits(v, at: p, schema: schema)
        }
        c.cluster = try o.optional("cluster") { (v, p) throws(ProfileError) in
            try clusterSettings(v, at: p, schema: schema)
        }
        c.roomTokenLifetimeSec = try o.optional("roomTokenLifetimeSec") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 1...86_400)
        }
        c.webrtcSetupTimeoutSec = try o.optional("webrtcSetupTimeoutSec") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 2...300)
        }
        c.webhook = try o.optional("webhook") { (v, p) throws(ProfileError) in
            let w = try schema.object(v, at: p, keys: ["url", "timeoutSec", "retries", "caFile"])
            let url = try w.required("url") { (v, p) throws(ProfileError) in
                let s = try schema.string(v, at: p)
                guard s.hasPrefix("http://") || s.hasPrefix("https://") else {
                    throw schema.fail(p, "must be an http:// or https:// URL, found \"\(s)\"")
                }
                return s
            }
            let caFile = try w.optional("caFile") { (v, p) throws(ProfileError) in
                let s = try schema.string(v, at: p)
                guard !s.isEmpty else { throw schema.fail(p, "must be a file path") }
                return s
            }
            return Webhook(
                url: url,
                timeoutSec: try w.optional("timeoutSec") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 1...60)
                } ?? 5,
                retries: try w.optional("retries") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 0...10)
                } ?? 2,
                caFile: caFile)
        }
        return c
    }
}

extension ServeConfiguration {
    /// `hep`: a string `"HOST:PORT"` or an object with `address`, `captureId` and `authKey`.
    static func hepSettings(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError) -> HEPSettings {
        func address(_ v: JSON5Value, _ p: String) throws(ProfileError) -> SocketAddress {
            let s = try schema.string(v, at: p)
            guard let a = SocketAddress.parse(s, defaultPort: 9060), SocketAddress.isNumericHost(a.host), a.port > 0
            else {
                throw schema.fail(p, "must be HOST:PORT with a numeric host, found \"\(s)\"")
            }
            return a
        }
        if case .string = value { return HEPSettings(collector: try address(value, path)) }
        let o = try schema.object(value, at: path, keys: ["address", "captureId", "authKey"])
        var settings = HEPSettings(
            collector: try o.required("address") { (v, p) throws(ProfileError) in try address(v, p) })
        if let id = try o.optional(
            "captureId", { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 0...Int(UInt32.max)) })
        {
            settings.captureID = UInt32(id)
        }
        settings.authKey = try o.optional("authKey") { (v, p) throws(ProfileError) in try schema.string(v, at: p) }
        return settings
    }
}
