import CarrierSim
import ControlAPI
import Foundation
import Gateway
import Logging
import SIP

/// `irisgw serve`: the gateway with its control API, until SIGINT (end calls now) or
/// SIGTERM (drain: no new calls, existing ones get `--drain-timeout` seconds, then BYE).
enum ServeCommand {
    static let usage = """
        usage: irisgw serve [--config FILE] [--profiles DIR] [--sip-listen HOST:PORT ...] [--sip-advertise HOST[:PORT]]
                            [--api-listen HOST:PORT] [--rtp-ports LO-HI] [--rtp-host HOST] [--rtp-advertise HOST]
                            [--data-dir DIR] [--web-dir DIR] [--public-url URL] [--drain-timeout S] [--max-sessions N]
                            [--carrier-sim HOST:PORT] [--dns-server HOST:PORT]... [--hep HOST:PORT]
                            [--cluster redis://HOST:PORT --node-id NAME]
                            [--sip-tls-listen HOST:PORT ... --tls-certificate FILE --tls-key FILE
                             [--tls-verify-client none|optional|require] [--tls-client-ca FILE]]
                            [--api-tls-certificate FILE --api-tls-key FILE [--api-tls-verify-client MODE]
                             [--api-tls-client-ca FILE] [--api-listen-plain HOST:PORT]]
                            [--log-format text|json] [--log-level LEVEL|COMPONENT=LEVEL,...]

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
          --data-dir DIR       calls.sqlite, api-key, room-token-secret (default ./.irisgw); config key
                               records puts the call records elsewhere: a file or postgres://...
          --web-dir DIR        the dialer page's files, served at /app (default: ../share/irisgw/app
                               beside the binary, else web/app in a folder above it, as in a checkout)
          --public-url URL     API URL put in inbound notifications (default http(s)://<api-listen>)
          --drain-timeout S    SIGTERM: seconds calls may go on before BYE (default 30)
          --max-sessions N     sessions at once over all trunks; more inbound get 503 (default 1000)
          --cluster URL        cluster mode: the Redis holding the cluster's shared state
                               (redis://[:PASSWORD@]HOST:PORT[/DB]; docs/operations.md, Running a cluster)
          --node-id NAME       this node's name in the cluster (letters, digits, - _ .), stable
                               across restarts; goes with --cluster
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
          --log-format F       the log on stderr: text (default) or json, one object per line
          --log-level L        debug, info (default), notice, warning or error; COMPONENT=LEVEL for one
                               component (gateway, calls, sip, media, api, cluster, records, tls,
                               webhook); several with commas: info,sip=debug

        Prints `listening sip udp|tcp|tls HOST:PORT`, `listening api URL` and `ready` on stdout, then
        serves; the log (each call's start and end, warnings, errors) goes to stderr.
        SIGHUP rereads the TLS certificates and keys, SIP's and the API's (new connections use
        them; calls and open connections go on), then the trunk profiles and the settings file
        (POST /v1/admin/reload does the same): new calls take what changed, calls in progress
        keep what they began with; keys that need a restart are named (docs/operations.md).

        """

