import CarrierSim
import ControlAPI
import Foundation
import Gateway
import SIP

/// `irisgw serve`: the gateway with its control API, until SIGINT (end calls now) or
/// SIGTERM (drain: no new calls, existing ones get `--drain-timeout` seconds, then BYE).
enum ServeCommand {
    static let usage = """
    usage: irisgw serve [--config FILE] [--profiles DIR] [--sip-listen HOST:PORT ...] [--sip-advertise HOST[:PORT]]
                        [--api-listen HOST:PORT] [--rtp-ports LO-HI] [--rtp-host HOST] [--rtp-advertise HOST]
                        [--data-dir DIR] [--web-dir DIR] [--public-url URL] [--drain-timeout S] [--max-sessions N]
                        [--carrier-sim HOST:PORT] [--dns-server HOST:PORT]... [--hep HOST:PORT]
                        [--sip-tls-listen HOST:PORT ... --tls-certificate FILE --tls-key FILE
                         [--tls-verify-client none|optional|require] [--tls-client-ca FILE]]
                        [--api-tls-certificate FILE --api-tls-key FILE [--api-tls-verify-client MODE]
                         [--api-tls-client-ca FILE] [--api-listen-plain HOST:PORT]]

      --config FILE        settings file (JSON5; docs/operations.md); the flags below win over it
      --profiles DIR       trunk profiles, *.json5 (default sip-profiles)
      --sip-listen H:P     SIP over UDP and TCP on one port (default 127.0.0.1:5060; port 0 picks
                           one); repeat it for several interfaces or IPv4 and IPv6
      --sip-advertise H[:P]  the address (and port) named in Via and Contact instead of the
                           listener's: the public side of a NAT (default: the listener's)
      --api-listen H:P     control API (default 127.0.0.1:8080; port 0 picks one): HTTPS and WSS
                           only when --api-tls-certificate is given, else plain HTTP
      --rtp-ports LO-HI    RTP/RTCP ports (default 20000-29999)
      --rtp-host HOST      address RTP binds to and puts in SDP (default 127.0.0.1)
      --rtp-advertise HOST numeric address put in the trunk legs' SDP instead of --rtp-host
      --data-dir DIR       calls.sqlite, api-key, room-token-secret (default ./.irisgw)
      --web-dir DIR        the dialer page's files, served at /app (default: ../share/irisgw/app
                           beside the binary, else web/app in a folder above it, as in a checkout)
      --public-url URL     API URL put in inbound notifications (default http(s)://<api-listen>)
      --drain-timeout S    SIGTERM: seconds calls may go on before BYE (default 30)
      --max-sessions N     sessions at once over all trunks; more inbound get 503 (default 1000)
      --carrier-sim H:P    also run the built-in carrier simulator there, in this process
                           (what `make run` does: the carrier-sim profile's proxy is 127.0.0.1:5090)
      --hep H:P            send copies of every SIP message and the trunk legs' RTCP to a HEP v3
                           collector (HOMER, sngrep -L) over UDP (numeric host; config key hep)
      --dns-server H:P     a DNS server for proxies named by host name (numeric host; repeat for
                           more; default: /etc/resolv.conf)
      --sip-tls-listen H:P SIP over TLS (port 0 picks one); repeat for more; needs the two below
      --tls-certificate F  the TLS listener's certificate (PEM, chain after it); reread on SIGHUP
      --tls-key F          its private key (PEM); reread on SIGHUP
      --tls-verify-client M  none (default), optional or require: ask peers for a certificate
      --tls-client-ca F    CAs that issue the peers' certificates (default: the system store)
      --api-tls-certificate F  the control API's certificate (PEM, chain after it): the API
                           speaks HTTPS and WSS only; reread on SIGHUP (default: none, plain HTTP)
      --api-tls-key F      its private key (PEM); reread on SIGHUP
      --api-tls-verify-client M  none (default), optional or require: ask API clients for a certificate
      --api-tls-client-ca F  CAs that issue the API clients' certificates (default: the system store)
      --api-listen-plain H:P  also plain HTTP there, next to HTTPS (default: none); bearer keys
                           cross it in clear, so keep it on loopback

    Prints `listening sip udp|tcp|tls HOST:PORT`, `listening api URL` and `ready`, then serves.
    SIGHUP rereads the TLS certificates and keys, SIP's and the API's (new connections use
    them; calls and open connections go on).

    """

