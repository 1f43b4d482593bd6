import CarrierSim
import Cluster
import ControlAPI
import Foundation
import Gateway
import Logging
import SIP

/// What `irisgw serve` was asked for: the settings file (`--config`) first, then the flags,
/// which override it. Parsing starts nothing and opens nothing but the files it names.
struct ServeOptions {
    /// The file's settings as read (nil keys: defaults).
    var file = ServeConfiguration()
    var profilesDirectory = "sip-profiles"
    var sipListen: [SocketAddress] = [SocketAddress(host: "127.0.0.1", port: 5060)]
    var apiListen = "127.0.0.1:8080"
    var gateway = GatewayConfiguration()
    var tls = ServeConfiguration.TLSSettings()
    var apiTLS = APITLSSettings()
    /// The file's keys of the control API listener (`apiLimits`, the HTTPS keys).
    var apiListener = APIListenerSettings()
    var publicURL: String?
    var webDirectory: String?
    var drainTimeout = 30.0
    /// Where the built-in carrier simulator listens (`--carrier-sim`); nil: none.
    var simulatorListen: SocketAddress?
    /// The log's format and levels: the file's `logFormat`, `logLevel`, `logLevels`, then
    /// `--log-format` and `--log-level`.
    var log = LogConfiguration()
    /// `--help` was asked for.
    var wantsHelp = false
    let cpus = UsableCPUs.current()

    // Flags that replace the file's lists as a whole rather than add to them.
    private var sipListenFlags: [SocketAddress] = []
    private var tlsListenFlags: [SocketAddress] = []
    private var dnsServerFlags: [SocketAddress] = []
    private var clusterFlag: String?
    private var nodeIdFlag: String?

    /// A refused command line or settings file: the message, and whether the usage text
    /// belongs after it (a flag's mistake) or not (a file's, which names file and key).
    struct Refusal: Error {
        var message: String
        var showsUsage = true
        /// The settings file's error with its file and key, when that is what was refused.
        var problem: ProfileError?
    }

    /// Reads `--config` if given, then every flag; then checks the flags that go together
    /// and settles the listeners.
    static func parse(_ args: [String]) throws(Refusal) -> ServeOptions {
        var options = ServeOptions()
        if let at = args.firstIndex(of: "--config") {
            guard at + 1 < args.count else { throw Refusal(message: "--config needs a file") }
            do {
                let file = try ServeConfiguration.load(file: URL(fileURLWithPath: args[at + 1]))
                options.adopt(file, apiListener: try APIListenerSettings(serve: file))
            } catch {
                throw Refusal(message: "\(error)", showsUsage: false, problem: error)
            }
        }
        var i = 0
        while i < args.count {
            let flag = args[i]
            if flag == "-h" || flag == "--help" {
                options.wantsHelp = true
                return options
            }
            guard let apply = Self.flags[flag] else { throw Refusal(message: "unknown option \(flag)") }
            i += 1
            try apply(&options, i < args.count ? args[i] : nil)
            i += 1
        }
        try options.settle()
        return options
    }

    /// The file's settings as the starting point.
    private mutating func adopt(_ file: ServeConfiguration, apiListener: APIListenerSettings) {
        self.file = file
        self.apiListener = apiListener
        profilesDirectory = file.profiles ?? profilesDirectory
        sipListen = file.sipListen ?? sipListen
        apiListen = file.apiListen ?? apiListen
        gateway = GatewayConfiguration(serve: file, cpus: cpus)
        tls = file.tls ?? tls
        apiTLS = apiListener.tls ?? apiTLS
        publicURL = file.publicURL
        webDirectory = file.webDir
        drainTimeout = Double(file.drainTimeoutSec ?? 30)
        log = file.log
    }

