import Foundation
import Glibc
import IrisClient
import SIP
import TestSupport
import Testing

/// What an attacker tried against a real `irisgw serve`: each finding of issue 9 as a test.
/// Every test ends with the process alive and the API answering.
extension GatewaySuites {
    @Suite struct HostileTrafficTests {
        static func request(
            _ method: String, callID: String = UUID().uuidString,
            branch: String = "z9hG4bK" + UUID().uuidString.prefix(12),
            port: Int, probe: Int, userAgent: String? = nil, to: String = "sip:+15550001000@127.0.0.1"
        ) -> [UInt8] {
            var text =
                "\(method) \(to) SIP/2.0\r\n"
                + "Via: SIP/2.0/UDP 127.0.0.1:\(probe);branch=\(branch)\r\n"
                + "From: <sip:+15559876543@127.0.0.1>;tag=f\(probe)\r\n"
                + "To: <\(to)>\r\n"
                + "Call-ID: \(callID)\r\n"
                + "CSeq: 1 \(method)\r\n"
                + "Contact: <sip:caller@127.0.0.1:\(probe)>\r\n"
                + "Max-Forwards: 70\r\n"
            if let userAgent { text += "User-Agent: \(userAgent)\r\n" }
            return Array((text + "Content-Length: 0\r\n\r\n").utf8)
        }

        /// `/metrics`' `irisgw_refused_total{what="<what>"}`, 0 when absent.
        static func refused(_ gw: GatewayProcess, _ what: String) async -> Int {
            guard
                let r = try? await HTTPClient(
                    baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey]
                )
                .request(method: "GET", path: "/metrics", timeout: 5)
            else { return -1 }
            let prefix = "irisgw_refused_total{what=\"\(what)\"} "
            return String(decoding: r.body, as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
        }

        static func status(_ bytes: [UInt8]?) -> Int? {
            guard let bytes, let m = try? SIPMessage.parse(bytes) else { return nil }
            return m.statusCode
        }

        /// The process is alive, /healthz says ok, the API answers.
        static func stillServes(_ gw: GatewayProcess) async throws {
            #expect(gw.isRunning)
            let r = try await HTTPClient(baseURL: gw.apiURL).request(method: "GET", path: "/healthz", timeout: 5)
            #expect(r.status == 200)
            #expect(try await gw.connection().sessions().isEmpty)
        }