    static func run(_ args: [String]) -> Int32 {
        // A settings file first, so that the flags override it.
        var file = ServeConfiguration()
        if let at = args.firstIndex(of: "--config") {
            guard at + 1 < args.count else { return fail("--config needs a file") }
            do {
                file = try ServeConfiguration.load(file: URL(fileURLWithPath: args[at + 1]))
            } catch {
                writeError("irisgw serve: \(error)\n")
                return 1
            }
        }
        var profilesDir = file.profiles ?? "sip-profiles"
        var sipListen = file.sipListen ?? [SocketAddress(host: "127.0.0.1", port: 5060)]
        var sipListenFlags: [SocketAddress] = []
        var apiListen = file.apiListen ?? "127.0.0.1:8080"
        var configuration = GatewayConfiguration()
        if let v = file.rtpHost { configuration.rtpHost = v }
        configuration.sipAdvertise = file.sipAdvertise
        configuration.rtpAdvertise = file.rtpAdvertise
        configuration.platformRtpAdvertise = file.platformRtpAdvertise
        if let v = file.rtpPorts { configuration.rtpPorts = v }
        if let v = file.dataDir { configuration.dataDir = v }
        if let v = file.callRecordRetentionDays { configuration.callRecordRetention.days = v }
        if let v = file.maxCallRecords { configuration.callRecordRetention.maxRecords = v }
        if let v = file.maxSessions { configuration.maxSessions = v }
        if let v = file.roomTokenLifetimeSec { configuration.roomTokenLifetime = Double(v) }
        if let v = file.maxInboundSessions { configuration.maxInboundSessions = v }
        if let v = file.mediaRealtimePriority { configuration.mediaRealtimePriority = v }
        if let v = file.mediaLoadBudgetPercent { configuration.mediaLoadBudget = Double(v) / 100 }
        configuration.hep = file.hep
        if let v = file.capture { configuration.capture = v }
        // Sized from the CPUs this process may use, not the machine's: `taskset -c 0` or a
        // container's cpu.max quota of one CPU gives one media thread.
        let cpus = UsableCPUs.current()
        configuration.mediaThreads = file.mediaThreads ?? cpus.count
        file.sip?.apply(to: &configuration.sip)
        file.dns?.apply(to: &configuration.sip.dns)
        var dnsServers: [SocketAddress] = []
        var tls = file.tls ?? ServeConfiguration.TLSSettings()
        var tlsListenFlags: [SocketAddress] = []
        var apiTLS = file.apiTLS ?? ServeConfiguration.APITLSSettings()
        if let realm = file.sip?.authRealm { configuration.inboundAuthRealm = realm }
        var publicURL = file.publicURL
        var webDir = file.webDir
        var drainTimeout = Double(file.drainTimeoutSec ?? 30)
        var simulatorListen: SocketAddress?
        var i = 0
        func value() -> String? {
            i += 1
            return i < args.count ? args[i] : nil
        }
        while i < args.count {
            switch args[i] {
            case "--config":
                _ = value()  // read above
            case "--profiles":
                guard let v = value() else { return fail("--profiles needs a directory") }
                profilesDir = v
            case "--sip-listen":
                guard let v = value(), let a = SocketAddress.parse(v), SocketAddress.isNumericHost(a.host) else {
                    return fail("--sip-listen needs HOST:PORT with a numeric host")
                }
                sipListenFlags.append(a)
            case "--sip-advertise":
                guard let v = value(), let a = SIPAdvertisedAddress.parse(v) else { return fail("--sip-advertise needs HOST or HOST:PORT") }
                configuration.sipAdvertise = a
            case "--rtp-advertise":
                guard let v = value(), SocketAddress.isNumericHost(v) else { return fail("--rtp-advertise needs a numeric address") }
                configuration.rtpAdvertise = v
            case "--api-listen":
                guard let v = value(), SocketAddress.parse(v) != nil else { return fail("--api-listen needs HOST:PORT") }
                apiListen = v
            case "--rtp-ports":
                guard let v = value(), let r = parseRange(v) else { return fail("--rtp-ports needs LO-HI (even LO, 1024-65535)") }
                configuration.rtpPorts = r
            case "--rtp-host":
                guard let v = value() else { return fail("--rtp-host needs an address") }
                configuration.rtpHost = v
            case "--data-dir":
                guard let v = value() else { return fail("--data-dir needs a directory") }
                configuration.dataDir = v
            case "--web-dir":
                guard let v = value(), !v.isEmpty else { return fail("--web-dir needs a directory") }
                webDir = v
            case "--public-url":
                guard let v = value() else { return fail("--public-url needs a URL") }
                publicURL = v
            case "--drain-timeout":
                guard let v = value().flatMap(Double.init), v >= 0 else { return fail("--drain-timeout needs seconds") }
                drainTimeout = v
            case "--hep":
                guard let v = value(), let a = SocketAddress.parse(v, defaultPort: 9060), SocketAddress.isNumericHost(a.host), a.port > 0 else {
                    return fail("--hep needs HOST:PORT with a numeric host")
                }
                configuration.hep = HEPSettings(collector: a, captureID: configuration.hep?.captureID ?? 2001,
                                                authKey: configuration.hep?.authKey)
            case "--carrier-sim":
                guard let v = value(), let a = SocketAddress.parse(v) else { return fail("--carrier-sim needs HOST:PORT") }
                simulatorListen = a
            case "--dns-server":
                guard let v = value(), let a = ServeConfiguration.dnsServer(v) else {
                    return fail("--dns-server needs HOST:PORT with a numeric host ([v6]:port for IPv6)")
                }
                dnsServers.append(a)
            case "--sip-tls-listen":
                guard let v = value(), let a = SocketAddress.parse(v), SocketAddress.isNumericHost(a.host) else {
                    return fail("--sip-tls-listen needs HOST:PORT with a numeric host")
                }
                tlsListenFlags.append(a)
            case "--tls-certificate":
                guard let v = value(), !v.isEmpty else { return fail("--tls-certificate needs a file") }
                tls.certificate = v
            case "--tls-key":
                guard let v = value(), !v.isEmpty else { return fail("--tls-key needs a file") }
                tls.key = v
            case "--tls-client-ca":
                guard let v = value(), !v.isEmpty else { return fail("--tls-client-ca needs a file") }
                tls.clientCA = v
            case "--tls-verify-client":
                guard let v = value(), let mode = SIPTLSServerSettings.ClientVerification(rawValue: v) else {
                    return fail("--tls-verify-client needs none, optional or require")
                }
                tls.verifyClient = mode
            case "--api-tls-certificate":
                guard let v = value(), !v.isEmpty else { return fail("--api-tls-certificate needs a file") }
                apiTLS.certificate = v
            case "--api-tls-key":
                guard let v = value(), !v.isEmpty else { return fail("--api-tls-key needs a file") }
                apiTLS.key = v
            case "--api-tls-client-ca":
                guard let v = value(), !v.isEmpty else { return fail("--api-tls-client-ca needs a file") }
                apiTLS.clientCA = v
            case "--api-tls-verify-client":
                guard let v = value(), let mode = TLSServerSettings.ClientVerification(rawValue: v) else {
                    return fail("--api-tls-verify-client needs none, optional or require")
                }
                apiTLS.verifyClient = mode
            case "--api-listen-plain":
                guard let v = value(), let a = SocketAddress.parse(v, defaultPort: -1), a.port >= 0, SocketAddress.isNumericHost(a.host) else {
                    return fail("--api-listen-plain needs HOST:PORT with a numeric host")
                }
                apiTLS.listenPlain = a.description
            case "--max-sessions":
                guard let v = value().flatMap(Int.init), v > 0 else { return fail("--max-sessions needs a positive number") }
                configuration.maxSessions = v
            case "-h", "--help":
                print(usage, terminator: "")
                return 0
            default:
                return fail("unknown option \(args[i])")
            }
            i += 1
        }
        if (apiTLS.certificate == nil) != (apiTLS.key == nil) {
            return fail("--api-tls-certificate and --api-tls-key go together")
        }
        if apiTLS.server == nil, apiTLS.listenPlain != nil || apiTLS.clientCA != nil || apiTLS.verifyClient != nil {
            return fail("--api-listen-plain, --api-tls-client-ca and --api-tls-verify-client need --api-tls-certificate and --api-tls-key")
        }
        let profiles: [TrunkProfile]
        do {
            profiles = try ProfileLoader.loadDirectory(URL(fileURLWithPath: profilesDir))
        } catch {
            writeError("irisgw serve: \(error)\n")
            return 1
        }
        // Flags replace the file's listeners rather than add to them.
        if !sipListenFlags.isEmpty { sipListen = sipListenFlags }
        configuration.sipListen = sipListen.flatMap { [(.udp, $0), (.tcp, $0)] }
        if !tlsListenFlags.isEmpty { tls.listen = tlsListenFlags }
        if let listen = tls.listen {
            guard let server = tls.server else { return fail("--sip-tls-listen needs --tls-certificate and --tls-key") }
            configuration.sip.tlsServer = server
            configuration.sipListen += listen.map { (.tls, $0) }
        }
        // Flags replace the file's DNS servers as a whole.
        if !dnsServers.isEmpty { configuration.sip.dns.servers = dnsServers }
        // The simulator first, so the gateway's first OPTIONS ping finds it up.
        var simulator: CarrierSimulator?
        if let simulatorListen {
            do {
                var c = CarrierSimulator.Configuration()
                c.listen = simulatorListen
                if let pw = ProcessInfo.processInfo.environment["CARRIER_SIM_PASSWORD"], !pw.isEmpty { c.authPassword = pw }
                let sim = try CarrierSimulator(configuration: c)
                sim.onReport = { writeOut("carrier-sim: \($0)\n") }
                for p in try sim.start() { writeOut("listening carrier-sim \(p.transport.rawValue.lowercased()) \(p.address)\n") }
                simulator = sim
            } catch {
                writeError("irisgw serve: cannot start the carrier simulator: \(error)\n")
                return 1
            }
        }
        defer { simulator?.shutdown() }
        let gateway: Gateway
        let api: ControlAPIServer
        var plainAPI: ControlAPIServer?
        do {
            let key = try APIKey.loadOrCreate(dataDir: configuration.dataDir)
            let webFiles = StaticFiles.locate(configured: webDir)
            // The API port must be known before the gateway names itself in notifications.
            var http = HTTPServerConfiguration(listen: apiListen)
            if let limits = file.apiLimits {
                if let v = limits.threads { http.threads = v }
                if let v = limits.maxConnections { http.maxConnections = v }
                if let v = limits.maxConnectionsPerSource { http.maxConnectionsPerSource = v }
                if let v = limits.maxWebSockets { http.maxWebSockets = v }
                if let v = limits.maxWebSocketsPerClient { http.maxWebSocketsPerClient = v }
                if let v = limits.headerTimeoutSec { http.headerTimeout = Double(v) }
                if let v = limits.bodyTimeoutSec { http.bodyTimeout = Double(v) }
                if let v = limits.idleTimeoutSec { http.idleTimeout = Double(v) }
                if let v = limits.maxHeaderBytes { http.maxHeaderBytes = v }
                if let v = limits.maxBodyBytes { http.maxBodyBytes = v }
                if let v = limits.requestQueueLimit { http.requestQueueLimit = v }
                if let v = limits.webSocketQueueLimit { http.webSocketQueueLimit = v }
            }
            http.log = { writeError("irisgw: \($0)\n") }
            let pageLimits = file.pageTokens ?? PageTokenLimits()
            var plain = http
            http.tls = apiTLS.server
            api = ControlAPIServer(key: key, configuration: http, webFiles: webFiles, pageLimits: pageLimits)
            let port = try api.start()
            // SocketAddress brackets an IPv6 host ("http://[::1]:8080"); a bare port is every IPv4 interface.
            let host = apiListen.allSatisfy(\.isNumber) ? "0.0.0.0" : SocketAddress.parse(apiListen)?.host ?? "127.0.0.1"
            let scheme = http.tls == nil ? "http" : "https"
            configuration.publicURL = publicURL ?? "\(scheme)://\(SocketAddress(host: host, port: port))"
            if http.tls == nil { warnIfExposed(host) }
            if let listen = apiTLS.listenPlain {
                plain.listen = listen
                let second = ControlAPIServer(key: key, configuration: plain, webFiles: webFiles, pageLimits: pageLimits)
                plainAPI = second
                let plainPort = try second.start()
                let plainHost = SocketAddress.parse(listen)?.host ?? "127.0.0.1"
                warnIfExposed(plainHost)
                writeOut("listening api-plain http://\(SocketAddress(host: plainHost, port: plainPort))\n")
            }
            gateway = try Gateway(configuration: configuration, profiles: profiles)
            if let hook = file.webhook {
                let notifier = try WebhookNotifier(configuration: hook, dns: configuration.sip.dns)
                gateway.notifier = { notifier.post($0) }
                writeOut("webhook \(hook.url)\n")
            }
            api.attach(gateway)
            plainAPI?.attach(gateway)
            for p in try gateway.start() { writeOut("listening sip \(p.transport.rawValue.lowercased()) \(p.address)\n") }
            writeOut("listening api \(configuration.publicURL)\n")
            writeOut(webFiles.map { "dialer page \(configuration.publicURL)/app (files \($0.directory))\n" }
                     ?? "dialer page: not installed (no web/app found; --web-dir)\n")
        } catch {
            writeError("irisgw serve: cannot start: \(error)\n")
            plainAPI?.stop()
            return 1
        }
        writeOut("media threads \(configuration.mediaThreads)" + (file.mediaThreads != nil ? " (mediaThreads setting)\n" : "; usable CPUs \(cpus)\n"))
        writeOut("profiles \(profiles.map(\.name).sorted().joined(separator: ","))\n")
        let reload = reloadOnHangup(gateway, api: api)
        defer { reload.cancel() }
        writeOut("ready\n")
        let signal = waitForTermination()
        if signal == SIGTERM {
            writeOut("draining: no new calls; \(gateway.activeSessionCount) in progress\n")
            gateway.drain()
            _ = gateway.waitUntilNoSessions(timeout: drainTimeout)
        }
        gateway.shutdown()
        api.stop()
        plainAPI?.stop()
        writeOut("stopped\n")
        return 0
    }

