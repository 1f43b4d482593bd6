import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Authenticated inbound trunks (`inbound.auth`): SIPp answering an MD5 challenge, our
    /// own agent answering SHA-256, a password guesser banned, an unauthenticated flood kept
    /// stateless and rate-limited, and silence for sources no trunk lets authenticate.
    @Suite struct GatewayInboundAuthTests {
        static let password = "correct-horse-battery-staple"

        /// A trunk that may call from anywhere with credentials, and nothing else (no
        /// outbound part, so no proxy address is trusted either).
        static func profile(algorithms: [String], allowFrom: [String]? = nil) -> GatewayProcess.Profile {
            var p = GatewayProcess.Profile()
            p.allowFrom = allowFrom
            p.inboundAuth = ("carrier-in", "CARRIER_IN_PASSWORD", algorithms)
            return p
        }

        static func gateway(
            algorithms: [String], allowFrom: [String]? = nil, config: String? = nil
        ) async throws -> GatewayProcess {
            try await GatewayProcess(
                profiles: [profile(algorithms: algorithms, allowFrom: allowFrom)],
                environment: ["CARRIER_IN_PASSWORD": password], config: config)
        }

        static func refused(_ gw: GatewayProcess, _ what: String) async -> Int {
            await HostileTrafficTests.refused(gw, what)
        }

        /// `/metrics`' value of a metric without labels, -1 when unreadable.
        static func gauge(_ gw: GatewayProcess, _ name: String) async -> Int {
            await GatewayFaultTests.metric(gw, name)
        }

        /// SIPp's UAC with `[authentication]` (MD5, qop=auth): the INVITE, our 401, the ACK,
        /// the INVITE with credentials, then `outcome` (a 603 from the app's reject, or a
        /// second 401 for a wrong password) and its ACK.
        static func authenticatingCaller(password: String, outcome: Int) -> String {
            func invite(cseq: Int, auth: Bool) -> String {
                """
                  <send retrans="500"><![CDATA[
                INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
                From: "Carrier" <sip:+15559876543@[local_ip]:[local_port]>;tag=[pid]a[call_number]
                To: <sip:[service]@[remote_ip]:[remote_port]>
                Call-ID: [call_id]
                CSeq: \(cseq) INVITE
                Contact: <sip:+15559876543@[local_ip]:[local_port]>
                \(auth ? "[authentication username=carrier-in password=\(password)]" : "X-Attempt: first")
                Max-Forwards: 70
                Content-Type: application/sdp
                Content-Length: [len]

                v=0
                o=pstn 1 1 IN IP4 [local_ip]
                s=-
                c=IN IP4 [media_ip]
                t=0 0
                m=audio [media_port] RTP/AVP 0
                a=rtpmap:0 PCMU/8000

                ]]></send>

                """
            }
            func ack(cseq: Int) -> String {
                """
                  <send><![CDATA[
                ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
                [last_Via:]
                From: "Carrier" <sip:+15559876543@[local_ip]:[local_port]>;tag=[pid]a[call_number]
                To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
                Call-ID: [call_id]
                CSeq: \(cseq) ACK
                Max-Forwards: 70
                Content-Length: 0

                ]]></send>

                """
            }
            return "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<scenario name=\"authenticating caller\">\n"
                + invite(cseq: 1, auth: false) + "  <recv response=\"401\" auth=\"true\"/>\n" + ack(cseq: 1)
                + invite(cseq: 2, auth: true) + "  <recv response=\"100\" optional=\"true\"/>\n"
                + (outcome == 603 ? "  <recv response=\"180\"/>\n" : "") + "  <recv response=\"\(outcome)\"/>\n"
                + ack(cseq: 2)
                + "</scenario>\n"
        }

        @Test(arguments: [(password, true), ("wrong-password", false)])
        func sippAuthenticatesWithMD5(password: String, accepted: Bool) async throws {
            // SIPp answers MD5 challenges only.
            let gw = try await Self.gateway(algorithms: ["MD5"])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let sipp = try SIPp(
                .inline(
                    name: "md5-caller",
                    xml: Self.authenticatingCaller(password: password, outcome: accepted ? 603 : 401)),
                remote: gw.sipPeer, timeout: 30, arguments: ["-s", "+15550001000"])
            defer { sipp.stop() }
            if accepted {
                let n = try #require(await listener.next(timeout: 15), sipp.report)
                let snapshot = try await gw.connection().snapshot(roomId: try #require(n.roomid))
                #expect(snapshot.profile == "trunk" && snapshot.sourceTN == "+15559876543")
                try await IrisRtcAudioSession.reject(
                    connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: false)
            }
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
            #expect(
                sipp.messages.contains("algorithm=MD5") && !sipp.messages.contains("algorithm=SHA-256"), sipp.report)
            #expect(await Self.refused(gw, "sip_auth_required") == 1)
            #expect(await Self.refused(gw, "sip_auth_failed") == (accepted ? 0 : 1))
            if !accepted { #expect(try await gw.connection().sessions().isEmpty) }
            // Nothing secret in what the gateway printed.
            #expect(!gw.printed.contains(Self.password) && !gw.printed.contains("response="), "\(gw.printed)")
        }

        /// Our own SIP client (DigestClient, SHA-256 with qop=auth) gets in; a guesser with a
        /// wrong password is answered `maxAuthFailures` times, then banned: its next INVITE,
        /// even with the right password, is dropped unread.
        @Test func sha256ByOurOwnClientAndGuessersAreBanned() async throws {
            let gw = try await Self.gateway(
                algorithms: ["SHA-256"], config: "{ sip: { maxAuthFailures: 2, authFailureWindowSec: 600 } }")
            defer { gw.stop() }
            let agent = try TestAgent()
            defer { agent.shutdown() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let target = SIPURI(user: "+15550001000", host: "127.0.0.1", port: gw.sipPort)
            func call(_ password: String) async -> CallRecorder {
                let rec = CallRecorder()
                _ = await agent.call(
                    uri: target, peer: gw.sipPeer, recorder: rec,
                    credentials: DigestCredentials(username: "carrier-in", password: password))
                return rec
            }
            let good = await call(Self.password)
            let n = try #require(await listener.next(timeout: 15), "\(good.events)")
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: true)
            #expect(await good.waitForEnd() == .rejected(status: 486), "\(good.events)")
            for attempt in 1...2 {
                let guess = await call("guess-\(attempt)")
                #expect(await guess.waitForEnd() == .rejected(status: 401), "attempt \(attempt): \(guess.events)")
            }
            #expect(await Self.refused(gw, "sip_auth_failed") == 2)
            #expect(await Self.refused(gw, "sip_auth_banned") == 0)
            // The third wrong answer bans the source; nothing answers it.
            let third = await call("guess-3")
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_auth_banned") == 1 })
            #expect(await Self.refused(gw, "sip_auth_failed") == 3)
            let banned = await Self.refused(gw, "sip_banned")
            let late = await call(Self.password)
            #expect(
                await eventually(timeout: 10) { await Self.refused(gw, "sip_banned") > banned },
                "the source's datagrams are dropped unread")
            #expect(!late.events.contains { if case .provisional = $0 { true } else { false } }, "\(late.events)")
            #expect(third.end == nil && late.end == nil, "no answer at all")
            #expect(try await gw.connection().sessions().isEmpty)
            #expect(!gw.printed.contains(Self.password) && !gw.printed.contains("guess-"), "\(gw.printed)")
        }

        /// INVITEs without credentials from a source that may authenticate: a stateless 401
        /// each (no transaction, no call) up to the untrusted rate, then a ban.
        @Test func anUnauthenticatedFloodStaysStatelessAndRateLimited() async throws {
            let gw = try await Self.gateway(
                algorithms: ["SHA-256", "MD5"], config: "{ sip: { requestsPerSecond: 10 } }")
            defer { gw.stop() }
            let probe = try UDPProbe()
            let sent = 40
            let began = ContinuousClock.now
            for _ in 0..<sent {
                probe.send(HostileTrafficTests.request("INVITE", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            }
            // Every INVITE is accounted for: challenged, or dropped over the rate or banned.
            var counts: [Int] = []
            #expect(
                await eventually(timeout: 10) {
                    counts = []
                    for what in ["sip_auth_required", "sip_rate_limited", "sip_banned"] {
                        counts.append(await Self.refused(gw, what))
                    }
                    return counts.reduce(0, +) == sent
                }, "required, limited, banned: \(counts)")
            let challenged = await Self.refused(gw, "sip_auth_required")
            // A bucket of 10 that refills at 10 a second: a loaded machine that spreads the
            // 40 over more than 100 ms rightly lets one more in per 100 ms.
            let spread = (ContinuousClock.now - began) / .milliseconds(100)
            #expect(
                (1...(10 + Int(spread))).contains(challenged),
                "\(challenged) challenged at 10 requests per second, the 40 handled within \(spread / 10) s")
            var answers: [SIPMessage] = []
            while let bytes = await probe.receive(timeout: 0), let m = try? SIPMessage.parse(bytes) {
                answers.append(m)
            }
            #expect(answers.count == challenged)
            for a in answers {
                #expect(a.statusCode == 401)
                #expect(a.values(.wwwAuthenticate).isEmpty == false)
                #expect(
                    a.headers.filter { $0.name == .wwwAuthenticate }.map { $0.value.contains("algorithm=SHA-256") } == [
                        true, false
                    ])
            }
            #expect(await Self.gauge(gw, "irisgw_sip_transactions_active") == 0, "a challenge opens no transaction")
            #expect(try await gw.connection().sessions().isEmpty)
        }

        /// A source outside the authenticating trunk's allowFrom is not challenged: silence, as
        /// for any unknown source, and OPTIONS from a source that may authenticate too.
        @Test func sourcesNoTrunkLetsAuthenticateGetSilence() async throws {
            let gw = try await Self.gateway(algorithms: ["SHA-256"], allowFrom: ["10.0.0.0/8"])
            defer { gw.stop() }
            let probe = try UDPProbe()
            probe.send(HostileTrafficTests.request("INVITE", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            probe.send(HostileTrafficTests.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_unknown_source") == 2 })
            #expect(await probe.receive(timeout: 0) == nil)
            #expect(await Self.refused(gw, "sip_auth_required") == 0)
        }
    }
}
