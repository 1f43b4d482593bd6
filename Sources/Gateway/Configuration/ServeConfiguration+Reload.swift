import Formats
import SIP

/// Which serve keys a reload (SIGHUP, `POST /v1/admin/reload`) puts in force and which take a
/// restart (docs/operations.md, "Reloading"). Limits, budgets and the SIP defence are read
/// for every new call or request, so a new value is safe to take at once; listeners, sockets,
/// threads, files held open, identities and the trunk transport's limits are set up once.
extension ServeConfiguration {
    /// The keys a reload puts in force, as `changedKeys` names them. Every other key's change
    /// is reported as needing a restart and the value in force stays.
    public static let liveKeys: Set<String> = [
        "maxSessions", "maxInboundSessions", "mediaLoadBudgetPercent", "roomTokenLifetimeSec", "drainTimeoutSec",
        "webrtcSetupTimeoutSec",
        "recordings.retentionDays", "mediaStreams", "pageTokens", "logFormat", "logLevel", "logLevels",
        "sip.answerUnknownSources", "sip.requestsPerSecond", "sip.trustedRequestsPerSecond", "sip.banSec",
        "sip.scannerUserAgents", "sip.maxServerTransactions", "sip.maxAuthFailures", "sip.authFailureWindowSec",
        "sip.tapUnfiltered", "sip.trustedProxies", "sip.authRealm"
    ]

    /// The keys whose values differ from `old`'s, sorted: top-level keys by name, `sip` and
    /// `recordings` by their members (`sip.banSec`, `recordings.dir`), `sip.tcp` as one. A
    /// key left out counts as its default.
    public func changedKeys(since old: ServeConfiguration) -> [String] {
        Self.comparisons.filter { _, same in !same(old, self) }.map(\.key).sorted()
    }

    /// The changed keys a reload cannot put in force (`changedKeys` less `liveKeys`): compare
    /// with the file the process started with, so a key stays listed until a restart.
    public func restartRequired(since running: ServeConfiguration) -> [String] {
        changedKeys(since: running).filter { !Self.liveKeys.contains($0) }
    }

    typealias Same = @Sendable (ServeConfiguration, ServeConfiguration) -> Bool

    /// Every key with how to tell whether two files agree on it.
    static let comparisons: [(key: String, same: Same)] = {
        var all: [(key: String, same: Same)] = [
            key("profiles") { $0.profiles == $1.profiles },
            key("sipListen") { $0.sipListen == $1.sipListen },
            key("sipAdvertise") { $0.sipAdvertise == $1.sipAdvertise },
            key("apiListen") { $0.apiListen == $1.apiListen },
            key("rtpHost") { $0.rtpHost == $1.rtpHost },
            key("rtpAdvertise") { $0.rtpAdvertise == $1.rtpAdvertise },
            key("platformRtpAdvertise") { $0.platformRtpAdvertise == $1.platformRtpAdvertise },
            key("rtpPorts") { $0.rtpPorts == $1.rtpPorts },
            key("dataDir") { $0.dataDir == $1.dataDir },
            key("records") { $0.records == $1.records },
            key("callRecordRetentionDays") { $0.callRecordRetentionDays == $1.callRecordRetentionDays },
            key("maxCallRecords") { $0.maxCallRecords == $1.maxCallRecords },
            key("webDir") { $0.webDir == $1.webDir },
            key("publicURL") { $0.publicURL == $1.publicURL },
            key("drainTimeoutSec") { $0.drainTimeoutSec == $1.drainTimeoutSec },
            key("maxSessions") { $0.maxSessions == $1.maxSessions },
            key("roomTokenLifetimeSec") { $0.roomTokenLifetimeSec == $1.roomTokenLifetimeSec },
            key("webrtcSetupTimeoutSec") { $0.webrtcSetupTimeoutSec == $1.webrtcSetupTimeoutSec },
            key("webhook") { $0.webhook == $1.webhook },
            key("maxInboundSessions") { $0.maxInboundSessions == $1.maxInboundSessions },
            key("mediaRealtimePriority") { $0.mediaRealtimePriority == $1.mediaRealtimePriority },
            key("mediaIO") { $0.mediaIO == $1.mediaIO },
            key("mediaThreads") { $0.mediaThreads == $1.mediaThreads },
            key("mediaLoadBudgetPercent") { $0.mediaLoadBudgetPercent == $1.mediaLoadBudgetPercent },
            key("hep") { $0.hep == $1.hep },
            key("capture") { $0.capture == $1.capture },
            key("recordings.dir") { $0.recordings?.directory == $1.recordings?.directory },
            key("recordings.retentionDays") { $0.recordings?.retentionDays == $1.recordings?.retentionDays },
            key("mediaStreams") { $0.mediaStreams == $1.mediaStreams },
            key("pageTokens") { $0.pageTokens == $1.pageTokens },
            key("cluster") { $0.cluster == $1.cluster },
            key("dnsServers") { $0.dns?.servers == $1.dns?.servers },
            key("dnsTimeoutMs") { $0.dns?.timeoutMs == $1.dns?.timeoutMs },
            key("dnsTries") { $0.dns?.tries == $1.dns?.tries },
            key("dnsNegativeCacheSec") { $0.dns?.negativeCacheSec == $1.dns?.negativeCacheSec },
            key("sipTlsListen") { $0.tls?.listen == $1.tls?.listen },
            key("tlsCertificate") { $0.tls?.certificate == $1.tls?.certificate },
            key("tlsKey") { $0.tls?.key == $1.tls?.key },
            key("tlsClientCA") { $0.tls?.clientCA == $1.tls?.clientCA },
            key("tlsVerifyClient") { $0.tls?.verifyClient == $1.tls?.verifyClient },
            key("logFormat") { $0.logFormat == $1.logFormat },
            key("logLevel") { $0.logLevel == $1.logLevel },
            key("logLevels") { $0.logLevels == $1.logLevels }
        ]
        for name in apiListenerKeys {
            all.append(key(name) { $0.apiListenerValue(name) == $1.apiListenerValue(name) })
        }
        return all + sipComparisons
    }()

