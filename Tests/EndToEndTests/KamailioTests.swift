import Foundation
import Glibc
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

/// Addresses on lo that keep the roles apart: the cfg tells a node from a carrier by address,
/// and a trunk's `allowFrom` must name the carrier, not Kamailio.
enum ClusterHosts {
    static let carrier = "127.0.0.2"
    static let kamailio = "127.0.0.3"
    static let stranger = "127.0.0.4"
}

/// SIPp scenarios for a carrier that calls through Kamailio: in-dialog requests follow the
/// route set Kamailio record-routed (`[routes]`, `[next_url]`), as a real carrier's do.
enum RoutedCallerScenarios {
    private static let head = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"

    private static func request(_ method: String, cseq: Int, sdp: Bool = false, inDialog: Bool) -> String {
        var lines = [
            inDialog ? "\(method) [next_url] SIP/2.0" : "\(method) sip:[service]@[remote_ip]:[remote_port] SIP/2.0",
            "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]"
        ]
        if inDialog { lines.append("[routes]") }
        lines += [
            "From: \"PSTN\" <sip:+15559876543@[local_ip]:[local_port]>;tag=[pid]r[call_number]",
            "To: <sip:[service]@[remote_ip]:[remote_port]>" + (inDialog ? "[peer_tag_param]" : ""),
            "Call-ID: [call_id]", "CSeq: \(cseq) \(method)", "Contact: <sip:+15559876543@[local_ip]:[local_port]>",
            "Max-Forwards: 70"
        ]
        lines +=
            sdp
            ? ["Content-Type: application/sdp", "Content-Length: [len]", "", CallerScenarios.sdp()]
            : [
                "Content-Length: 0", ""
            ]
        return "  <send\(method == "ACK" ? "" : " retrans=\"500\"")><![CDATA[\n" + lines.joined(separator: "\n")
            + "\n]]></send>\n"
    }

    /// INVITE, 180, 200 (learning the route set), ACK, `talkMs` of media, BYE, 200.
    static func answered(talkMs: Int) -> String {
        head + "<scenario name=\"routed-caller\">\n" + request("INVITE", cseq: 1, sdp: true, inDialog: false)
            + "  <recv response=\"100\" optional=\"true\"/>\n  <recv response=\"180\"/>\n"
            + "  <recv response=\"200\" rtd=\"true\" rrs=\"true\"/>\n" + request("ACK", cseq: 1, inDialog: true)
            + "  <pause milliseconds=\"\(talkMs)\"/>\n" + request("BYE", cseq: 2, inDialog: true)
            + "  <recv response=\"200\"/>\n</scenario>\n"
    }
}

extension GatewaySuites {
    /// SIP through Kamailio (`cluster/kamailio.cfg`): real Kamailio, real gateways, SIPp and
    /// the carrier simulator as carriers on their own addresses of lo.
    @Suite(
        .enabled(if: Kamailio.isInstalled && SIPp.isInstalled, "needs kamailio and SIPp"),
        .timeLimit(.minutes(3)))
    struct KamailioTests {
        static let did = "+15550001000"

        /// `serve.json5` for a node behind Kamailio.
        static func nodeConfig(_ kamailioPort: Int?, extra: String = "") -> String {
            let edge = kamailioPort.map { "edgeProxy: \"sip:\(ClusterHosts.kamailio):\($0)\"," } ?? ""
            return "{ sip: { trustedProxies: [\"\(ClusterHosts.kamailio)\"], \(edge) \(extra) } }"
        }

        /// A trunk whose carrier is on `ClusterHosts.carrier`, inbound from there only.
        static func trunk(carrierPort: Int? = nil) -> GatewayProcess.Profile {
            var p = GatewayProcess.Profile()
            p.allowFrom = ["\(ClusterHosts.carrier)/32"]
            if let carrierPort { p.proxyURIs = ["sip:\(ClusterHosts.carrier):\(carrierPort);transport=udp"] }
            return p
        }

        /// SIPp on `host` calling through Kamailio with `xml`.
        static func caller(
            _ k: Kamailio, _ xml: String, host: String = ClusterHosts.carrier, transport: SIPTransportProtocol = .udp,
            extra: [String] = []
        ) throws -> SIPp {
            try SIPp(
                .inline(name: "caller", xml: xml), remote: k.peer(transport), transport: transport, timeout: 40,
                arguments: ["-s", did, "-i", host] + extra)
        }