    /// SIGHUP rereads the TLS certificates and keys, SIP's and the control API's: new
    /// connections get them, calls go on. A file that cannot be used changes nothing for its
    /// listener and says why on stderr.
    static func reloadOnHangup(_ gateway: Gateway, api: ControlAPIServer) -> DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler {
            do throws(TLSFailure) {
                try gateway.reloadTLSCertificates()
                writeOut("tls certificates reloaded\n")
            } catch {
                writeError("irisgw serve: SIGHUP: the TLS certificates were not reloaded (the old ones stay): \(error)\n")
            }
            guard api.isTLS else { return }
            do throws(TLSFailure) {
                try api.reloadTLS()
                writeOut("api tls certificate reloaded\n")
            } catch {
                writeError("irisgw serve: SIGHUP: the API's TLS certificate was not reloaded (the old one stays): \(error)\n")
            }
        }
        source.resume()
        return source
    }

    /// Plain HTTP on an address other hosts reach carries the API key in clear: said once at
    /// start, on stderr.
    static func warnIfExposed(_ host: String) {
        guard !isLoopback(host) else { return }
        writeError("irisgw serve: warning: the control API listens with plain HTTP on \(host): API keys and calls cross the "
                   + "network in clear; give it a certificate (--api-tls-certificate, --api-tls-key) or listen on loopback\n")
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") || host.lowercased() == "localhost"
    }

    static func parseRange(_ text: String) -> ClosedRange<UInt16>? {
        let p = text.split(separator: "-")
        guard p.count == 2, let lo = UInt16(p[0]), let hi = UInt16(p[1]), lo >= 1024, lo < hi, lo % 2 == 0 else { return nil }
        return lo...hi
    }

    private static func fail(_ message: String) -> Int32 {
        writeError("irisgw serve: \(message)\n\n" + usage)
        return 2
    }
}
