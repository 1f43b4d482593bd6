import Cluster
import SIP
import Testing

@testable import Gateway

@Suite struct ServeConfigurationTests {
    @Test func everyKeyIsRead() throws {
        let c = try ServeConfiguration.parse(
            """
            // a production node
            {
              profiles: "/etc/irisgw/profiles", sipListen: "0.0.0.0:5060", apiListen: "127.0.0.1:8080",
              rtpHost: "203.0.113.7", rtpPorts: "30000-39999", dataDir: "/var/lib/irisgw",
              publicURL: "https://gw1.example.net", drainTimeoutSec: 60, maxSessions: 500, mediaRealtimePriority: 10,
              mediaLoadBudgetPercent: 70, mediaIO: "epoll",
              webhook: { url: "http://127.0.0.1:9000/hook", timeoutSec: 3, retries: 4 },
              apiLimits: { threads: 4, maxConnectionsPerSource: 300, maxWebSocketsPerClient: 900 },
            }
            """, file: "serve.json5")
        #expect(
            c.profiles == "/etc/irisgw/profiles" && c.sipListen == [SocketAddress(host: "0.0.0.0", port: 5060)]
                && c.apiListen == "127.0.0.1:8080")
        #expect(c.rtpPorts == 30_000...39_999 && c.rtpHost == "203.0.113.7" && c.dataDir == "/var/lib/irisgw")
        #expect(c.publicURL == "https://gw1.example.net" && c.drainTimeoutSec == 60 && c.maxSessions == 500)
        #expect(c.webhook == .init(url: "http://127.0.0.1:9000/hook", timeoutSec: 3, retries: 4))
        #expect(c.mediaRealtimePriority == 10)
        #expect(c.mediaLoadBudgetPercent == 70)
        #expect(c.mediaIO == .epoll)
        #expect(try ServeConfiguration.parse("{}", file: "empty.json5") == ServeConfiguration())
    }

    @Test func theLogKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            #"{ logFormat: "json", logLevel: "notice", logLevels: { sip: "debug", calls: "warning" } }"#,
            file: "serve.json5")
        #expect(c.logFormat?.rawValue == "json" && c.logLevel?.rawValue == "notice")
        #expect(c.log.format.rawValue == "json" && c.log.level.rawValue == "notice")
        #expect(
            c.log.levels.map { "\($0.key.rawValue)=\($0.value.rawValue)" }.sorted() == ["calls=warning", "sip=debug"])
        let none = ServeConfiguration().log
        #expect(none.format.rawValue == "text" && none.level.rawValue == "info" && none.levels.isEmpty)
    }

    @Test func thePageTokenQuotasAreRead() throws {
        let c = try ServeConfiguration.parse(
            "{ pageTokens: { sessionsPerRoutingId: 2, webSocketsPerRoutingId: 3 } }", file: "serve.json5")
        #expect(c.pageTokens == PageTokenLimits(sessionsPerRoutingId: 2, webSocketsPerRoutingId: 3))
        let partial = try ServeConfiguration.parse("{ pageTokens: { webSocketsPerRoutingId: 1 } }", file: "serve.json5")
        #expect(partial.pageTokens == PageTokenLimits(sessionsPerRoutingId: 4, webSocketsPerRoutingId: 1))
        #expect(PageTokenLimits() == PageTokenLimits(sessionsPerRoutingId: 4, webSocketsPerRoutingId: 4))
    }

    @Test func theHEPCollectorIsRead() throws {
        let short = try ServeConfiguration.parse(#"{ hep: "10.0.0.9:9060" }"#, file: "serve.json5")
        #expect(short.hep == HEPSettings(collector: SocketAddress(host: "10.0.0.9", port: 9060)))
        #expect(short.hep?.captureID == 2001 && short.hep?.authKey == nil)
        let long = try ServeConfiguration.parse(
            #"{ hep: { address: "[::1]:9061", captureId: 7, authKey: "k" } }"#, file: "serve.json5")
        #expect(long.hep == HEPSettings(collector: SocketAddress(host: "::1", port: 9061), captureID: 7, authKey: "k"))
    }

    @Test func theDNSKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { dnsServers: ["127.0.0.1:5353", "[::1]:53"], dnsTimeoutMs: 400, dnsTries: 3, dnsNegativeCacheSec: 5 }
            """, file: "serve.json5")
        var dns = DNSResolverConfiguration()
        c.dns?.apply(to: &dns)
        #expect(dns.servers == [SocketAddress(host: "127.0.0.1", port: 5353), SocketAddress(host: "::1", port: 53)])
        #expect(dns.timeoutMs == 400 && dns.tries == 3 && dns.negativeTTL == 5)
        #expect(ServeConfiguration.dnsServer("10.0.0.53:53") == SocketAddress(host: "10.0.0.53", port: 53))
        #expect(ServeConfiguration.dnsServer("10.0.0.53") == nil)
    }

    @Test func theTLSKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { sipTlsListen: ["127.0.0.1:5061", "[::1]:0"], tlsCertificate: "gw.pem", tlsKey: "gw.key",
              tlsClientCA: "carriers.pem", tlsVerifyClient: "require" }
            """, file: "serve.json5")
        #expect(c.tls?.listen == [SocketAddress(host: "127.0.0.1", port: 5061), SocketAddress(host: "::1", port: 0)])
        #expect(
            c.tls?.server
                == SIPTLSServerSettings(
                    certificateFile: "gw.pem", keyFile: "gw.key", clientCAFile: "carriers.pem",
                    verifyClient: .require))
        let one = try ServeConfiguration.parse(
            #"{ sipTlsListen: "0.0.0.0:5061", tlsCertificate: "a", tlsKey: "b" }"#, file: "s.json5")
        #expect(
            one.tls?.listen?.count == 1 && one.tls?.server?.verifyClient == SIPTLSServerSettings.ClientVerification.none
        )
    }

    @Test func theAPITLSKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { apiListen: "0.0.0.0:8443", apiTlsCertificate: "api.pem", apiTlsKey: "api.key", apiTlsClientCA: "clients.pem",
              apiTlsVerifyClient: "optional", apiListenPlain: "127.0.0.1:8081",
              webhook: { url: "https://hooks.example.net/irisgw", caFile: "hooks-ca.pem" } }
            """, file: "serve.json5")
        #expect(
            c.webhook == ServeConfiguration.Webhook(url: "https://hooks.example.net/irisgw", caFile: "hooks-ca.pem"))
    }

    /// Several listeners, the advertised addresses for a 1:1 NAT, TCP keep-alives.
    @Test func listenersAndAdvertisedAddressesAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { sipListen: ["10.0.0.5:5060", "[2001:db8::5]:5070"], sipAdvertise: "203.0.113.7:5080",
              rtpAdvertise: "203.0.113.7", platformRtpAdvertise: "10.1.0.5", sip: { tcp: { keepaliveSec: 25 } } }
            """, file: "serve.json5")
        #expect(
            c.sipListen == [SocketAddress(host: "10.0.0.5", port: 5060), SocketAddress(host: "2001:db8::5", port: 5070)]
        )
        #expect(c.sipAdvertise == SIPAdvertisedAddress(host: "203.0.113.7", port: 5080))
        #expect(c.rtpAdvertise == "203.0.113.7" && c.platformRtpAdvertise == "10.1.0.5")
        #expect(c.sip?.transportLimits.keepaliveInterval == 25)
        #expect(
            try ServeConfiguration.parse("{ sipAdvertise: \"sbc.example.net\" }", file: "s").sipAdvertise
                == SIPAdvertisedAddress(host: "sbc.example.net"))
    }

    @Test func theSIPSectionAndTheAPITimeoutsAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { maxInboundSessions: 200,
              sip: { userAgent: "edge", answerUnknownSources: true, requestsPerSecond: 20, trustedRequestsPerSecond: 5000,
                     banSec: 300, scannerUserAgents: ["evil"], maxServerTransactions: 900,
                     tcp: { maxConnections: 50, maxConnectionsPerSource: 5, idleTimeoutSec: 60, messageTimeoutSec: 3, maxQueuedBytes: 100000 } },
              apiLimits: { headerTimeoutSec: 5, bodyTimeoutSec: 6, idleTimeoutSec: 7, maxHeaderBytes: 8192, maxBodyBytes: 131072 } }
            """, file: "serve.json5")
        #expect(c.maxInboundSessions == 200)
        let sip = try #require(c.sip)
        #expect(sip.userAgent == "edge")
        #expect(
            sip.defence
                == SIPDefence(
                    requestsPerSecond: 20, trustedRequestsPerSecond: 5000, banSeconds: 300, answerUnknownSources: true,
                    scannerUserAgents: ["evil"], maxServerTransactions: 900))
        #expect(
            sip.transportLimits
                == SIPTransportLimits(
                    maxConnections: 50, maxConnectionsPerSource: 5, idleTimeout: 60,
                    messageTimeout: 3, maxQueuedBytes: 100_000))
        var ua = SIPUserAgentConfiguration()
        sip.apply(to: &ua)
        #expect(ua.userAgent == "edge" && ua.defence.banSeconds == 300)
    }

    /// Behind Kamailio: the proxies whose X-Irisgw-Source is believed, and the edge proxy
    /// out-of-dialog requests leave through (its address trusted besides).
    @Test func trustedProxiesAndTheEdgeProxyAreRead() throws {
        let c = try ServeConfiguration.parse(
            "{ sip: { trustedProxies: [\"10.0.0.0/29\", \"2001:db8::5\"], edgeProxy: \"sip:10.0.1.5:5070;transport=tcp\" } }",
            file: "s")
        let sip = try #require(c.sip)
        #expect(sip.trustedProxies?.map(\.description) == ["10.0.0.0/29", "2001:db8::5/128"])
        #expect(sip.edgeProxy?.host == "10.0.1.5" && sip.edgeProxy?.port == 5070 && sip.edgeProxy?.transport == "tcp")
        var ua = SIPUserAgentConfiguration()
        sip.apply(to: &ua)
        #expect(ua.edgeProxy == sip.edgeProxy)
        var g = GatewayConfiguration()
        g.sip = ua
        g.trustedProxies = sip.trustedProxies ?? []
        let trusted = Gateway.trustedProxies(g)
        #expect(trusted(SocketAddress(host: "10.0.0.7", port: 5060)))
        #expect(trusted(SocketAddress(host: "10.0.1.5", port: 1)))
        #expect(!trusted(SocketAddress(host: "10.0.0.8", port: 5060)))
        #expect(!trusted(SocketAddress(host: "10.0.1.6", port: 5070)))
        let none = try ServeConfiguration.parse("{}", file: "s")
        #expect(Gateway.trustedProxies(GatewayConfiguration())(SocketAddress(host: "127.0.0.1", port: 5060)) == false)
        #expect(none.sip == nil)
    }

    /// The capture bounds in MiB (what is not given keeps its default) and the SIP tap's
    /// debugging switch.
    /// The cluster section: its two required keys, the intervals in whole seconds, the prefix.
    @Test func theClusterSectionIsRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { cluster: { redis: "redis://:pw@10.0.0.9:6379/2", nodeId: "gw-1.eu", heartbeatIntervalSec: 2,
                         nodeTTLSec: 7, takeoverTTLSec: 60, keyPrefix: "prod" } }
            """, file: "s")
        var expected = ClusterSettings(redis: "redis://:pw@10.0.0.9:6379/2", nodeId: "gw-1.eu")
        expected.heartbeatInterval = 2
        expected.nodeTTL = 7
        expected.takeoverTTL = 60
        expected.keyPrefix = "prod"
        #expect(c.cluster == expected)
        let d = try ServeConfiguration.parse(
            "{ cluster: { redis: \"redis://127.0.0.1:6379\", nodeId: \"a\" } }", file: "s")
        #expect(d.cluster?.heartbeatInterval == 1 && d.cluster?.nodeTTL == 5 && d.cluster?.keyPrefix == "irisgw")
        #expect(try ServeConfiguration.parse("{}", file: "s").cluster == nil)
    }

    @Test func captureBoundsAndTheUnfilteredTapAreRead() throws {
        let c = try ServeConfiguration.parse(
            "{ capture: { maxLiveMiB: 64, maxEndedMiB: 16 }, sip: { tapUnfiltered: true } }", file: "s")
        #expect(c.capture == CaptureLimits(maxSessionBytes: 32 << 20, maxLiveBytes: 64 << 20, maxEndedBytes: 16 << 20))
        #expect(c.sip?.defence.tapUnfiltered == true)
        let d = try ServeConfiguration.parse("{}", file: "s")
        #expect(d.capture == nil && d.sip == nil)
        #expect(
            CaptureLimits()
                == CaptureLimits(maxSessionBytes: 32 << 20, maxLiveBytes: 256 << 20, maxEndedBytes: 256 << 20))
        #expect(SIPDefence().tapUnfiltered == false)
    }

    @Test(arguments: [
        ("{ capture: { maxLiveMiB: 0 } }", "capture.maxLiveMiB"),
        ("{ capture: { maxSessionBytes: 5 } }", "capture.maxSessionBytes"),
        ("{ sip: { tapUnfiltered: \"yes\" } }", "sip.tapUnfiltered"),
        ("{ sipListn: \"1.2.3.4:5\" }", "sipListn"),
        ("{ rtpPorts: \"20001-20000\" }", "rtpPorts"),
        ("{ maxSessions: \"many\" }", "maxSessions"),
        ("{ mediaLoadBudgetPercent: 120 }", "mediaLoadBudgetPercent"),
        ("{ mediaLoadBudgetPercent: 0.8 }", "mediaLoadBudgetPercent"),
        ("{ webhook: { timeoutSec: 3 } }", "webhook.url"),
        ("{ webhook: { url: \"ftp://x\" } }", "webhook.url"),
        ("{ publicURL: \"gw1\" }", "publicURL"),
        ("{ apiListen: \"localhost\" }", "apiListen"),
        ("{ pageTokens: { sessionsPerRoutingId: 0 } }", "pageTokens.sessionsPerRoutingId"),
        ("{ pageTokens: { webSocketsPerRoutingId: \"4\" } }", "pageTokens.webSocketsPerRoutingId"),
        ("{ pageTokens: { sessions: 4 } }", "pageTokens.sessions"),
        ("{ sip: { answerUnknown: true } }", "sip.answerUnknown"),
        ("{ sip: { requestsPerSecond: 0 } }", "sip.requestsPerSecond"),
        ("{ sip: { scannerUserAgents: [\"\"] } }", "sip.scannerUserAgents[0]"),
        ("{ sip: { userAgent: \"irisgw\\u0000\" } }", "sip.userAgent"),
        ("{ sip: { tcp: { idleTimeoutSec: -1 } } }", "sip.tcp.idleTimeoutSec"),
        ("{ maxInboundSessions: 0 }", "maxInboundSessions"),
        ("{ webrtcSetupTimeoutSec: 1 }", "webrtcSetupTimeoutSec"),
        ("{ webrtcSetupTimeoutSec: \"20\" }", "webrtcSetupTimeoutSec"),
        ("{ mediaRealtimePriority: 0 }", "mediaRealtimePriority"),
        ("{ mediaIO: \"io_uring\" }", "mediaIO"),
        ("{ mediaIO: true }", "mediaIO"),
        ("{ dnsServers: \"127.0.0.1:53\" }", "dnsServers"),
        ("{ dnsServers: [] }", "dnsServers"),
        ("{ dnsServers: [\"ns1.example:53\"] }", "dnsServers[0]"),
        ("{ dnsServers: [\"127.0.0.1:53\", \"127.0.0.1\"] }", "dnsServers[1]"),
        ("{ dnsServers: [\"127.0.0.1:0\"] }", "dnsServers[0]"),
        ("{ dnsServers: [\"::1:53\"] }", "dnsServers[0]"),
        ("{ dnsTimeoutMs: 10 }", "dnsTimeoutMs"),
        ("{ dnsTries: 0 }", "dnsTries"),
        ("{ dnsNegativeCacheSec: -1 }", "dnsNegativeCacheSec"),
        ("{ sipListen: [] }", "sipListen"),
        ("{ sipListen: [\"10.0.0.5:5060\", \"gw:5060\"] }", "sipListen[1]"),
        ("{ sipAdvertise: \"203.0.113.7:99999\" }", "sipAdvertise"),
        ("{ sipAdvertise: \"\" }", "sipAdvertise"),
        ("{ rtpAdvertise: \"gw.example.net\" }", "rtpAdvertise"),
        ("{ platformRtpAdvertise: \"10.1.0.5:4000\" }", "platformRtpAdvertise"),
        ("{ sip: { tcp: { keepaliveSec: -5 } } }", "sip.tcp.keepaliveSec"),
        ("{ sipTlsListen: \"127.0.0.1:5061\" }", "tlsCertificate"),
        ("{ tlsCertificate: \"gw.pem\" }", "tlsKey"),
        ("{ sipTlsListen: \"gw:5061\", tlsCertificate: \"a\", tlsKey: \"b\" }", "sipTlsListen"),
        ("{ tlsCertificate: \"a\", tlsKey: \"b\", tlsVerifyClient: \"always\" }", "tlsVerifyClient"),
        ("{ webhook: { url: \"https://x/\", caFile: \"\" } }", "webhook.caFile"),
        ("{ hep: \"collector:9060\" }", "hep"),
        ("{ hep: 9060 }", "hep"),
        ("{ hep: { address: \"10.0.0.9:9060\", captureId: -1 } }", "hep.captureId"),
        ("{ hep: { captureId: 7 } }", "hep.address"),
        ("{ hep: { address: \"10.0.0.9:9060\", password: \"x\" } }", "hep.password"),
        ("{ sip: { trustedProxies: [] } }", "sip.trustedProxies"),
        ("{ sip: { trustedProxies: [\"kamailio.example\"] } }", "sip.trustedProxies[0]"),
        ("{ sip: { trustedProxies: \"10.0.0.5\" } }", "sip.trustedProxies"),
        ("{ sip: { edgeProxy: \"10.0.0.5:5060\" } }", "sip.edgeProxy"),
        ("{ sip: { edgeProxy: \"sip:kamailio.example:5060\" } }", "sip.edgeProxy"),
        ("{ sip: { edgeProxy: \"sip:10.0.0.5:5060;transport=sctp\" } }", "sip.edgeProxy"),
        ("{ sip: { edgeProxy: \"sips:10.0.0.5:5061\" } }", "sip.edgeProxy"),
        ("{ cluster: { nodeId: \"gw1\" } }", "cluster.redis"),
        ("{ cluster: { redis: \"http://10.0.0.9:6379\", nodeId: \"gw1\" } }", "cluster.redis"),
        ("{ cluster: { redis: \"redis://10.0.0.9:6379\" } }", "cluster.nodeId"),
        ("{ cluster: { redis: \"redis://10.0.0.9:6379\", nodeId: \"gw#1\" } }", "cluster.nodeId"),
        ("{ cluster: { redis: \"redis://10.0.0.9:6379\", nodeId: \"gw1\", nodeTTLSec: 1 } }", "cluster.nodeTTLSec"),
        (
            "{ cluster: { redis: \"redis://10.0.0.9:6379\", nodeId: \"gw1\", heartbeatIntervalSec: 5, nodeTTLSec: 5 } }",
            "cluster.nodeTTLSec"
        ),
        ("{ cluster: { redis: \"redis://10.0.0.9:6379\", nodeId: \"gw1\", keyPrefix: \"a b\" } }", "cluster.keyPrefix"),
        ("{ cluster: { redis: \"redis://10.0.0.9:6379\", nodeId: \"gw1\", ttl: 5 } }", "cluster.ttl"),
        ("{ logFormat: \"syslog\" }", "logFormat"),
        ("{ logLevel: \"verbose\" }", "logLevel"),
        ("{ logLevel: 3 }", "logLevel"),
        ("{ logLevels: { rtp: \"debug\" } }", "logLevels.rtp"),
        ("{ logLevels: { sip: \"loud\" } }", "logLevels.sip"),
        ("{ logLevels: \"sip=debug\" }", "logLevels")
    ])
    func badFilesNameTheFileAndKey(_ text: String, _ key: String) {
        do {
            _ = try ServeConfiguration.parse(text, file: "serve.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "serve.json5" && error.keyPath == key, "\(error)")
        }
    }
}
