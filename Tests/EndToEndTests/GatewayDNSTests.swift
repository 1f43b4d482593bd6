import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Proxies named by DNS (RFC 3263 / RFC 2782) through real processes: `irisgw serve`
    /// with `--dns-server` pointing at a dnsmasq the test starts (or at a socket that never
    /// answers), SIPp as the carrier behind SRV records, the Swift client as the app.
    @Suite(.enabled(if: TestDNSServer.isInstalled)) struct GatewayDNSTests {
        /// A gateway whose profile `trunk` sends to `proxies` (URIs, names allowed), with `dns`
        /// as its only DNS server.
        static func gateway(
            proxies: [String], dns: String, config: String? = nil, ringTimeoutSec: Int = 30,
            more: [GatewayProcess.Profile] = []
        ) async throws -> GatewayProcess {
            var profile = GatewayProcess.Profile()
            profile.proxyURIs = proxies
            profile.ringTimeoutSec = ringTimeoutSec
            return try await GatewayProcess(
                profiles: [profile] + more, extraArguments: ["--dns-server", dns], config: config)
        }

        /// One call, ended; its recorder and when its create returned (monotonic seconds).
        static func call(
            _ gw: GatewayProcess, profile: String? = nil, timeout: Double = 20,
            during: (IrisRtcAudioSession, SessionRecorder) async throws -> Void = { _, _ in }
        ) async throws
            -> (rec: SessionRecorder, created: Double)
        {
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .silence), delegate: rec)
            defer { session.stop() }
            try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", profile: profile)
            let created = SIPEventLoop.now()
            try await during(session, rec)
            _ = await rec.waitFor(timeout: timeout) { $0.contains { $0.event == .onSessionEnded } }
            return (rec, created)
        }

        /// A first priority that swallows the INVITE costs the failover time (default 4 s),
        /// not Timer B (32 s): with a 20 s ring timeout the call still reaches the live second
        /// target and is answered. Before the failover timer, the ring timer ran out first and
        /// the call ended `no-answer` without the live target ever getting an INVITE.
        @Test(.timeLimit(.minutes(2)))
        func srvFailsOverFromADeadFirstPriorityToTheSecondWithinTheRingTime() async throws {
            let sipp = try await SIPp.listening(.inline(name: "carrier", xml: CarrierScenarios.answer()), timeout: 60)
            defer { sipp.stop() }
            // The first priority is a port nothing answers on (a socket that swallows the INVITE).
            let dead = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            let dns = try await TestDNSServer(records: [
                "naptr-record=carrier.dns.test,10,50,s,SIP+D2U,,_sip._udp.carrier.dns.test",
                "srv-host=_sip._udp.carrier.dns.test,dead.dns.test,\(dead.local.port),10,0",
                "srv-host=_sip._udp.carrier.dns.test,live.dns.test,\(sipp.port),20,0",
                "host-record=dead.dns.test,127.0.0.1",
                "host-record=live.dns.test,127.0.0.1"
            ])
            defer { dns.stop() }
            let gw = try await Self.gateway(proxies: ["sip:carrier.dns.test"], dns: dns.server, ringTimeoutSec: 20)
            defer { gw.stop() }
            let (rec, _) = try await Self.call(gw, timeout: 40) { session, rec in
                #expect(await rec.waitForStatus(.connected, timeout: 30), "\(rec.trace)\n\(sipp.report)\n\(dns.log)")
                try await session.close()
            }
            #expect(
                rec.trace == [
                    "onSessionCreated", "Initializing", "Connecting", "Connected", "onStreamQualityIndicator",
                    "Disconnected", "ended:completed"
                ], "\(rec.events)")
            let toDead = dead.drainTexts()
            let swallowed = toDead.filter { $0.hasPrefix("INVITE ") }
            #expect(!swallowed.isEmpty, "the first priority never got the INVITE")
            // No CANCEL to a target that sent nothing (RFC 3261 §9.1), and the live target's
            // INVITE is a new transaction (a branch of its own).
            #expect(toDead.allSatisfy { $0.hasPrefix("INVITE ") }, "\(toDead)")
            let deadBranches = Set(swallowed.flatMap(Self.branches))
            #expect(deadBranches.count == 1, "\(swallowed)")
            #expect(Set(Self.branches(sipp.messages)).isDisjoint(with: deadBranches), sipp.report)
            // The Request-URI keeps the name (RFC 3263: DNS says where, not what).
            #expect(sipp.messages.contains("INVITE sip:+15551230001@carrier.dns.test SIP/2.0"), sipp.report)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        /// The Via branch parameters in `text` (`z9hG4bK...`).
        static func branches(_ text: String) -> [String] {
            text.components(separatedBy: "branch=").dropFirst().map { String($0.prefix { !";, \r\n".contains($0) }) }
        }

        @Test(.timeLimit(.minutes(3)))
        func weightsSplitCallsBetweenTwoTargets() async throws {
            // Target A answers 486, B 603, so each call's end says which one took it.
            let a = try await SIPp.listening(
                .inline(name: "a", xml: CarrierScenarios.reject("486 Busy Here", ring: false)), calls: 1000,
                timeout: 150)
            defer { a.stop() }
            let b = try await SIPp.listening(
                .inline(name: "b", xml: CarrierScenarios.reject("603 Decline", ring: false)), calls: 1000, timeout: 150)
            defer { b.stop() }
            let dns = try await TestDNSServer(records: [
                "srv-host=_sip._udp.split.dns.test,a.dns.test,\(a.port),10,1",
                "srv-host=_sip._udp.split.dns.test,b.dns.test,\(b.port),10,3",
                "host-record=a.dns.test,127.0.0.1",
                "host-record=b.dns.test,127.0.0.1"
            ])
            defer { dns.stop() }
            let gw = try await Self.gateway(proxies: ["sip:split.dns.test"], dns: dns.server)
            defer { gw.stop() }
            var codes: [Int] = []
            for _ in 0..<40 {
                let (rec, _) = try await Self.call(gw)
                codes.append(rec.ended?.sip?.code ?? 0)
            }
            let toA = codes.filter { $0 == 486 }.count, toB = codes.filter { $0 == 603 }.count
            #expect(toA + toB == 40, "\(codes)")
            // Weight 3 of 4: 30 of 40 expected; the bound is about four standard deviations.
            #expect((19...39).contains(toB) && toA >= 1, "A \(toA), B \(toB)")
            // The SRV answer was cached: one query for all 40 calls.
            #expect(dns.queries("SRV", "_sip._udp.split.dns.test") == 1, "\(dns.log)")
        }

        @Test(.timeLimit(.minutes(2)))
        func aChangedRecordIsUsedAfterItsTTLAndNotBefore() async throws {
            let a = try await SIPp.listening(
                .inline(name: "a", xml: CarrierScenarios.reject("486 Busy Here", ring: false)), calls: 1000, timeout: 90
            )
            defer { a.stop() }
            let b = try await SIPp.listening(
                .inline(name: "b", xml: CarrierScenarios.reject("603 Decline", ring: false)), calls: 1000, timeout: 90)
            defer { b.stop() }
            let ttl = 6.0
            func records(_ port: Int) -> [String] {
                ["srv-host=_sip._udp.ttl.dns.test,t.dns.test,\(port),10,0", "host-record=t.dns.test,127.0.0.1"]
            }
            let dns = try await TestDNSServer(records: records(a.port), ttl: Int(ttl))
            defer { dns.stop() }
            let gw = try await Self.gateway(proxies: ["sip:ttl.dns.test"], dns: dns.server)
            defer { gw.stop() }
            let t0 = SIPEventLoop.now()  // the SRV answer is cached at or after this
            let first = try await Self.call(gw)
            #expect(first.rec.ended?.sip?.code == 486, "\(first.rec.events)")
            try await dns.replace(records: records(b.port))
            // Calls until one reaches B; every call whose lookup was before t0 + TTL must reach A.
            var reachedB: Double?
            let deadline = SIPEventLoop.now() + 40
            while reachedB == nil && SIPEventLoop.now() < deadline {
                let (rec, created) = try await Self.call(gw)
                let code = rec.ended?.sip?.code
                if created < t0 + ttl {
                    #expect(code == 486, "a call \(created - t0) s after the first lookup reached the new record")
                }
                if code == 603 { reachedB = created }
                #expect(code == 486 || code == 603, "\(rec.events)")
                // Ten calls a second at most: each takes two RTP pairs that stay in their
                // 10 s quarantine, and an unpaced loop of refused calls used up the block.
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            let b0 = try #require(reachedB, "no call reached the changed record within 40 s\n\(dns.log)")
            #expect(b0 >= t0 + ttl, "the new record was used \(b0 - t0) s after the first lookup (TTL \(ttl) s)")
            #expect(b0 < t0 + ttl + 10, "the new record was used only \(b0 - t0) s after the first lookup")
        }

        @Test(.timeLimit(.minutes(2)))
        func aSilentDNSServerDelaysOnlyTheCallsThatNeedIt() async throws {
            let silent = try SilentDNSServer()
            defer { silent.stop() }
            let sipp = try await SIPp.listening(.inline(name: "carrier", xml: CarrierScenarios.answer()), timeout: 60)
            defer { sipp.stop() }
            var numeric = GatewayProcess.Profile(proxies: [sipp.port])
            numeric.name = "numeric"
            // 1 s then 2 s for the NAPTR query: the named call waits 3 s, then ends.
            let gw = try await Self.gateway(
                proxies: ["sip:slow.dns.test"], dns: silent.server,
                config: "{ dnsTimeoutMs: 1000, dnsTries: 2 }", more: [numeric])
            defer { gw.stop() }
            async let named = Self.call(gw, profile: "trunk", timeout: 20)
            // Both created at once: the named one first.
            _ = await eventually(timeout: 5) { silent.queries >= 1 }
            let started = SIPEventLoop.now()
            let (rec, _) = try await Self.call(gw, profile: "numeric") { session, rec in
                #expect(await rec.waitForStatus(.connected, timeout: 10), "\(rec.trace)\n\(sipp.report)")
                let took = SIPEventLoop.now() - started
                #expect(took < 2.0, "the numeric call took \(took) s to connect while a lookup hung")
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            let (namedRec, namedCreated) = try await named
            let namedEnded = SIPEventLoop.now()
            #expect(
                namedRec.trace == ["onSessionCreated", "Initializing", "Disconnected", "error:-412", "ended:failed"],
                "\(namedRec.events)")
            #expect(
                namedRec.ended?.sip?.code == 503 && namedRec.ended?.sip?.reason == "DNS: slow.dns.test: timeout",
                "\(namedRec.events)")
            #expect(namedEnded - namedCreated >= 2.5, "the named call ended after \(namedEnded - namedCreated) s")
            #expect(sipp.received("INVITE ") == 1, sipp.report)
        }

        @Test func nxdomainEndsTheSessionWithRemoteUnreachable() async throws {
            let dns = try await TestDNSServer(records: ["host-record=other.dns.test,127.0.0.1"])
            defer { dns.stop() }
            let gw = try await Self.gateway(proxies: ["sip:nosuch.dns.test"], dns: dns.server)
            defer { gw.stop() }
            let (rec, _) = try await Self.call(gw)
            #expect(
                rec.trace == ["onSessionCreated", "Initializing", "Disconnected", "error:-412", "ended:failed"],
                "\(rec.events)")
            let error = try #require(rec.events.first { $0.event == .onSessionError })
            #expect(error.message == "remote unreachable: DNS: nosuch.dns.test: no such domain", "\(error)")
            #expect(rec.ended?.sip == SIPDetails(code: 503, reason: "DNS: nosuch.dns.test: no such domain"))
            let record = try #require(try await gw.recordsAfterStop().first)
            #expect(
                record.endReason == "failed" && record.sipCode == 503
                    && record.sipReason == "DNS: nosuch.dns.test: no such domain", "\(record)")
        }
    }
}