    static func run(_ args: [String]) -> Int32 {
        let options: ServeOptions
        do {
            options = try ServeOptions.parse(args)
        } catch {
            refuse(error, args)
            return error.showsUsage ? 2 : 1
        }
        if options.wantsHelp {
            print(usage, terminator: "")
            return 0
        }
        // From here on every stderr line goes through the log, in the format asked for.
        LogSink.standardError.configuration = options.log
        let profiles: [TrunkProfile]
        do {
            profiles = try ProfileLoader.loadDirectory(URL(fileURLWithPath: options.profilesDirectory))
        } catch {
            log.error("\(error)")
            return 1
        }
        // The simulator first, so the gateway's first OPTIONS ping finds it up.
        var simulator: CarrierSimulator?
        if let listen = options.simulatorListen {
            do {
                simulator = try startSimulator(listen: listen)
            } catch {
                log.error("cannot start the carrier simulator: \(error)")
                return 1
            }
        }
        defer { simulator?.shutdown() }
        let node: Node
        do {
            node = try start(options, profiles: profiles)
        } catch {
            log.error("cannot start: \(error)")
            return 1
        }
        let media = options.file.mediaThreads != nil ? " (mediaThreads setting)" : "; usable CPUs \(options.cpus)"
        writeOut("media threads \(node.gateway.configuration.mediaThreads)\(media)\n")
        let engine = node.gateway.media
        writeOut(
            "media io \(engine.io.rawValue)\(engine.ioFallbackReason.map { " (io_uring unavailable: \($0))" } ?? "")\n")
        writeOut("profiles \(profiles.map(\.name).sorted().joined(separator: ","))\n")
        let reloader = ServeReloader(
            arguments: args, options: options, gateway: node.gateway,
            apis: [node.api] + [node.plainAPI].compactMap { $0 })
        for api in [node.api] + [node.plainAPI].compactMap({ $0 }) {
            api.onReload { () throws(ReloadRefusal) in try reloader.reloadAndLog(by: "api", waiting: false) }
        }
        let reload = reloadOnHangup(node.gateway, api: node.api, reloader: reloader)
        defer { reload.cancel() }
        writeOut("ready\n")
        let signal = waitForTermination()
        if signal == SIGTERM {
            writeOut("draining: no new calls; \(node.gateway.activeSessionCount) in progress\n")
            node.gateway.drain()
            _ = node.gateway.waitUntilNoSessions(timeout: reloader.drainTimeout.withLock { $0 })
        }
        node.gateway.shutdown()
        node.api.stop()
        node.plainAPI?.stop()
        writeOut("stopped\n")
        return 0
    }

    /// Serve's own lines: start, signals, warnings about how it was set up.
    static let log = Logger(.gateway, textPrefix: "irisgw serve: ")

    /// A refused command line, on stderr: plain text with the usage after a flag's mistake;
    /// one JSON line when `--log-format json` was given (the rest of the line may be what is wrong).
    static func refuse(_ refusal: ServeOptions.Refusal, _ args: [String]) {
        if let at = args.firstIndex(of: "--log-format"), at + 1 < args.count, args[at + 1] == "json" {
            LogSink.standardError.configuration = LogConfiguration(format: .json)
            log.error(refusal.message)
        } else {
            writeError("irisgw serve: \(refusal.message)\n" + (refusal.showsUsage ? "\n" + usage : ""))
        }
    }

    /// A started gateway with its control API (and the plain one beside HTTPS, if asked).
    struct Node {
        let gateway: Gateway
        let api: ControlAPIServer
        let plainAPI: ControlAPIServer?
    }

    /// The built-in carrier simulator on `listen`, started; its password from
    /// `CARRIER_SIM_PASSWORD` when set.
    static func startSimulator(listen: SocketAddress) throws -> CarrierSimulator {
        var c = CarrierSimulator.Configuration()
        c.listen = listen
        if let pw = ProcessInfo.processInfo.environment["CARRIER_SIM_PASSWORD"], !pw.isEmpty { c.authPassword = pw }
        let sim = try CarrierSimulator(configuration: c)
        sim.onReport = { writeOut("carrier-sim: \($0)\n") }
        for p in try sim.start() {
            writeOut("listening carrier-sim \(p.transport.rawValue.lowercased()) \(p.address)\n")
        }
        return sim
    }

