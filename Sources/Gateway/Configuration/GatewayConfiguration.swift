import Cluster
import Foundation
import IOCore
import Media
import SIP

/// How `irisgw serve` runs. Every field has a documented default.
public struct GatewayConfiguration: Sendable {
    /// SIP sockets (UDP and TCP). Default UDP and TCP on 127.0.0.1:5060.
    public var sipListen: [(transport: SIPTransportProtocol, address: SocketAddress)]
    /// Address RTP binds to and that goes in our SDP unless an advertised address is set.
    /// Default 127.0.0.1.
    public var rtpHost: String
    /// Named in Via sent-by and Contact instead of the listener's address, toward peers of
    /// its address family (a name: toward every peer); a trunk's `sip.advertise` wins for
    /// that trunk. Default nil.
    public var sipAdvertise: SIPAdvertisedAddress?
    /// Numeric address written into the trunk legs' SDP (`c=`, `o=`) instead of `rtpHost`;
    /// a trunk's `media.advertise` wins for that trunk. Default nil.
    public var rtpAdvertise: String?
    /// Numeric address written into the platform legs' SDP instead of `rtpHost` (the
    /// platform is often on another network than the carrier). Default nil.
    public var platformRtpAdvertise: String?
    /// RTP/RTCP port range. Default 20000-29999.
    public var rtpPorts: ClosedRange<UInt16>
    /// Media threads. Default: one per CPU the process may use (`UsableCPUs`: the affinity
    /// mask and the cgroup v2 `cpu.max` quota, the smaller), at least 1.
    public var mediaThreads: Int
    /// SCHED_RR priority (1-99) for the media threads; nil (the default) keeps normal
    /// scheduling (`MediaEngineConfiguration.realtimePriority`).
    public var mediaRealtimePriority: Int?
    /// How the media threads do their socket I/O (`MediaEngineConfiguration.io`): io_uring
    /// when the kernel allows it, else epoll (`automatic`, the default).
    public var mediaIO: MediaIOMode = .automatic
    /// Where `calls.sqlite`, `api-key` and `room-token-secret` live. Default `./.irisgw`.
    public var dataDir: String
    /// Which ended calls' records `calls.sqlite` keeps (`callRecordRetentionDays`,
    /// `maxCallRecords`). Default: 90 days, no count limit, pruned at start and hourly.
    public var callRecordRetention = CallRecordRetention()
    /// Where the call records go (serve key `records`): an SQLite file or a PostgreSQL
    /// database. Default nil: `<dataDir>/calls.sqlite`.
    public var records: CallRecordLocation?
    /// `records`, or its default.
    public var callRecords: CallRecordLocation { records ?? .sqlite(path: dataDir + "/calls.sqlite") }
    /// This gateway's node id in the call records (`node_id`), so nodes sharing a PostgreSQL
    /// table close only their own abandoned calls. Default "" (a single node).
    public var nodeId = ""
    /// The profile `createWithTN` uses when the request names none. Default: the first
    /// profile (by name) with an `outbound` section.
    public var defaultProfile: String?
    /// The API base URL put in notifications' `rtcserver`. Default `http://127.0.0.1:8080`.
    public var publicURL: String
    /// Seconds a room token for an inbound call stays valid. Default: the ring timeout + 15.
    public var roomTokenLifetime: Double?
    /// Seconds a WebRTC platform leg has for its first ICE check and its DTLS handshake
    /// before the session ends with -416. Default 20.
    public var webrtcSetupTimeout: Double = 20
    /// Sessions at once over all trunks; inbound calls over it get 503 with Retry-After.
    /// Default 1000.
    public var maxSessions: Int
    /// Inbound sessions at once over all trunks; more get 503 with Retry-After, so calls in
    /// can never take every slot from the apps' calls out. Default nil: half of `maxSessions`.
    public var maxInboundSessions: Int?
    /// `maxInboundSessions`, or its default.
    public var inboundSessionLimit: Int { maxInboundSessions ?? max(1, maxSessions / 2) }
    /// Opus toward the platform: the defaults under every trunk profile's `media.opus` and
    /// a session's `opus` (`TrunkProfile.MediaSettings.opusSettings(default:session:)`).
    /// Default complexity 5, bitrate automatic, FEC on, 5 % expected loss, DTX off, voip,
    /// bandwidth automatic.
    public var opus: AudioCodec.OpusSettings
    /// The busy fraction of a media thread (0...1) past which a new session is refused with
    /// 503 / -503 and Retry-After before any INVITE or answer (`mediaLoadBudgetPercent`).
    /// Default 0.8.
    public var mediaLoadBudget = 0.8
    /// A HEP v3 collector for copies of every SIP message and the trunk legs' RTCP
    /// (`irisgw serve --hep`, config key `hep`). Default none.
    public var hep: HEPSettings?
    /// Bounds on captured media (config key `capture`); defaults in `CaptureLimits`.
    public var capture = CaptureLimits()
    /// Recordings' directory and retention (config key `recordings`).
    public var recordings = RecordingSettings()
    /// The directory recordings go to.
    public var recordingsDirectory: String { recordings.directory ?? dataDir + "/recordings" }
    /// Voice agents' and forks' WebSockets (config key `mediaStreams`).
    public var mediaStreams = MediaStreamSettings()
    /// The platform leg takes, from what the app offers, the codec the trunk will most
    /// likely use (the profile's first codec outbound, the one the trunk chose inbound): PCMU,
    /// PCMA, G.722 or Opus, so both legs speak it and the call passes packets through with no
    /// decode or encode. false: Opus whenever offered, else PCMU. Default true.
    public var preferPassthrough: Bool
    /// The older name of `preferPassthrough` (it once covered PCMU only).
    public var preferPCMUPassthrough: Bool {
        get { preferPassthrough }
        set { preferPassthrough = newValue }
    }
    /// Seconds an ended session's events stay for replay (`since=`). Default 300.
    public var eventRetention: Double
    /// SIP user agent settings (User-Agent, PRACK, session timers, T1).
    public var sip: SIPUserAgentConfiguration
    /// Environment for `passwordEnv` lookups. Default: the process environment.
    public var environment: [String: String]
    /// The realm of the digest challenges to trunks with `inbound.auth`. Default "irisgw".
    public var inboundAuthRealm = "irisgw"
    /// Cluster mode (`--cluster`, `--node-id`, the serve key `cluster`); nil: one process
    /// with nothing shared.
    public var cluster: ClusterSettings?
    /// Edge proxies whose `X-Irisgw-Source` header names the real source of a request (config
    /// key `sip.trustedProxies`); `sip.edgeProxy`'s address is trusted besides. Default none.
    public var trustedProxies: [CIDR] = []

