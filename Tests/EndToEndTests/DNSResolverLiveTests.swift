import Foundation
import SIP
import Testing

/// The resolver (c-ares on an event loop, the cache) against a real DNS server.
@Suite struct DNSResolverLiveTests {
    /// A resolver on its own loop, used from the test through the loop.
    final class Harness: Sendable {
        let loop: EventLoop
        private let box: LoopBoundBox<DNSResolver>
        /// The resolver; on the loop.
        private var resolver: DNSResolver { box.value }

        init(_ configuration: DNSResolverConfiguration) throws {
            loop = try EventLoop()
            // Made before the loop's thread runs: this thread owns the loop's state until `start`.
            box = LoopBoundBox(DNSResolver(loop: loop, configuration: configuration), loop: loop)
            loop.start(name: "dns-test")
        }

        /// One lookup; the answer and whether it came from the cache.
        func lookup(_ q: DNSQuestion) async -> (answer: DNSAnswer, cached: Bool) {
            await withCheckedContinuation { (k: CheckedContinuation<(answer: DNSAnswer, cached: Bool), Never>) in
                loop.execute { [self] in
                    if let now = resolver.lookup(q, completion: { k.resume(returning: ($0, false)) }) {
                        k.resume(returning: (now, true))
                    }
                }
            }
        }

        /// `count` lookups of `q` started in one loop turn; their answers.
        func concurrent(_ q: DNSQuestion, count: Int) async -> [DNSAnswer] {
            await withCheckedContinuation { (k: CheckedContinuation<[DNSAnswer], Never>) in
                loop.execute { [self] in
                    var answers: [DNSAnswer] = []
                    for _ in 0..<count {
                        let now = resolver.lookup(q) { a in
                            answers.append(a)
                            if answers.count == count { k.resume(returning: answers) }
                        }
                        if let now { answers.append(now) }
                    }
                }
            }
        }

        var statistics: DNSResolver.Statistics {
            get async { await loop.run { [self] in resolver.statistics } }
        }

        /// Stops the loop, then (its thread done, this one owns its state) closes the resolver.
        func stop() {
            loop.stop()
            resolver.close()
        }
    }

    static let records = [
        "host-record=a.dns.test,127.0.0.1",
        "host-record=v6.dns.test,::1",
        "srv-host=_sip._udp.w.dns.test,a.dns.test,5070,10,1",
        "srv-host=_sip._udp.w.dns.test,b.dns.test,5080,20,3",
        "naptr-record=n.dns.test,10,50,s,SIP+D2T,,_sip._tcp.n.dns.test"
    ]

    @Test(.enabled(if: TestDNSServer.isInstalled), .timeLimit(.minutes(1)))
    func recordsWithTheirTTLsAndOneQueryForConcurrentLookups() async throws {
        let dns = try await TestDNSServer(records: Self.records, ttl: 42)
        defer { dns.stop() }
        let h = try Harness(DNSResolverConfiguration(servers: [SocketAddress(host: "127.0.0.1", port: dns.port)]))
        defer { h.stop() }

        let srv = await h.lookup(DNSQuestion("_sip._udp.w.dns.test", .srv))
        let records = try srv.answer.get()
        #expect(!srv.cached && records.ttl == 42)
        #expect(
            Set(records.srv) == [
                SRVRecord(priority: 10, weight: 1, port: 5070, target: "a.dns.test"),
                SRVRecord(priority: 20, weight: 3, port: 5080, target: "b.dns.test")
            ])
        let naptr = try await h.lookup(DNSQuestion("N.dns.test.", .naptr)).answer.get().naptr
        #expect(
            naptr == [
                NAPTRRecord(
                    order: 10, preference: 50, flags: "s", service: "SIP+D2T", replacement: "_sip._tcp.n.dns.test")
            ])
        #expect(try await h.lookup(DNSQuestion("a.dns.test", .a)).answer.get().addresses == ["127.0.0.1"])
        #expect(try await h.lookup(DNSQuestion("v6.dns.test", .aaaa)).answer.get().addresses == ["::1"])

        // Cached: no second query.
        let again = await h.lookup(DNSQuestion("_sip._udp.w.dns.test", .srv))
        #expect(again.cached && (try? again.answer.get()) == records)
        #expect(dns.queries("SRV", "_sip._udp.w.dns.test") == 1, "\(dns.log)")

        // Five lookups at once of a name nobody asked yet: one query.
        let answers = await h.concurrent(DNSQuestion("a.dns.test", .aaaa), count: 5)
        #expect(answers.count == 5 && answers.allSatisfy { $0 == .failure(.noData) }, "\(answers)")
        #expect(dns.queries("AAAA", "a.dns.test") == 1, "\(dns.log)")
        await #expect(h.statistics.joined == 4)

        // A name that does not exist: NXDOMAIN, and kept (no second query).
        #expect(await h.lookup(DNSQuestion("nosuch.dns.test", .naptr)).answer == .failure(.noSuchName))
        let negative = await h.lookup(DNSQuestion("nosuch.dns.test", .naptr))
        #expect(negative.cached && negative.answer == .failure(.noSuchName))
        #expect(dns.queries("NAPTR", "nosuch.dns.test") == 1, "\(dns.log)")
    }

    @Test(.timeLimit(.minutes(1)))
    func aSilentServerTimesOutWithinTheBoundAndTheLoopKeepsRunning() async throws {
        let silent = try SilentDNSServer()
        defer { silent.stop() }
        let h = try Harness(
            DNSResolverConfiguration(servers: [SocketAddress.parse(silent.server)!], timeoutMs: 300, tries: 2))
        defer { h.stop() }
        let started = SIPEventLoop.now()
        async let answer = h.lookup(DNSQuestion("slow.dns.test", .naptr))
        // While the query waits, the loop runs other work at once.
        var loopTurns: [Double] = []
        for _ in 0..<5 {
            let t = SIPEventLoop.now()
            await h.loop.run { () }
            loopTurns.append(SIPEventLoop.now() - t)
        }
        let result = await answer
        let took = SIPEventLoop.now() - started
        #expect(result.answer == .failure(.timeout))
        // 300 ms, then 600 ms (c-ares doubles the timeout for the second round).
        #expect(took >= 0.8 && took < 5, "took \(took) s")
        #expect(loopTurns.max()! < 0.25, "loop turns \(loopTurns)")
        #expect(silent.queries >= 2)
    }
}