    private static func key(_ name: String, _ same: @escaping Same) -> (key: String, same: Same) { (name, same) }

    /// The `sip` section's keys, a section left out being all defaults.
    private static let sipComparisons: [(key: String, same: Same)] = {
        func sip(_ key: String, _ same: @escaping @Sendable (SIPSettings, SIPSettings) -> Bool) -> (String, Same) {
            ("sip." + key, { same($0.sip ?? SIPSettings(), $1.sip ?? SIPSettings()) })
        }
        return [
            sip("userAgent") { $0.userAgent == $1.userAgent },
            sip("authRealm") { $0.authRealm == $1.authRealm },
            sip("answerUnknownSources") { $0.defence.answerUnknownSources == $1.defence.answerUnknownSources },
            sip("requestsPerSecond") { $0.defence.requestsPerSecond == $1.defence.requestsPerSecond },
            sip("trustedRequestsPerSecond") {
                $0.defence.trustedRequestsPerSecond == $1.defence.trustedRequestsPerSecond
            },
            sip("banSec") { $0.defence.banSeconds == $1.defence.banSeconds },
            sip("scannerUserAgents") { $0.defence.scannerUserAgents == $1.defence.scannerUserAgents },
            sip("maxServerTransactions") { $0.defence.maxServerTransactions == $1.defence.maxServerTransactions },
            sip("maxAuthFailures") { $0.defence.maxAuthFailures == $1.defence.maxAuthFailures },
            sip("authFailureWindowSec") {
                $0.defence.authFailureWindowSeconds == $1.defence.authFailureWindowSeconds
            },
            sip("tapUnfiltered") { $0.defence.tapUnfiltered == $1.defence.tapUnfiltered },
            sip("tcp") { $0.transportLimits == $1.transportLimits },
            sip("trustedProxies") { $0.trustedProxies == $1.trustedProxies },
            sip("edgeProxy") { $0.edgeProxy == $1.edgeProxy },
            sip("t1Ms") { $0.t1Ms == $1.t1Ms }
        ]
    }()

    /// A control API listener key's value as written (ControlAPI reads what it means).
    private func apiListenerValue(_ key: String) -> JSON5Value? {
        apiListenerFields?.members.first { $0.key == key }?.value
    }

    /// Every key `changedKeys` can name (for the tests: each of `keys` is covered).
    static var comparedKeys: [String] { comparisons.map(\.key) }
}