    public init(
        sipListen: [(transport: SIPTransportProtocol, address: SocketAddress)] = [
            (.udp, SocketAddress(host: "127.0.0.1", port: 5060)), (.tcp, SocketAddress(host: "127.0.0.1", port: 5060))
        ],
        rtpHost: String = "127.0.0.1", rtpPorts: ClosedRange<UInt16> = 20_000...29_999,
        mediaThreads: Int = UsableCPUs.current().count, dataDir: String = ".irisgw",
        defaultProfile: String? = nil, publicURL: String = "http://127.0.0.1:8080", roomTokenLifetime: Double? = nil,
        maxSessions: Int = 1000, opus: AudioCodec.OpusSettings = .init(complexity: 5),
        preferPassthrough: Bool = true,
        eventRetention: Double = 300, sip: SIPUserAgentConfiguration = SIPUserAgentConfiguration(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.sipListen = sipListen
        self.rtpHost = rtpHost
        self.rtpPorts = rtpPorts
        self.mediaThreads = mediaThreads
        self.dataDir = dataDir
        self.defaultProfile = defaultProfile
        self.publicURL = publicURL
        self.roomTokenLifetime = roomTokenLifetime
        self.maxSessions = maxSessions
        self.opus = opus
        self.preferPassthrough = preferPassthrough
        self.eventRetention = eventRetention
        self.sip = sip
        self.environment = environment
    }
}