        /// The Kamailio port a node names must be known before the node starts, and the node's
        /// port before Kamailio starts: a port for Kamailio first, then the node, then Kamailio on it.
        static func nodeBehindKamailio(
            profiles: [GatewayProcess.Profile], environment: [String: String] = [:], extra: String = ""
        ) async throws -> (GatewayProcess, Kamailio) {
            let port = try freePort()
            let gw = try await GatewayProcess(
                profiles: profiles, environment: environment, config: nodeConfig(port, extra: extra))
            let k = try await Kamailio(nodes: [gw.sipPeer], host: ClusterHosts.kamailio, port: port)
            guard await k.waitForNode(port: gw.sipPort, up: true) else {
                k.stop()
                throw SocketError("kamailio never saw the node up: \(k.output.suffix(2000))", code: ETIMEDOUT)
            }
            return (gw, k)
        }

        @Test func outboundCallLeavesThroughKamailioWithAudio() async throws {
            let sim = try await CarrierSimProcess(arguments: ["--listen", "\(ClusterHosts.carrier):0"])
            defer { sim.stop() }
            let (gw, k) = try await Self.nodeBehindKamailio(profiles: [Self.trunk(carrierPort: sim.port)])
            defer { k.stop() }
            defer { gw.stop() }
            // +15550100001 echoes: our 440 Hz comes back through Kamailio and the carrier.
            var roomId: String?
            let (rec, session) = try await GatewaySuites.GatewayOutboundTests.call(
                gw, target: "+15550100001", source: .tone(hz: 440, amplitude: 0.3)
            ) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sim.lines)\n\(k.output.suffix(2000))")
                var level = 0.0
                _ = await eventually(timeout: 5) {
                    level = session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.5)
                    return level > 0.3
                }
                #expect(level > 0.3, "440 Hz level \(level)")
                roomId = rec.events.first?.roomId
                let closed = try await closeAndWaitForTheTrace(session, rec, room: roomId ?? "")
                #expect(closed)
            }
            #expect(rec.ended?.reason == .completed, "\(rec.trace)")
            let trace = try await session.connection.sipTrace(roomId: try #require(roomId)).messages
            let kamailio = "\(ClusterHosts.kamailio):\(k.port)"
            // Every message went to or came from Kamailio: the carrier saw only its address.
            #expect(!trace.isEmpty && trace.allSatisfy { $0.remote == kamailio }, "\(trace.map(\.remote))")
            let invite = try #require(trace.first { $0.direction == "sent" && $0.firstLine.hasPrefix("INVITE ") })
            #expect(invite.firstLine.contains("@\(ClusterHosts.carrier):\(sim.port)"), "\(invite.firstLine)")
            #expect(invite.text.contains("Route: <sip:\(kamailio);lr>"), "\(invite.text)")
            // The carrier answered through Kamailio, which record-routed; the BYE followed that route.
            let ok = try #require(
                trace.first {
                    $0.direction == "received" && $0.text.contains("CSeq: 1 INVITE")
                        && $0.firstLine.hasPrefix("SIP/2.0 200")
                })
            #expect(ok.text.contains("Record-Route: <sip:\(kamailio);lr"), "\(ok.text)")
            let bye = try #require(trace.first { $0.direction == "sent" && $0.firstLine.hasPrefix("BYE ") })
            #expect(bye.text.contains("Route: <sip:\(kamailio);lr"), "\(bye.text)")
        }

        @Test func inboundCallMatchesTheTrunkByTheCarriersRealSource() async throws {
            let (gw, k) = try await Self.nodeBehindKamailio(profiles: [Self.trunk()])
            defer { k.stop() }
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let sipp = try Self.caller(k, RoutedCallerScenarios.answered(talkMs: 4000), extra: ["-rtp_echo"])
            defer { sipp.stop() }
            let n = try #require(await listener.next(timeout: 15), "\(sipp.report)\n\(k.output.suffix(2000))")
            // Kamailio's header is ours, not the carrier's: the app does not see it.
            #expect(n.carrier?.headers?["X-Irisgw-Source"] == nil, "\(String(describing: n.carrier))")
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 600, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            var level = 0.0
            _ = await eventually(timeout: 4) {
                level = session.stream.leg.toneLevel(hz: 600, lastSeconds: 0.5)
                return level > 0.3
            }
            #expect(level > 0.3, "600 Hz level \(level)")
            // The caller's BYE reaches the node through Kamailio and its 200 comes back.
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.trace)")
            let trace = try await session.connection.sipTrace(roomId: n.roomid!).messages
            #expect(trace.allSatisfy { $0.remote == "\(ClusterHosts.kamailio):\(k.port)" }, "\(trace.map(\.remote))")
        }

        /// Kamailio is trusted, yet a carrier address outside `allowFrom` calling through it is
        /// refused: the node judges the source Kamailio names.
        @Test func carrierOutsideAllowFromIsRefusedThroughKamailio() async throws {
            let (gw, k) = try await Self.nodeBehindKamailio(
                profiles: [Self.trunk()], extra: "answerUnknownSources: true,")
            defer { k.stop() }
            defer { gw.stop() }
            let sipp = try Self.caller(
                k, CallerScenarios.rejected(403, ring: false), host: ClusterHosts.stranger)
            defer { sipp.stop() }
            #expect(await sipp.waitForExit(timeout: 20) == 0, "\(sipp.report)\n\(k.output.suffix(2000))")
        }

        /// A carrier on TCP: Kamailio takes it on TCP, hands it to the node on UDP, and names
        /// the carrier's TCP source; the trunk matches it and the app's answer goes back.
        @Test func carrierOverTCPReachesTheNode() async throws {
            let (gw, k) = try await Self.nodeBehindKamailio(profiles: [Self.trunk()])
            defer { k.stop() }
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let sipp = try Self.caller(k, CallerScenarios.rejected(486), transport: .tcp)
            defer { sipp.stop() }
            let n = try #require(await listener.next(timeout: 15), "\(sipp.report)\n\(k.output.suffix(2000))")
            let trace = try await gw.connection().sipTrace(roomId: n.roomid!).messages
            let invite = try #require(trace.first { $0.firstLine.hasPrefix("INVITE ") })
            #expect(invite.transport == "UDP" && invite.remote == "\(ClusterHosts.kamailio):\(k.port)")
            #expect(
                invite.text.contains("X-Irisgw-Source: \(ClusterHosts.carrier):")
                    && invite.text.contains(";transport=tcp"),
                "\(invite.text)")
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: true)
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
        }

        /// A forged `X-Irisgw-Source` sent straight to a node from an address that is no
        /// trusted proxy changes nothing: the source stays the sender's, outside `allowFrom`.
        @Test func forgedSourceHeaderFromAnUntrustedAddressIsIgnored() async throws {
            let gw = try await GatewayProcess(
                profiles: [Self.trunk()], config: Self.nodeConfig(nil, extra: "answerUnknownSources: true,"))
            defer { gw.stop() }
            let forged = CallerScenarios.rejected(403, ring: false).replacingOccurrences(
                of: "Max-Forwards: 70\nContent-Type",
                with: "Max-Forwards: 70\nX-Irisgw-Source: \(ClusterHosts.carrier):5060;transport=udp\nContent-Type")
            #expect(forged.contains("X-Irisgw-Source"))
            let sipp = try SIPp(
                .inline(name: "forger", xml: forged), remote: gw.sipPeer, timeout: 30,
                arguments: ["-s", Self.did, "-i", ClusterHosts.stranger])
            defer { sipp.stop() }
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
        }

        @Test func inboundDigestAuthWorksBehindKamailio() async throws {
            var profile = GatewaySuites.GatewayInboundAuthTests.profile(
                algorithms: ["MD5"], allowFrom: ["\(ClusterHosts.carrier)/32"])
            profile.name = "trunk"
            let (gw, k) = try await Self.nodeBehindKamailio(
                profiles: [profile],
                environment: ["CARRIER_IN_PASSWORD": GatewaySuites.GatewayInboundAuthTests.password]
            )
            defer { k.stop() }
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            // Kamailio answers 100 Trying before the node's 401.
            let xml = GatewaySuites.GatewayInboundAuthTests.authenticatingCaller(
                password: GatewaySuites.GatewayInboundAuthTests.password, outcome: 603
            ).replacingOccurrences(
                of: "<recv response=\"401\" auth=\"true\"/>",
                with: "<recv response=\"100\" optional=\"true\"/>\n  <recv response=\"401\" auth=\"true\"/>")
            #expect(xml.contains("<recv response=\"100\" optional=\"true\"/>\n  <recv response=\"401\""))
            let sipp = try Self.caller(k, xml)
            defer { sipp.stop() }
            let n = try #require(await listener.next(timeout: 15), "\(sipp.report)\n\(k.output.suffix(2000))")
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: false)
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
        }

        /// Node A full (its one inbound call rings) answers 503: Kamailio tries node B. Node
        /// A killed: the probes mark it down, and calls go to B.
        @Test func failoverOn503AndOnADeadNode() async throws {
            var full = Self.trunk()
            full.inboundMaxCalls = 1
            let a = try await GatewayProcess(profiles: [full], config: Self.nodeConfig(nil))
            defer { a.stop() }
            let b = try await GatewayProcess(profiles: [Self.trunk()], config: Self.nodeConfig(nil))
            defer { b.stop() }
            // A's one inbound slot: a call straight from the carrier that rings until cancelled.
            let aListener = try IrisNotificationListener(connection: try a.connection(), routingId: "alice")
            defer { aListener.close() }
            let holder = try SIPp(
                .inline(name: "holder", xml: CallerScenarios.cancels(afterMs: 60_000)), remote: a.sipPeer,
                timeout: 90, arguments: ["-s", Self.did, "-i", ClusterHosts.carrier])
            defer { holder.stop() }
            #expect(await aListener.next(timeout: 15) != nil, holder.report)

            let k = try await Kamailio(nodes: [a.sipPeer, b.sipPeer], host: ClusterHosts.kamailio)
            defer { k.stop() }
            #expect(await k.waitForNode(port: a.sipPort, up: true), "\(k.output.suffix(2000))")
            #expect(await k.waitForNode(port: b.sipPort, up: true), "\(k.output.suffix(2000))")
            let bListener = try IrisNotificationListener(connection: try b.connection(), routingId: "alice")
            defer { bListener.close() }
            // Round-robin sends one of two calls to A first; both end on B.
            func callLandsOnB() async throws {
                let sipp = try Self.caller(k, CallerScenarios.rejected(486))
                defer { sipp.stop() }
                let n = try #require(await bListener.next(timeout: 15), "\(sipp.report)\n\(k.output.suffix(2000))")
                try await IrisRtcAudioSession.reject(
                    connection: try b.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: true)
                #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
            }
            try await callLandsOnB()
            try await callLandsOnB()
            #expect(k.output.contains("failover "), "\(k.output.suffix(2000))")

            _ = await a.signal(SIGKILL, timeout: 10)
            #expect(await k.waitForNode(port: a.sipPort, up: false), "\(k.output.suffix(2000))")
            try await callLandsOnB()
            try await callLandsOnB()
        }

        /// SIGTERM drains a node: its calls go on, and its 503 to Kamailio's OPTIONS probe
        /// takes it out of rotation meanwhile.
        @Test func drainingNodeIsTakenOutByTheProbe() async throws {
            let gw = try await GatewayProcess(
                profiles: [Self.trunk()], extraArguments: ["--drain-timeout", "30"], config: Self.nodeConfig(nil))
            defer { gw.stop() }
            // A call in progress keeps the draining node running.
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let holder = try SIPp(
                .inline(name: "holder", xml: CallerScenarios.cancels(afterMs: 60_000)), remote: gw.sipPeer,
                timeout: 90, arguments: ["-s", Self.did, "-i", ClusterHosts.carrier])
            defer { holder.stop() }
            let n = try #require(await listener.next(timeout: 15), holder.report)
            let k = try await Kamailio(nodes: [gw.sipPeer], host: ClusterHosts.kamailio)
            defer { k.stop() }
            #expect(await k.waitForNode(port: gw.sipPort, up: true), "\(k.output.suffix(2000))")
            let exit = Task.detached { await gw.signal(SIGTERM, timeout: 40) }
            #expect(await gw.waitForOutput(containing: "draining", timeout: 10), "\(gw.printed)")
            #expect(await k.waitForNode(port: gw.sipPort, up: false), "\(k.output.suffix(2000))")
            #expect(gw.isRunning)
            // The last call ends (the app rejects it): the drained node exits.
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: true)
            #expect(await exit.value == 0)
        }

        @Test func registerThroughTheEdgeProxyNamesKamailioInContact() async throws {
            let registrar = try await SIPp.listening(
                .inline(name: "registrar", xml: RegistrationAndAuthTests.registrar), timeout: 30,
                arguments: ["-i", ClusterHosts.carrier])
            defer { registrar.stop() }
            var profile = Self.trunk(carrierPort: registrar.port)
            profile.register = true
            profile.auth = ("gw", "REG_PASSWORD")
            let (gw, k) = try await Self.nodeBehindKamailio(
                profiles: [profile], environment: ["REG_PASSWORD": "s3cret"])
            defer { k.stop() }
            defer { gw.stop() }
            #expect(await eventually(timeout: 15) { registrar.received("REGISTER ") >= 3 }, registrar.report)
            let kamailio = "\(ClusterHosts.kamailio):\(k.port)"
            #expect(registrar.messages.contains("Contact: <sip:irisgw@\(kamailio)>"), registrar.report)
            // It came through Kamailio (its Via on top), toward the registrar's own URI.
            #expect(registrar.messages.contains("Via: SIP/2.0/UDP \(kamailio);branch="), registrar.report)
            #expect(
                registrar.messages.contains("REGISTER sip:\(ClusterHosts.carrier):\(registrar.port)"), registrar.report)
            #expect(await gw.signal(SIGINT) == 0)
            #expect(await registrar.waitForExit(timeout: 10) == 0, registrar.report)
        }
    }
}