    /// The control API first (its port is part of the public URL the gateway names itself
    /// by in notifications), then the gateway, attached to it and started.
    static func start(_ options: ServeOptions, profiles: [TrunkProfile]) throws -> Node {
        var configuration = options.gateway
        // In a cluster the key and the token secret are the cluster's: settled before they are read.
        let cluster = try configuration.cluster.map { try ClusterBootstrap.join($0, dataDir: configuration.dataDir) }
        let key = try APIKey.loadOrCreate(dataDir: configuration.dataDir)
        let webFiles = StaticFiles.locate(configured: options.webDirectory)
        var http = HTTPServerConfiguration(listen: options.apiListen, limits: options.apiListener.limits)
        http.log = Logger(.api)
        let pageLimits = options.file.pageTokens ?? PageTokenLimits()
        var plain = http
        http.tls = options.apiTLS.server
        let api = ControlAPIServer(key: key, configuration: http, webFiles: webFiles, pageLimits: pageLimits)
        let port = try api.start()
        // SocketAddress brackets an IPv6 host ("http://[::1]:8080"); a bare port is every IPv4 interface.
        let host =
            options.apiListen.allSatisfy(\.isNumber)
            ? "0.0.0.0" : SocketAddress.parse(options.apiListen)?.host ?? "127.0.0.1"
        let scheme = http.tls == nil ? "http" : "https"
        configuration.publicURL = options.publicURL ?? "\(scheme)://\(SocketAddress(host: host, port: port))"
        if http.tls == nil { warnIfExposed(host) }
        var plainAPI: ControlAPIServer?
        do {
            if let listen = options.apiTLS.listenPlain {
                plain.listen = listen
                let second = ControlAPIServer(
                    key: key, configuration: plain, webFiles: webFiles, pageLimits: pageLimits)
                plainAPI = second
                let plainPort = try second.start()
                let plainHost = SocketAddress.parse(listen)?.host ?? "127.0.0.1"
                warnIfExposed(plainHost)
                writeOut("listening api-plain http://\(SocketAddress(host: plainHost, port: plainPort))\n")
            }
            let gateway = try Gateway(configuration: configuration, profiles: profiles, cluster: cluster)
            if let hook = options.file.webhook {
                let notifier = try WebhookNotifier(configuration: hook, dns: configuration.sip.dns)
                gateway.notifier = { notifier.post($0) }
                writeOut("webhook \(hook.url)\n")
            }
            api.attach(gateway)
            plainAPI?.attach(gateway)
            for p in try gateway.start() {
                writeOut("listening sip \(p.transport.rawValue.lowercased()) \(p.address)\n")
            }
            writeOut("listening api \(configuration.publicURL)\n")
            writeOut(
                webFiles.map { "dialer page \(configuration.publicURL)/app (files \($0.directory))\n" }
                    ?? "dialer page: not installed (no web/app found; --web-dir)\n")
            return Node(gateway: gateway, api: api, plainAPI: plainAPI)
        } catch {
            plainAPI?.stop()
            api.stop()
            throw error
        }
    }

    /// SIGHUP rereads the TLS certificates and keys, SIP's and the control API's: new
    /// connections get them, calls go on. A file that cannot be used changes nothing for its
    /// listener and says why in the log. Then the profiles and the settings file are reloaded
    /// (`ServeReloader`, after one under way), the summary or the refusal in the log.
    static func reloadOnHangup(
        _ gateway: Gateway, api: ControlAPIServer, reloader: ServeReloader
    ) -> DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler {
            do throws(TLSFailure) {
                try gateway.reloadTLSCertificates()
                writeOut("tls certificates reloaded\n")
            } catch {
                log.error("SIGHUP: the TLS certificates were not reloaded (the old ones stay): \(error)")
            }
            if api.isTLS {
                do throws(TLSFailure) {
                    try api.reloadTLS()
                    writeOut("api tls certificate reloaded\n")
                } catch {
                    log.error("SIGHUP: the API's TLS certificate was not reloaded (the old one stays): \(error)")
                }
            }
            _ = try? reloader.reloadAndLog(by: "SIGHUP", waiting: true)
        }
        source.resume()
        return source
    }

    /// Plain HTTP on an address other hosts reach carries the API key in clear: said once at
    /// start, in the log.
    static func warnIfExposed(_ host: String) {
        guard !isLoopback(host) else { return }
        log.warning(
            "warning: the control API listens with plain HTTP on \(host): API keys and calls cross the "
                + "network in clear; give it a certificate (--api-tls-certificate, --api-tls-key) or listen on loopback"
        )
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") || host.lowercased() == "localhost"
    }
}