        /// And a normal call through the trunk connects and ends.
        static func stillCalls(_ gw: GatewayProcess, _ sipp: SIPp) async throws {
            try await stillServes(gw)
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            try await session.close()
            #expect(await rec.waitFor { $0.contains { $0.event == .onSessionEnded } })
            #expect(rec.ended?.reason == .completed, "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func theDataDirectoryAndItsFilesArePrivate() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            func mode(_ path: String) -> mode_t? {
                var st = stat()
                return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
            }
            #expect(mode(gw.dataDir) == 0o700)
            for file in ["calls.sqlite", "calls.sqlite-wal", "calls.sqlite-shm", "api-key", "room-token-secret"] {
                #expect(
                    mode(gw.dataDir + "/" + file) == 0o600,
                    "\(file): \(String(mode(gw.dataDir + "/" + file) ?? 0, radix: 8))")
            }
        }

        @Test func udpAndTCPShareThePortTheOSPicked() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let ports = gw.lines.filter { $0.hasPrefix("listening sip ") }.compactMap {
                $0.split(separator: ":").last.flatMap { Int($0) }
            }
            #expect(ports.count == 2 && Set(ports).count == 1, "\(gw.lines)")
        }

        @Test func aNulInCallIDIsAMalformedMessage() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let probe = try UDPProbe()
            var bytes = Self.request("OPTIONS", callID: "nul\u{0}@x", port: gw.sipPort, probe: probe.port)
            probe.send(bytes, to: gw.sipPort)
            #expect(Self.status(await probe.receive(timeout: 5)) == 400)
            // A version-less Server header on what we do answer.
            bytes = Self.request("OPTIONS", port: gw.sipPort, probe: probe.port)
            probe.send(bytes, to: gw.sipPort)
            let answer = try #require(await probe.receive(timeout: 5).flatMap { try? SIPMessage.parse($0) })
            #expect(answer.statusCode == 200)
            #expect(answer[.server] == "irisgw")
            try await Self.stillServes(gw)
        }

        /// A source outside every allowFrom learns nothing: no 100, no 403, no OPTIONS 200.
        @Test func unknownSourcesGetNoAnswer() async throws {
            var profile = GatewayProcess.Profile()
            profile.allowFrom = ["10.0.0.0/8"]
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let probe = try UDPProbe()
            for method in ["OPTIONS", "INVITE", "REGISTER"] {
                probe.send(Self.request(method, port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            }
            // The gateway answers (or not) in the loop turn that counts the drop: once all three
            // are counted, anything it sent is already in our socket.
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_unknown_source") == 3 })
            #expect(await probe.receive(timeout: 0) == nil)
            #expect(try await gw.connection().sessions().isEmpty)
        }

        /// A scanner from an unknown source is dropped and banned: its next request, whatever
        /// it claims to be, is not even parsed.
        @Test func scannersAreDroppedAndBanned() async throws {
            var profile = GatewayProcess.Profile()
            profile.allowFrom = ["10.0.0.0/8"]
            let gw = try await GatewayProcess(profiles: [profile], config: "{ sip: { answerUnknownSources: true } }")
            defer { gw.stop() }
            let probe = try UDPProbe()
            probe.send(
                Self.request("OPTIONS", port: gw.sipPort, probe: probe.port, userAgent: "friendly-scanner"),
                to: gw.sipPort)
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_scanner") == 1 })
            probe.send(Self.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_banned") == 1 })
            #expect(await probe.receive(timeout: 0) == nil)
            try await Self.stillServes(gw)
        }

        /// From a trunk's address the scanner request is dropped, but the address is not
        /// banned: a spoofed datagram must not cut the carrier off.
        @Test func aScannerNameFromATrunkAddressDoesNotBanTheTrunk() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let probe = try UDPProbe()
            probe.send(
                Self.request("OPTIONS", port: gw.sipPort, probe: probe.port, userAgent: "sipvicious"), to: gw.sipPort)
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_scanner") == 1 })
            probe.send(Self.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            #expect(Self.status(await probe.receive(timeout: 5)) == 200)
            #expect(await Self.refused(gw, "sip_banned") == 0)
        }

        /// Past the cap on open server transactions, a trusted source gets 503 + Retry-After
        /// and no transaction is opened.
        @Test func serverTransactionsAreCapped() async throws {
            let gw = try await GatewayProcess(profiles: [.init()], config: "{ sip: { maxServerTransactions: 20 } }")
            defer { gw.stop() }
            let probe = try UDPProbe()
            for _ in 0..<30 { probe.send(Self.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort) }
            var statuses: [Int] = []
            while statuses.count < 30, let bytes = await probe.receive(timeout: 5) {
                if let s = Self.status(bytes) { statuses.append(s) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 20, "\(statuses)")
            #expect(statuses.filter { $0 == 503 }.count == 10, "\(statuses)")
            #expect(await Self.refused(gw, "sip_transactions_full") == 10)
            try await Self.stillServes(gw)
        }

        /// An untrusted source over the request rate is banned; a trunk over it only has the
        /// excess dropped (its calls must go on).
        @Test func floodsFromOneSourceAreCut() async throws {
            var profile = GatewayProcess.Profile()
            profile.allowFrom = ["10.0.0.0/8"]
            let gw = try await GatewayProcess(
                profiles: [profile],
                config: "{ sip: { answerUnknownSources: true, requestsPerSecond: 20, banSec: 60 } }")
            defer { gw.stop() }
            let probe = try UDPProbe()
            for _ in 0..<100 {
                probe.send(Self.request("OPTIONS", port: gw.sipPort, probe: probe.port), to: gw.sipPort)
            }
            #expect(
                await eventually(timeout: 10) {
                    await Self.refused(gw, "sip_rate_limited") + Self.refused(gw, "sip_banned") >= 79
                })
            var answered = 0
            while await probe.receive(timeout: 1) != nil { answered += 1 }
            #expect(answered <= 21, "\(answered) answers to a flood of 100")
            #expect(answered >= 1)
            try await Self.stillServes(gw)
        }

        /// An INVITE flood from a trunk to a routed DID used to fill every session slot with
        /// ringing calls: the trunk's inbound budget answers the excess 503 + Retry-After, and
        /// the apps can still place calls out.
        @Test func anInboundFloodCannotStarveOutboundCalls() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer()) { profile in
                profile.inboundCallsPerSecond = 3
                profile.inboundMaxCalls = 3
            }
            defer { gw.stop(); sipp.stop() }
            let probe = try UDPProbe()
            for _ in 0..<20 { probe.send(Self.request("INVITE", port: gw.sipPort, probe: probe.port), to: gw.sipPort) }
            var finals: [Int] = []
            while finals.count < 17, let bytes = await probe.receive(timeout: 5) {
                if let m = try? SIPMessage.parse(bytes), let code = m.statusCode, code >= 200 {
                    finals.append(code)
                    #expect(code != 503 || m[.retryAfter] != nil)
                }
            }
            #expect(finals.filter { $0 == 503 }.count == 17, "\(finals)")
            #expect(try await gw.connection().sessions().count == 3)
            // An app's call out still goes through.
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            try await session.close()
            #expect(await rec.waitFor { $0.contains { $0.event == .onSessionEnded } })
            #expect(
                await Self.refused(gw, "inbound_trunk_concurrency") + (await Self.refused(gw, "inbound_trunk_rate"))
                    == 17)
        }

        /// With few file descriptors (here 300), SIP over TCP takes at most half of them, so
        /// silent connections cannot take the sockets calls and the API need: a call still
        /// completes while 200 connections are held open.
        @Test func tcpPeersCannotTakeTheLastDescriptors() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(),
                config: "{ sip: { tcp: { maxConnectionsPerSource: 1000, messageTimeoutSec: 60 } } }",
                launcher: ["/usr/bin/prlimit", "--nofile=300:300", "--"])
            defer { gw.stop(); sipp.stop() }
            let peers = (0..<200).compactMap { _ in TCPPeer(port: gw.sipPort) }
            defer { peers.forEach { $0.close() } }
            #expect(peers.count == 200)
            #expect(await eventually(timeout: 10) { await Self.refused(gw, "sip_tcp_too_many_connections") == 50 })
            #expect(await Self.refused(gw, "sip_tcp_too_many_connections") == 50)
            try await Self.stillCalls(gw, sipp)
        }

        /// RTP/SAVP with a=crypto means SRTP is mandatory (RFC 4568): we cannot honour it, so
        /// the answer is 488 with Warning 302, never a 200 with RTP/AVP (RFC 3264 §6).
        @Test func anSRTPOnlyOfferIsRefused() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let probe = try UDPProbe()
            let sdp =
                "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/SAVP 0\r\n"
                + "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\na=rtpmap:0 PCMU/8000\r\n"
            var text = String(decoding: Self.request("INVITE", port: gw.sipPort, probe: probe.port), as: UTF8.self)
            text =
                text.replacingOccurrences(
                    of: "Content-Length: 0\r\n",
                    with: "Content-Type: application/sdp\r\nContent-Length: \(sdp.utf8.count)\r\n") + sdp
            probe.send(Array(text.utf8), to: gw.sipPort)
            var final: SIPMessage?
            while final == nil, let bytes = await probe.receive(timeout: 5) {
                if let m = try? SIPMessage.parse(bytes), let code = m.statusCode, code >= 200 { final = m }
            }
            #expect(final?.statusCode == 488)
            #expect(final?[SIPHeaderName("Warning")]?.hasPrefix("302 ") == true, "\(String(describing: final))")
            #expect(try await gw.connection().sessions().isEmpty)
        }

        /// Silent TCP connections, one source over its cap, and non-SIP bytes: the gateway
        /// closes them, counts them, and keeps serving.
        @Test func tcpPeersAreBounded() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(),
                config: "{ sip: { tcp: { maxConnectionsPerSource: 10, messageTimeoutSec: 1 } } }")
            defer { gw.stop(); sipp.stop() }
            let silent = (0..<15).compactMap { _ in TCPPeer(port: gw.sipPort) }
            defer { silent.forEach { $0.close() } }
            #expect(silent.count == 15)
            // 5 over the per-source cap are closed at once, the 10 others after the message timeout.
            for peer in silent { #expect(await peer.waitClosed(timeout: 10), "a silent connection stayed open") }
            #expect(await Self.refused(gw, "sip_tcp_too_many_from_source") == 5)
            #expect(await Self.refused(gw, "sip_tcp_message_timeout") == 10)

            // A TLS ClientHello on the SIP port: closed at once, not after a timeout.
            let tls = try #require(TCPPeer(port: gw.sipPort))
            defer { tls.close() }
            tls.send(
                [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03] + [UInt8](repeating: 0xab, count: 64)
            )
            #expect(await tls.waitClosed(timeout: 10))
            #expect(await Self.refused(gw, "sip_tcp_not_sip") == 1)

            // SIP over TCP still works.
            let sip = try #require(TCPPeer(port: gw.sipPort))
            defer { sip.close() }
            sip.send(Self.request("OPTIONS", port: gw.sipPort, probe: 5060))
            let reply = await sip.receive(timeout: 5)
            #expect(reply.map { String(decoding: $0, as: UTF8.self).hasPrefix("SIP/2.0 200") } == true)
            try await Self.stillCalls(gw, sipp)
        }
    }
}

/// A plain TCP client socket to 127.0.0.1, for connections a SIP stack would never make.
final class TCPPeer: @unchecked Sendable {
    private let fd: Int32

    init?(port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var sa = loopback(port: port)
        let rc = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            Glibc.close(fd)
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Bytes that arrive within `timeout`, or nil.
    func receive(timeout: Double) async -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var got: [UInt8]?
        _ = await eventually(timeout: timeout) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { got = Array(buffer[0..<n]) }
            return got != nil
        }
        return got
    }

    /// True once the other side has closed the connection (EOF or reset), within `timeout`.
    func waitClosed(timeout: Double) async -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        return await eventually(timeout: timeout) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }

    func close() { Glibc.close(fd) }
}