    /// After the flags: pairs that go together, and the listeners the gateway opens.
    private mutating func settle() throws(Refusal) {
        if (apiTLS.certificate == nil) != (apiTLS.key == nil) {
            throw Refusal(message: "--api-tls-certificate and --api-tls-key go together")
        }
        if apiTLS.server == nil, apiTLS.listenPlain != nil || apiTLS.clientCA != nil || apiTLS.verifyClient != nil {
            throw Refusal(
                message:
                    "--api-listen-plain, --api-tls-client-ca and --api-tls-verify-client need --api-tls-certificate and --api-tls-key"
            )
        }
        if !sipListenFlags.isEmpty { sipListen = sipListenFlags }
        gateway.sipListen = sipListen.flatMap { [(.udp, $0), (.tcp, $0)] }
        if !tlsListenFlags.isEmpty { tls.listen = tlsListenFlags }
        if let listen = tls.listen {
            guard let server = tls.server else {
                throw Refusal(message: "--sip-tls-listen needs --tls-certificate and --tls-key")
            }
            gateway.sip.tlsServer = server
            gateway.sipListen += listen.map { (.tls, $0) }
        }
        if !dnsServerFlags.isEmpty { gateway.sip.dns.servers = dnsServerFlags }
        if clusterFlag != nil || nodeIdFlag != nil {
            guard let redis = clusterFlag ?? gateway.cluster?.redis, let id = nodeIdFlag ?? gateway.cluster?.nodeId
            else {
                throw Refusal(message: "--cluster and --node-id go together")
            }
            var settings = gateway.cluster ?? ClusterSettings(redis: redis, nodeId: id)
            settings.redis = redis
            settings.nodeId = id
            gateway.cluster = settings
        }
    }

    // MARK: The flags

    private typealias Apply = @Sendable (inout ServeOptions, String?) throws(Refusal) -> Void

