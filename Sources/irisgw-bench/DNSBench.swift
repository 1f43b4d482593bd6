import Foundation
import Glibc
import IOCore
import IrisAPI
import Synchronization
import WebClient

/// `BENCH sip-dns`: proxies named by DNS against numeric ones, through the whole gateway
/// (release `irisgw serve`, SIPp's `uas` as the carrier), ratios measured in one run.
/// - `srv_ratio`: the setup rate of sessions through a proxy named by SRV records (dnsmasq
///   on loopback, answers cached after the first call) over the rate through the same
///   carrier's numeric address; rounds interleaved so machine load hits both alike.
/// - `silent_dns_ratio`: the numeric proxy's setup rate while other sessions wait on a DNS
///   server that drops every query (failures not cached, so each asks again), over the
///   same gateway's numeric rate without them.
enum DNSBench {
    struct Result {
        var numericRate = 0.0, srvRate = 0.0, quietRate = 0.0, silentRate = 0.0
        var failed = 0
        var dnsWaiting = 0
    }

    static func run(irisgw: String, sessions: Int = 300, rounds: Int = 3, workers: Int = 16) throws -> Result {
        var result = Result()
        let carrierPort = CallRateBench.freeUDPPort() ?? 45_060
        let carrier = try BridgeBench.startCarrier(port: carrierPort)
        defer { carrier.terminate(); carrier.waitUntilExit() }

        // Part 1: SRV-named proxy against the numeric one.
        let dns = try Dnsmasq(records: [
            "srv-host=_sip._udp.carrier.bench.test,sbc.bench.test,\(carrierPort),10,0",
            "host-record=sbc.bench.test,127.0.0.1"
        ])
        defer { dns.stop() }
        let named = BridgeBench.profile(carrierPort: carrierPort)
            .replacingOccurrences(of: "name: \"bench\"", with: "name: \"named\"")
            .replacingOccurrences(of: "sip:127.0.0.1:\(carrierPort);transport=udp", with: "sip:carrier.bench.test")
        do {
            let gw = try BridgeBench.startGateway(
                irisgw: irisgw, carrierPort: carrierPort, moreProfiles: ["named": named],
                arguments: ["--dns-server", "127.0.0.1:\(dns.port)"])
            defer { gw.stop() }
            let router = try BridgeBench.EventRouter(api: gw.api, key: gw.key)
            defer { router.close() }
            // Warm: the SRV and A answers are cached (TTL 3600) before anything is timed.
            _ = BridgeBench.setupRate(gw, router, sessions: workers, workers: workers, profile: "named")
            let rates = BridgeBench.interleavedRates(
                gw, router, profiles: ("bench", "named"), sessions: sessions, workers: workers, rounds: rounds)
            result.numericRate = rates.first
            result.srvRate = rates.second
            result.failed += rates.failed
        }

        // Part 2: numeric calls while a DNS server drops every query.
        let silent = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let gw = try BridgeBench.startGateway(
            irisgw: irisgw, carrierPort: carrierPort,
            config: "{ dnsTimeoutMs: 2000, dnsTries: 2, dnsNegativeCacheSec: 0 }",
            moreProfiles: ["named": named],
            arguments: ["--dns-server", "127.0.0.1:\(silent.local.port)"])
        defer { gw.stop() }
        let router = try BridgeBench.EventRouter(api: gw.api, key: gw.key)
        defer { router.close() }
        var quietSeconds = 0.0, silentSeconds = 0.0
        for _ in 0..<rounds {
            let q = BridgeBench.setupRate(gw, router, sessions: sessions, workers: workers, profile: "bench")
            quietSeconds += Double(sessions) / q.rate
            // Sessions stuck on DNS all through the timed run: 8 threads create named
            // sessions (each waits the whole timeout, then ends) until the run is over.
            let stop = Atomic<Bool>(false), waiting = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<8 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    guard
                        let client = try? HTTPClient(
                            baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
                    else { return }
                    while !stop.load(ordering: .relaxed) {
                        guard let s = BridgeBench.create(client, mediaPort: 9, profile: "named") else { continue }
                        waiting.add(1, ordering: .relaxed)
                        _ = router.wait(s.roomId, timeout: 15) { $0.event == .onSessionEnded }
                        router.forget(s.roomId)
                    }
                }.start()
            }
            // The DNS waits begin before the numeric sessions are timed.
            while waiting.load(ordering: .relaxed) < 8 { usleep(5_000) }
            let s = BridgeBench.setupRate(gw, router, sessions: sessions, workers: workers, profile: "bench")
            stop.store(true, ordering: .relaxed)
            result.dnsWaiting = max(result.dnsWaiting, waiting.load(ordering: .relaxed))
            silentSeconds += Double(sessions) / s.rate
            result.failed += q.failed + s.failed
            group.wait()
        }
        result.quietRate = Double(sessions * rounds) / quietSeconds
        result.silentRate = Double(sessions * rounds) / silentSeconds
        return result
    }

    /// dnsmasq on loopback answering only `records` (TTL 3600), started without Foundation's
    /// Process (dnsmasq closes the descriptors Process watches for the exit).
    final class Dnsmasq {
        let port: Int
        private let pid: pid_t
        private let directory: URL

        init(records: [String]) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-dns-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            port = CallRateBench.freeUDPPort() ?? 45_353
            let conf = directory.appendingPathComponent("dnsmasq.conf")
            let lines =
                [
                    "port=\(port)", "listen-address=127.0.0.1", "bind-interfaces", "no-resolv", "no-hosts", "no-poll",
                    "keep-in-foreground", "pid-file=", "local=/bench.test/", "local-ttl=3600"
                ] + records
            try (lines.joined(separator: "\n") + "\n").write(to: conf, atomically: true, encoding: .utf8)
            let argv = ["/usr/sbin/dnsmasq", "--conf-file=" + conf.path]
            var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { for a in cArgs { free(a) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
            var child: pid_t = 0
            guard posix_spawn(&child, argv[0], &actions, nil, &cArgs, environ) == 0 else {
                throw SocketError("posix_spawn dnsmasq (apt-get install dnsmasq-base)", code: ENOENT)
            }
            pid = child
            usleep(300_000)
        }

        func stop() {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
