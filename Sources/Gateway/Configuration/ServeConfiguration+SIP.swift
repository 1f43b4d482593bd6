import Formats
import SIP

extension ServeConfiguration {
    /// The `sip` section: what the SIP port shows and tolerates. Every key optional; the
    /// defaults are `SIPDefence`'s and `SIPTransportLimits`'s (docs/operations.md).
    ///
    /// ```json5
    /// sip: {
    ///   userAgent: "irisgw",              // Server / User-Agent; no version unless set
    ///   answerUnknownSources: false,      // requests from outside every allowFrom: no answer
    ///   requestsPerSecond: 50,            // per unknown source IP; over it: banned
    ///   trustedRequestsPerSecond: 2000,   // per trunk source IP; over it: the excess dropped
    ///   banSec: 60,
    ///   scannerUserAgents: ["friendly-scanner", "sipvicious"],
    ///   maxServerTransactions: 5000,
    ///   authRealm: "irisgw",              // realm of the challenges to trunks with inbound.auth
    ///   maxAuthFailures: 5,               // wrong credentials per source within authFailureWindowSec; more: banned
    ///   authFailureWindowSec: 60,
    ///   tapUnfiltered: false,             // true: traces and HEP also get what the defence drops (debugging)
    ///   trustedProxies: [],               // CIDRs whose X-Irisgw-Source header names the real source
    ///   edgeProxy: "sip:10.0.0.5:5060",   // requests we originate out of dialog leave through it (default none)
    ///   t1Ms: 500,                        // RFC 3261 T1: retransmissions start here, Timer B/F are 64*T1
    ///   tcp: { maxConnections: 1024, maxConnectionsPerSource: 32, idleTimeoutSec: 120,
    ///          messageTimeoutSec: 10, maxQueuedBytes: 262144,
    ///          keepaliveSec: 0 },          // RFC 5626 CRLF pings on connections we open; 0: off
    /// }
    /// ```
    public struct SIPSettings: Sendable, Equatable {
        public var userAgent: String?
        /// The realm of challenges to trunks with `inbound.auth`; nil: "irisgw".
        public var authRealm: String?
        public var defence = SIPDefence()
        public var transportLimits = SIPTransportLimits()
        /// Edge proxies (Kamailio) whose `X-Irisgw-Source` header is believed; nil: none.
        public var trustedProxies: [CIDR]?
        /// The proxy out-of-dialog requests leave through (`SIPUserAgentConfiguration.edgeProxy`).
        public var edgeProxy: SIPURI?
        /// RFC 3261 T1 in milliseconds; nil: 500. Lower on links known to be fast, so a dead
        /// peer is given up sooner (Timer B and F are 64*T1).
        public var t1Ms: Int?
        public init() {}

        static let keys = [
            "userAgent", "answerUnknownSources", "requestsPerSecond", "trustedRequestsPerSecond", "banSec",
            "scannerUserAgents",
            "maxServerTransactions", "authRealm", "maxAuthFailures", "authFailureWindowSec", "tapUnfiltered", "tcp",
            "trustedProxies", "edgeProxy", "t1Ms"
        ]
        static let tcpKeys = [
            "maxConnections", "maxConnectionsPerSource", "idleTimeoutSec", "messageTimeoutSec", "maxQueuedBytes",
            "keepaliveSec"
        ]

        /// Applies these settings to a user agent's configuration.
        public func apply(to sip: inout SIPUserAgentConfiguration) {
            if let userAgent { sip.userAgent = userAgent }
            sip.defence = defence
            sip.transportLimits = transportLimits
            if let edgeProxy { sip.edgeProxy = edgeProxy }
            if let t1Ms { sip.t1 = Double(t1Ms) / 1000 }
        }
    }