    /// Each flag with the one value it takes: what it sets, or why the value is refused.
    private static let flags: [String: Apply] = [
        "--config": { _, _ in },  // read first, above
        "--profiles": { o, v throws(Refusal) in o.profilesDirectory = try required(v, "--profiles needs a directory") },
        "--sip-listen": { o, v throws(Refusal) in
            o.sipListenFlags.append(try numericAddress(v, "--sip-listen needs HOST:PORT with a numeric host"))
        },
        "--sip-advertise": { o, v throws(Refusal) in
            guard let a = v.flatMap(SIPAdvertisedAddress.parse) else {
                throw Refusal(message: "--sip-advertise needs HOST or HOST:PORT")
            }
            o.gateway.sipAdvertise = a
        },
        "--rtp-advertise": { o, v throws(Refusal) in
            guard let v, SocketAddress.isNumericHost(v) else {
                throw Refusal(message: "--rtp-advertise needs a numeric address")
            }
            o.gateway.rtpAdvertise = v
        },
        "--api-listen": { o, v throws(Refusal) in
            guard let v, SocketAddress.parse(v) != nil else { throw Refusal(message: "--api-listen needs HOST:PORT") }
            o.apiListen = v
        },
        "--rtp-ports": { o, v throws(Refusal) in
            guard let r = v.flatMap(ServeOptions.portRange) else {
                throw Refusal(message: "--rtp-ports needs LO-HI (even LO, 1024-65535)")
            }
            o.gateway.rtpPorts = r
        },
        "--rtp-host": { o, v throws(Refusal) in o.gateway.rtpHost = try required(v, "--rtp-host needs an address") },
        "--data-dir": { o, v throws(Refusal) in o.gateway.dataDir = try required(v, "--data-dir needs a directory") },
        "--web-dir": { o, v throws(Refusal) in o.webDirectory = try nonEmpty(v, "--web-dir needs a directory") },
        "--public-url": { o, v throws(Refusal) in o.publicURL = try required(v, "--public-url needs a URL") },
        "--drain-timeout": { o, v throws(Refusal) in
            guard let seconds = v.flatMap(Double.init), seconds >= 0 else {
                throw Refusal(message: "--drain-timeout needs seconds")
            }
            o.drainTimeout = seconds
        },
        "--hep": { o, v throws(Refusal) in
            guard let a = v.flatMap({ SocketAddress.parse($0, defaultPort: 9060) }),
                SocketAddress.isNumericHost(a.host), a.port > 0
            else {
                throw Refusal(message: "--hep needs HOST:PORT with a numeric host")
            }
            o.gateway.hep = HEPSettings(
                collector: a, captureID: o.gateway.hep?.captureID ?? 2001, authKey: o.gateway.hep?.authKey)
        },
        "--carrier-sim": { o, v throws(Refusal) in
            guard let a = v.flatMap({ SocketAddress.parse($0) }) else {
                throw Refusal(message: "--carrier-sim needs HOST:PORT")
            }
            o.simulatorListen = a
        },
        "--dns-server": { o, v throws(Refusal) in
            guard let a = v.flatMap(ServeConfiguration.dnsServer) else {
                throw Refusal(message: "--dns-server needs HOST:PORT with a numeric host ([v6]:port for IPv6)")
            }
            o.dnsServerFlags.append(a)
        },
        "--sip-tls-listen": { o, v throws(Refusal) in
            o.tlsListenFlags.append(try numericAddress(v, "--sip-tls-listen needs HOST:PORT with a numeric host"))
        },
        "--tls-certificate": { o, v throws(Refusal) in
            o.tls.certificate = try nonEmpty(v, "--tls-certificate needs a file")
        },
        "--tls-key": { o, v throws(Refusal) in o.tls.key = try nonEmpty(v, "--tls-key needs a file") },
        "--tls-client-ca": { o, v throws(Refusal) in o.tls.clientCA = try nonEmpty(v, "--tls-client-ca needs a file") },
        "--tls-verify-client": { o, v throws(Refusal) in
            guard let mode = v.flatMap(SIPTLSServerSettings.ClientVerification.init(rawValue:)) else {
                throw Refusal(message: "--tls-verify-client needs none, optional or require")
            }
            o.tls.verifyClient = mode
        },
        "--api-tls-certificate": { o, v throws(Refusal) in
            o.apiTLS.certificate = try nonEmpty(v, "--api-tls-certificate needs a file")
        },
        "--api-tls-key": { o, v throws(Refusal) in o.apiTLS.key = try nonEmpty(v, "--api-tls-key needs a file") },
        "--api-tls-client-ca": { o, v throws(Refusal) in
            o.apiTLS.clientCA = try nonEmpty(v, "--api-tls-client-ca needs a file")
        },
        "--api-tls-verify-client": { o, v throws(Refusal) in
            guard let mode = v.flatMap(TLSServerSettings.ClientVerification.init(rawValue:)) else {
                throw Refusal(message: "--api-tls-verify-client needs none, optional or require")
            }
            o.apiTLS.verifyClient = mode
        },
        "--api-listen-plain": { o, v throws(Refusal) in
            guard let a = v.flatMap({ SocketAddress.parse($0, defaultPort: -1) }), a.port >= 0,
                SocketAddress.isNumericHost(a.host)
            else {
                throw Refusal(message: "--api-listen-plain needs HOST:PORT with a numeric host")
            }
            o.apiTLS.listenPlain = a.description
        },
        "--cluster": { o, v throws(Refusal) in
            guard let v, v.hasPrefix("redis://") else {
                throw Refusal(message: "--cluster needs a redis://HOST:PORT URL")
            }
            o.clusterFlag = v
        },
        "--node-id": { o, v throws(Refusal) in
            guard let v else { throw Refusal(message: "--node-id needs a name") }
            if let problem = ClusterSettings.nodeIdProblem(v) { throw Refusal(message: "--node-id \(problem)") }
            o.nodeIdFlag = v
        },
        "--log-format": { o, v throws(Refusal) in
            guard let format = v.flatMap(LogFormat.init(rawValue:)) else {
                throw Refusal(message: "--log-format needs text or json")
            }
            o.log.format = format
        },
        "--log-level": { o, v throws(Refusal) in
            guard let v else { throw Refusal(message: "--log-level needs LEVEL or COMPONENT=LEVEL,...") }
            do throws(LogSettingError) {
                try o.log.apply(levelSpecification: v)
            } catch {
                throw Refusal(message: "--log-level: \(error)")
            }
        },
        "--max-sessions": { o, v throws(Refusal) in
            guard let n = v.flatMap(Int.init), n > 0 else {
                throw Refusal(message: "--max-sessions needs a positive number")
            }
            o.gateway.maxSessions = n
        }
    ]

    private static func required(_ value: String?, _ message: String) throws(Refusal) -> String {
        guard let value else { throw Refusal(message: message) }
        return value
    }

    private static func nonEmpty(_ value: String?, _ message: String) throws(Refusal) -> String {
        guard let value, !value.isEmpty else { throw Refusal(message: message) }
        return value
    }

    private static func numericAddress(_ value: String?, _ message: String) throws(Refusal) -> SocketAddress {
        guard let a = value.flatMap({ SocketAddress.parse($0) }), SocketAddress.isNumericHost(a.host) else {
            throw Refusal(message: message)
        }
        return a
    }

    /// `LO-HI`: an even first port from 1024, below the last.
    static func portRange(_ text: String) -> ClosedRange<UInt16>? {
        let p = text.split(separator: "-")
        guard p.count == 2, let lo = UInt16(p[0]), let hi = UInt16(p[1]), lo >= 1024, lo < hi, lo % 2 == 0 else {
            return nil
        }
        return lo...hi
    }
}
