import Foundation
import TestSupport
import Testing

@testable import SIP

/// REGISTER, OPTIONS keepalive and server-side digest against SIPp, over real UDP.
@Suite(.timeLimit(.minutes(2)))
struct RegistrationAndAuthTests {
    /// A registrar: 401 with a digest challenge (no qop: SIPp's `verifyauth` checks only the
    /// RFC 2069 form; qop=auth is covered by the unit tests), then 200 granting 2 s; the refresh (due
    /// after 1 s) gets 200; the unregister (Expires: 0) gets 200.
    static let registrar = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="registrar with digest, refresh and unregister">
          <recv request="REGISTER"/>
          <send><![CDATA[
        SIP/2.0 401 Unauthorized
        [last_Via:]
        [last_From:]
        [last_To:];tag=reg[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        WWW-Authenticate: Digest realm="sipp.test", nonce="4f1c2a", algorithm=MD5
        Content-Length: 0

        ]]></send>
          <recv request="REGISTER">
            <action>
              <ereg regexp="Authorization: Digest .*username=\"gw\".*response=" search_in="msg" check_it="true" assign_to="auth"/>
              <verifyauth assign_to="authvalid" username="gw" password="s3cret"/>
              <log message="authorization: [$auth]"/>
            </action>
          </recv>
          <nop hide="true" test="authvalid" next="good"/>
          <send next="fail"><![CDATA[
        SIP/2.0 403 Wrong Credentials
        [last_Via:]
        [last_From:]
        [last_To:];tag=reg[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <label id="good"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=reg[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        [last_Contact:];expires=2
        Content-Length: 0

        ]]></send>
          <recv request="REGISTER"/>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=reg[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        [last_Contact:];expires=60
        Content-Length: 0

        ]]></send>
          <recv request="REGISTER">
            <action>
              <ereg regexp="Expires: 0" search_in="msg" check_it="true" assign_to="zero"/>
              <log message="unregister: [$zero]"/>
            </action>
          </recv>
          <send><![CDATA[
        SIP/2.0 200 OK
        [last_Via:]
        [last_From:]
        [last_To:];tag=reg[call_number]
        [last_Call-ID:]
        [last_CSeq:]
        Content-Length: 0

        ]]></send>
          <label id="fail"/>
        </scenario>
        """

    /// Starts a registration of `gw@sipp.test` at SIPp; the log collects its states.
    static func register(
        _ agent: TestAgent, at sipp: SIPp, password: String
    ) async -> (LoopBound<RegistrationClient>, StateLog<RegistrationMachine.State>) {
        let states = StateLog<RegistrationMachine.State>()
        let config = RegistrationClient.Configuration(
            registrar: SIPURI(host: "sipp.test"), peer: sipp.peer,
            addressOfRecord: NameAddress(uri: SIPURI(user: "gw", host: "sipp.test")),
            credentials: DigestCredentials(username: "gw", password: password))
        let ua = agent.ua
        // The client stays on the SIP loop: the test reaches it there through a LoopBound.
        let client = await ua.loop.run { () -> LoopBound<RegistrationClient> in
            let c = ua.registration(config)
            c.onStateChange = { states.append($0) }
            c.start()
            return LoopBound(c, loop: ua.loop)
        }
        return (client, states)
    }

    @Test func registersWithDigestRefreshesAndUnregisters() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try SIPp(.inline(name: "registrar", xml: Self.registrar), timeout: 20)
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening())
        let (client, states) = await Self.register(agent, at: sipp, password: "s3cret")
        let ua = agent.ua
        let registered = await eventually(timeout: 5) {
            states.all.contains { if case .registered = $0 { true } else { false } }
        }
        #expect(registered, "\(states.all)\n\(sipp.report)")
        // The refresh is due after half of the 2 s granted.
        #expect(await eventually(timeout: 5) { sipp.received("REGISTER ") >= 3 }, sipp.report)
        await ua.loop.run { client.value.stop() }
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        #expect(await eventually(timeout: 3) { states.all.last == .unregistered }, "\(states.all)")
        #expect(await ua.loop.run { client.value.lastStatus } == 200)
    }

    @Test func wrongPasswordFailsAndBacksOff() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try SIPp(.inline(name: "registrar", xml: Self.registrar), timeout: 15)
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening())
        let (client, states) = await Self.register(agent, at: sipp, password: "wrong")
        let ua = agent.ua
        let failed = await eventually(timeout: 5) {
            states.all.contains { if case .failed(403, _) = $0 { true } else { false } }
        }
        #expect(failed, "\(states.all)\n\(sipp.report)")
        if case .failed(_, let retryAt) = states.all.last {
            // The first backoff is 5 s less at most 20% jitter.
            #expect(retryAt - SIPEventLoop.now() > 2.5)
        }
        await ua.loop.run { client.value.stop() }
    }

    /// OPTIONS keepalive against a peer that answers 200 once, then 503: the state goes up,
    /// then down after two failures (the default hysteresis). The peer is a raw UDP socket
    /// that answers with `SIPMessage.response(to:)`, so the test scripts the sequence exactly.
    @Test func keepaliveReportsUpThenDown() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let peerSocket = try UDPProbe()
        let states = StateLog<OptionsKeepalive.State>()
        let ua = agent.ua
        let peer = SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: peerSocket.port))
        let pinger = await ua.loop.run { () -> LoopBound<KeepaliveClient> in
            let k = ua.keepalive(
                target: SIPURI(host: "127.0.0.1", port: peerSocket.port), peer: peer,
                configuration: OptionsKeepalive.Configuration(interval: 0.1))
            k.onStateChange = { states.append($0) }
            k.start()
            return LoopBound(k, loop: ua.loop)
        }
        defer { ua.loop.execute { pinger.value.stop() } }
        var answered: Set<String> = []
        for status in [200, 503, 503] {
            // A retransmission of an OPTIONS already answered (a busy machine delays our
            // answer past T1) is not the next ping: skip it.
            var options: SIPMessage
            repeat {
                let bytes = try #require(await peerSocket.receive(timeout: 5), "no OPTIONS arrived")
                options = try SIPMessage.parse(bytes)
            } while answered.contains(options.topVia?.branch ?? "")
            answered.insert(options.topVia?.branch ?? "")
            #expect(options.method == "OPTIONS")
            #expect(options.topVia?.rport != nil, "our requests ask for rport (RFC 3581)")
            peerSocket.send(
                SIPMessage.response(to: options, status: status, toTag: "k").serialize(), to: agent.local.address.port)
            if status == 200 {
                #expect(await eventually(timeout: 10) { states.all == [.up] }, "\(states.all)")
            }
        }
        #expect(await eventually(timeout: 10) { states.all == [.up, .down] }, "\(states.all)")
    }

    /// A caller that answers our 401 with credentials (SIPp `[authentication]`), then talks
    /// and hangs up.
    static let authenticatingCaller = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="caller answering a 401">
          <send retrans="500"><![CDATA[
        INVITE sip:gw@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: <sip:carrier@[local_ip]:[local_port]>;tag=[pid]SIPp[call_number]
        To: <sip:gw@[remote_ip]:[remote_port]>
        Call-ID: [call_id]
        CSeq: 1 INVITE
        Contact: <sip:carrier@[local_ip]:[local_port]>
        Max-Forwards: 70
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=- 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio 40000 RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <recv response="100" optional="true"/>
          <recv response="401" auth="true"/>
          <send><![CDATA[
        ACK sip:gw@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: <sip:carrier@[local_ip]:[local_port]>;tag=[pid]SIPp[call_number]
        To: <sip:gw@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 1 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
          <send retrans="500"><![CDATA[
        INVITE sip:gw@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: <sip:carrier@[local_ip]:[local_port]>;tag=[pid]SIPp[call_number]
        To: <sip:gw@[remote_ip]:[remote_port]>
        Call-ID: [call_id]
        CSeq: 2 INVITE
        Contact: <sip:carrier@[local_ip]:[local_port]>
        [authentication username=trunk password=PASSWORD]
        Max-Forwards: 70
        Content-Type: application/sdp
        Content-Length: [len]

        v=0
        o=- 1 1 IN IP4 [local_ip]
        s=-
        c=IN IP4 [local_ip]
        t=0 0
        m=audio 40000 RTP/AVP 0
        a=rtpmap:0 PCMU/8000

        ]]></send>
          <recv response="100" optional="true"/>
          <recv response="180" optional="true"/>
          <recv response="RESPONSE"/>
          <send><![CDATA[
        ACK sip:gw@[remote_ip]:[remote_port] SIP/2.0
        Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
        From: <sip:carrier@[local_ip]:[local_port]>;tag=[pid]SIPp[call_number]
        To: <sip:gw@[remote_ip]:[remote_port]>[peer_tag_param]
        Call-ID: [call_id]
        CSeq: 2 ACK
        Max-Forwards: 70
        Content-Length: 0

        ]]></send>
        </scenario>
        """

    @Test(arguments: [("good-password", true), ("bad-password", false)])
    func callersMustAuthenticate(password: String, accepted: Bool) async throws {
        var config = SIPUserAgentConfiguration()
        // SIPp answers only MD5 challenges (its createAuthHeader refuses SHA-256).
        config.inboundAuthentication = .init(
            realm: "irisgw.test", users: ["trunk": "good-password"], algorithms: [.md5])
        let ua = try SIPUserAgent(configuration: config)
        let local = try #require(ua.start().first)
        defer { ua.shutdown() }
        let endpoint = await ua.loop.run { AnsweringEndpoint(ua: ua, behaviour: .init()) }
        let xml = Self.authenticatingCaller.replacingOccurrences(of: "PASSWORD", with: password)
            .replacingOccurrences(
                of: "<recv response=\"RESPONSE\"/>",
                with: accepted ? "<recv response=\"200\" rrs=\"true\"/>" : "<recv response=\"401\"/>")
        let sipp = try SIPp(.inline(name: "auth-caller", xml: xml), remote: local, timeout: 15)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
        let stats = await ua.loop.run { endpoint.stats }
        #expect(stats.received == (accepted ? 1 : 0))
        #expect(sipp.received("SIP/2.0 401") == (accepted ? 1 : 2), sipp.report)
        #expect(sipp.messages.contains("qop=\"auth\""), sipp.report)
    }

    /// Our own agent calling our own agent: the challenge offers SHA-256 then MD5 (RFC 8760)
    /// and the caller answers SHA-256 with qop=auth.
    @Test func sha256DigestBetweenOurAgents() async throws {
        var config = SIPUserAgentConfiguration()
        config.inboundAuthentication = .init(realm: "irisgw.test", users: ["trunk": "pw"])
        let callee = try SIPUserAgent(configuration: config)
        let calleeAddress = try #require(callee.start().first)
        defer { callee.shutdown() }
        let endpoint = await callee.loop.run { AnsweringEndpoint(ua: callee, behaviour: .init()) }
        let caller = try TestAgent()
        defer { caller.shutdown() }
        let rec = CallRecorder()
        let ua = caller.ua
        await ua.loop.run {
            _ = ua.invite(
                requestURI: SIPURI(user: "gw", host: "127.0.0.1", port: calleeAddress.address.port),
                from: NameAddress(uri: SIPURI(user: "trunk", host: "127.0.0.1")),
                to: NameAddress(uri: SIPURI(user: "gw", host: "127.0.0.1")), peer: calleeAddress,
                sdp: SDP.offer(), credentials: DigestCredentials(username: "trunk", password: "pw"), delegate: rec)
        }
        #expect(await rec.waitFor(.connected), "\(rec.events)")
        let invite = try #require(await callee.loop.run { endpoint.lastInvite })
        let auth = try #require(invite[.authorization])
        #expect(auth.contains("algorithm=SHA-256") && auth.contains("qop=auth"), "\(auth)")
        await ua.loop.run { rec.call?.hangup() }
        #expect(await rec.waitForEnd() == .localHangup)
    }
}

/// `irisgw sip-lint`, the real binary: verdicts, exit status, `--json`.
struct SIPLintCommandTests {
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("irisgw").path
    }

    static func run(_ args: [String]) async throws -> (status: Int32, output: String) {
        let r = try await ChildProcess.run(binary, ["sip-lint"] + args, discardingErrors: true)
        return (r.status, r.output)
    }

    static let corpus = ConformanceCorpus.path("rfc4475")

    @Test(ConformanceCorpus.required) func verdictsAndExitStatus() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary),
            "irisgw not built next to the tests: \(Self.binary)")
        let good = Self.corpus + "/wsinv.sip", bad = Self.corpus + "/badvers.sip"
        let ok = try await Self.run([good])
        #expect(ok.status == 0)
        #expect(ok.output == "\(good): valid\n")
        let mixed = try await Self.run([good, bad])
        #expect(mixed.status == 1)
        #expect(mixed.output.contains("\(bad): invalid: unsupported version SIP/7.0"))
        let missing = try await Self.run(["/nonexistent/file.sip"])
        #expect(missing.status == 1)
        #expect(missing.output.contains("invalid: cannot read file"))
        let usage = try await Self.run([])
        #expect(usage.status == 2)
    }

    /// A NUL in Call-ID is a malformed message: sip-lint said "valid" before.
    @Test func aControlByteInAHeaderIsInvalid() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nul-\(UUID().uuidString.prefix(8)).sip"
        ).path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text =
            "OPTIONS sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP a.example.com;branch=z9hG4bK1\r\n"
            + "From: <sip:alice@example.com>;tag=1\r\nTo: <sip:bob@example.com>\r\nCall-ID: a\u{0}b@x\r\n"
            + "CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
        _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        let result = try await Self.run([file])
        #expect(result.status == 1)
        #expect(result.output.contains("invalid: control byte 0x0"), "\(result.output)")
    }

    @Test(ConformanceCorpus.required) func jsonLines() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary))
        let result = try await Self.run(["--json", Self.corpus + "/wsinv.sip", Self.corpus + "/clerr.sip"])
        #expect(result.status == 1)
        let objects = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 2)
        #expect(objects.first?["valid"] as? Bool == true)
        #expect(objects.first?["message"] as? String == "request INVITE")
        #expect(objects.last?["valid"] as? Bool == false)
        #expect(objects.last?["status"] as? Int == 400)
        #expect((objects.last?["reason"] as? String)?.contains("Content-Length") == true)
    }
}

/// A thread-safe log of state changes reported on the SIP loop.
final class StateLog<S: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [S] = []
    func append(_ s: S) { lock.withLock { items.append(s) } }
    var all: [S] { lock.withLock { items } }
}