    static func sipSettings(
        _ value: JSON5Value, at path: String, schema: ProfileSchema
    ) throws(ProfileError) -> SIPSettings {
        let o = try schema.object(value, at: path, keys: SIPSettings.keys)
        var s = SIPSettings()
        s.userAgent = try o.optional("userAgent") { (v, p) throws(ProfileError) in
            let text = try schema.string(v, at: p)
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw schema.fail(p, "must be printable ASCII, not empty")
            }
            return text
        }
        s.t1Ms = try o.optional("t1Ms") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 50...5_000) }
        let d = s.defence
        s.defence.answerUnknownSources =
            try o.optional("answerUnknownSources") { (v, p) throws(ProfileError) in try schema.bool(v, at: p) }
            ?? d.answerUnknownSources
        s.defence.requestsPerSecond =
            try o.optional("requestsPerSecond") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...1_000_000)
            } ?? d.requestsPerSecond
        s.defence.trustedRequestsPerSecond =
            try o.optional("trustedRequestsPerSecond") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...1_000_000)
            } ?? d.trustedRequestsPerSecond
        s.defence.banSeconds = Double(
            try o.optional("banSec") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 0...86_400) }
                ?? Int(d.banSeconds))
        s.defence.maxServerTransactions =
            try o.optional("maxServerTransactions") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...1_000_000)
            } ?? d.maxServerTransactions
        s.authRealm = try o.optional("authRealm") { (v, p) throws(ProfileError) in
            let text = try schema.string(v, at: p)
            guard !text.isEmpty, text.utf8.count <= 128,
                text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C })
            else {
                throw schema.fail(p, "must be 1 to 128 printable ASCII characters without quotes or backslashes")
            }
            return text
        }
        s.defence.maxAuthFailures =
            try o.optional("maxAuthFailures") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 1...1000) }
            ?? d.maxAuthFailures
        s.defence.authFailureWindowSeconds = Double(
            try o.optional("authFailureWindowSec") { (v, p) throws(ProfileError) in
                try schema.int(v, at: p, in: 1...86_400)
            } ?? Int(d.authFailureWindowSeconds))
        s.defence.tapUnfiltered =
            try o.optional("tapUnfiltered") { (v, p) throws(ProfileError) in try schema.bool(v, at: p) }
            ?? d.tapUnfiltered
        s.defence.scannerUserAgents =
            try o.optional("scannerUserAgents") { (v, p) throws(ProfileError) -> [String] in
                guard case .array(let items) = v else {
                    throw schema.typeError(p, expected: "an array of strings", found: v)
                }
                var out: [String] = []
                for (i, item) in items.enumerated() {
                    let text = try schema.string(item, at: "\(p)[\(i)]")
                    guard !text.isEmpty else { throw schema.fail("\(p)[\(i)]", "must not be empty") }
                    out.append(text)
                }
                return out
            } ?? d.scannerUserAgents
        s.trustedProxies = try o.optional("trustedProxies") { (v, p) throws(ProfileError) in
            try schema.networks(v, at: p)
        }
        s.edgeProxy = try o.optional("edgeProxy") { (v, p) throws(ProfileError) -> SIPURI in
            let text = try schema.string(v, at: p)
            guard let uri = try? SIPURI.parse(text), uri.scheme == "sip", uri.user == nil,
                SocketAddress.isNumericHost(uri.host), uri.transport.map({ ["udp", "tcp"].contains($0) }) ?? true
            else {
                throw schema.fail(
                    p, "must be a sip: URI with an IP address, e.g. \"sip:10.0.0.5:5060\" (transport udp or tcp)")
            }
            return uri
        }
        if let tcp = try o.optional(
            "tcp", { (v, p) throws(ProfileError) in try schema.object(v, at: p, keys: SIPSettings.tcpKeys) })
        {
            let t = s.transportLimits
            s.transportLimits.maxConnections =
                try tcp.optional("maxConnections") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 1...1_000_000)
                } ?? t.maxConnections
            s.transportLimits.maxConnectionsPerSource =
                try tcp.optional("maxConnectionsPerSource") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 1...1_000_000)
                } ?? t.maxConnectionsPerSource
            s.transportLimits.idleTimeout = Double(
                try tcp.optional("idleTimeoutSec") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 1...86_400)
                } ?? Int(t.idleTimeout))
            s.transportLimits.messageTimeout = Double(
                try tcp.optional("messageTimeoutSec") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 1...3600)
                } ?? Int(t.messageTimeout))
            s.transportLimits.maxQueuedBytes =
                try tcp.optional("maxQueuedBytes") { (v, p) throws(ProfileError) in
                    try schema.int(v, at: p, in: 65_536...(1 << 30))
                } ?? t.maxQueuedBytes
            s.transportLimits.keepaliveInterval = Double(
                try tcp.optional("keepaliveSec") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 0...3600)
                } ?? Int(t.keepaliveInterval))
        }
        return s
    }
}
