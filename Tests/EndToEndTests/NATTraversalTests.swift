import Foundation
import Gateway
import Glibc
import Media
import SIP
import TestSupport
import Testing

@testable import IrisClient

/// The gateway on a private address behind a 1:1 NAT, SIPp as the carrier on the public
/// side (TestNetwork with `nat: true`): `--sip-advertise` and `--rtp-advertise` name the
/// public address. SIPp checks every message it gets for the public address in Contact, Via
/// and SDP and for the private one nowhere; the app (`irisgw call` / `irisgw answer` beside
/// the gateway) hears its own 440 Hz tone echoed by SIPp through the NAT.
extension GatewaySuites {
    @Suite(.enabled(if: TestNetwork.canMakeNamespaces, TestNetwork.namespacesNeeded)) struct NATTraversalTests {
        final class Setup: @unchecked Sendable {
            let net: TestNetwork
            let directory: URL
            let carrierPort: Int
            var apiURL = ""
            var sipPort = 0

            init() async throws {
                net = try await TestNetwork(nat: true)
                directory = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-nat-\(net.id)")
                carrierPort = try freePort()
                do {
                    try FileManager.default.createDirectory(
                        at: directory.appendingPathComponent("profiles"), withIntermediateDirectories: true)
                    try """
                    { name: "trunk",
                      outbound: { proxies: ["sip:\(net.address(.carrier)):\(carrierPort);transport=udp"], fromDomain: "gw.test", allowedPrefixes: ["+1"] },
                      inbound: { allowFrom: ["\(net.address(.carrier))/32"], routes: [{ did: "+15550001000", routingId: "alice" }] },
                      media: { codecs: ["PCMU"] },
                      sip: { transport: "udp", optionsPingSec: 0 } }
                    """.write(
                        to: directory.appendingPathComponent("profiles/trunk.json5"), atomically: true, encoding: .utf8)
                    let gateway = try net.start(
                        on: .gateway,
                        [
                            GatewayProcess.binary, "serve", "--profiles",
                            directory.appendingPathComponent("profiles").path,
                            "--sip-listen", net.address(.gateway) + ":0", "--sip-advertise", net.publicAddress,
                            "--api-listen", "127.0.0.1:0", "--rtp-host", net.address(.gateway),
                            "--rtp-advertise", net.publicAddress, "--rtp-ports",
                            "20000-21999" /* the test's own namespace: nothing else binds there */,
                            "--data-dir", dataDir, "--drain-timeout", "2"
                        ])
                    let lines = await lines(of: gateway, until: "ready", timeout: 20)
                    apiURL =
                        lines.first { $0.hasPrefix("listening api ") }.map {
                            String($0.dropFirst("listening api ".count))
                        } ?? ""
                    sipPort =
                        lines.first { $0.hasPrefix("listening sip udp ") }.flatMap {
                            $0.split(separator: ":").last.flatMap { Int($0) }
                        } ?? 0
                    guard lines.contains("ready"), !apiURL.isEmpty, sipPort > 0 else {
                        throw SocketError("irisgw serve did not start: \(lines)", code: EINVAL)
                    }
                } catch {
                    close()
                    throw error
                }
            }

            var dataDir: String { directory.appendingPathComponent("data").path }

            /// SIPp in the carrier host, echoing RTP (`-rtp_echo`); its traces in `directory`.
            func carrier(_ name: String, xml: String, port: Int, remote: String? = nil) throws -> ChildProcess {
                let file = directory.appendingPathComponent(name + ".xml")
                try xml.write(to: file, atomically: true, encoding: .utf8)
                let address = net.address(.carrier)
                var args = ["/usr/bin/sipp"] + (remote.map { [$0] } ?? [])
                args += [
                    "-sf", file.path, "-i", address, "-p", String(port), "-mi", address, "-mp",
                    String(try freeMediaPorts()), "-rtp_echo",
                    "-m", "1", "-nostdin", "-timeout", "60s", "-timeout_error", "-trace_err",
                    "-error_file", directory.appendingPathComponent(name + "-errors.log").path,
                    "-trace_msg", "-message_file", directory.appendingPathComponent(name + "-messages.log").path
                ]
                return try net.start(on: .carrier, args)
            }

            func trace(_ name: String) -> String {
                ["errors", "messages"].map {
                    (try? String(contentsOf: directory.appendingPathComponent("\(name)-\($0).log"), encoding: .utf8))
                        ?? ""
                }
                .joined(separator: "\n--- messages ---\n").suffix(6000).description
            }

            /// The app beside the gateway: `irisgw call` or `irisgw answer` with a 440 Hz tone,
            /// recording what comes back, holding at 1.5 s and resuming at 3 s.
            func app(_ arguments: [String], hangupAfter: Double) throws -> (process: ChildProcess, recording: String) {
                let recording = directory.appendingPathComponent("\(arguments[0]).wav").path
                let p = try net.start(
                    on: .gateway,
                    [GatewayProcess.binary] + arguments
                        + [
                            "--api", apiURL, "--data-dir", dataDir, "--tone", "440", "--record", recording,
                            "--hold-after", "1.5", "--unhold-after", "3", "--hangup-after", String(hangupAfter),
                            "--json"
                        ])
                return (p, recording)
            }

            func close() {
                net.close()
                try? FileManager.default.removeItem(at: directory)
            }
        }

        /// An outbound call: the app holds and resumes, the carrier holds and resumes, the
        /// carrier hangs up; then an inbound call: the carrier calls the public address, the
        /// app answers, holds and resumes, the carrier holds and resumes, the app hangs up.
        @Test func callsBothWaysThroughAOneToOneNAT() async throws {
            let setup = try await Setup()
            defer { setup.close() }
            let (pub, priv) = (setup.net.publicAddress, setup.net.address(.gateway))

            let uas = try setup.carrier(
                "carrier-uas", xml: NATScenarios.carrierAnswers(public: pub, private: priv), port: setup.carrierPort)
            #expect(
                await eventually(timeout: 10) {
                    await setup.net.isListening(on: .carrier, udpPort: setup.carrierPort) || !uas.isRunning
                })
            let out = try setup.app(["call", "+15550100001", "--from", "+15557654321"], hangupAfter: 60)
            let text = await LossyNetworkTests.output(of: out.process, timeout: 60)
            let sipp = await LossyNetworkTests.output(of: uas, timeout: 10)
            #expect(uas.exitStatus == 0, "SIPp (outbound): \(sipp)\n\(setup.trace("carrier-uas"))")
            #expect(text.contains("\"status\":\"Hold\"") && text.contains("\"reason\":\"completed\""), "\(text)")
            try Self.expectEcho(out.recording, "outbound")

            // The app listens first: a call that comes before its subscription rings unseen.
            let answer = try setup.app(["answer", "--routing-id", "alice", "--timeout", "30"], hangupAfter: 9)
            #expect(
                await answer.process.waitForOutput(containing: "waiting for a call to alice", timeout: 20),
                "\(answer.process.output)")
            let uac = try setup.carrier(
                "carrier-uac", xml: NATScenarios.carrierCalls(public: pub, private: priv),
                port: try freePort(), remote: "\(pub):\(setup.sipPort)")
            let answered = await LossyNetworkTests.output(of: answer.process, timeout: 60)
            let caller = await LossyNetworkTests.output(of: uac, timeout: 15)
            #expect(uac.exitStatus == 0, "SIPp (inbound): \(caller)\n\(setup.trace("carrier-uac"))")
            #expect(
                answered.contains("\"status\":\"Hold\"") && answered.contains("\"reason\":\"completed\""), "\(answered)"
            )
            try Self.expectEcho(answer.recording, "inbound")
        }

        /// The last seconds of what the app heard hold its own 440 Hz, echoed by the carrier.
        static func expectEcho(_ path: String, _ what: String) throws {
            let wav = try WAVFile(contentsOf: path)
            let tail = Array(wav.samples.suffix(wav.sampleRate * 2))
            let level = ReceivedAudio.toneLevel(tail, hz: 440, sampleRate: wav.sampleRate)
            #expect(level > 0.2, "\(what): 440 Hz echoed through the NAT: \(level)")
        }
    }
}

/// SIPp scenarios for the carrier on the public side of the NAT. Every message from the
/// gateway must name `public` in Contact, Via and SDP (where it has them) and `private`
/// nowhere; SIPp fails the run otherwise.
enum NATScenarios {
    static func regex(_ address: String) -> String { address.replacingOccurrences(of: ".", with: "\\.") }

    /// Checks on one message from the gateway; `n` keeps SIPp's variable names apart.
    static func checks(
        _ n: Int, public pub: String, private priv: String, contact: Bool = true, via: Bool = true, sdp: Bool = false
    ) -> String {
        var s = "    <action>\n"
        var used: [String] = []
        func check(_ regexp: String, in place: String, inverse: Bool = false) {
            let v = "c\(n)x\(used.count)"
            used.append(v)
            s +=
                "      <ereg regexp=\"\(regexp)\" \(place) \(inverse ? "check_it_inverse" : "check_it")=\"true\" assign_to=\"\(v)\"/>\n"
        }
        if contact { check("@\(regex(pub)):[0-9]+", in: "search_in=\"hdr\" header=\"Contact:\"") }
        if via { check("SIP/2.0/UDP \(regex(pub)):[0-9]+", in: "search_in=\"hdr\" header=\"Via:\"") }
        if sdp { check("c=IN IP4 \(regex(pub))", in: "search_in=\"body\"") }
        check(regex(priv), in: "search_in=\"msg\"", inverse: true)
        s += "      <log message=\"checked\(used.map { " [$\($0)]" }.joined())\"/>\n    </action>\n"
        return s
    }

    static func sdp(_ direction: String, version: Int) -> String {
        """
        v=0
        o=carrier 1 \(version) IN IP4 [local_ip]
        s=-
        c=IN IP4 [media_ip]
        t=0 0
        m=audio [media_port] RTP/AVP 0
        a=rtpmap:0 PCMU/8000
        a=ptime:20
        a=\(direction)
        """
    }

    static func send(_ lines: [String], body: String? = nil, retrans: Bool = false) -> String {
        var all = lines
        all +=
            body.map { ["Content-Type: application/sdp", "Content-Length: [len]", "", $0] } ?? ["Content-Length: 0", ""]
        return "  <send\(retrans ? " retrans=\"500\"" : "")><![CDATA[\n" + all.joined(separator: "\n")
            + "\n]]></send>\n"
    }

    static let head = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"

    /// Our hold (sendonly) and resume (sendrecv) re-INVITEs, answered recvonly and sendrecv.
    static func acceptHoldAndResume(_ n: Int, public pub: String, private priv: String) -> String {
        var s = ""
        for (i, direction) in ["recvonly", "sendrecv"].enumerated() {
            s += "  <recv request=\"INVITE\">\n" + checks(n + i, public: pub, private: priv, sdp: true) + "  </recv>\n"
            s += send(
                [
                    "SIP/2.0 200 OK", "[last_Via:]", "[last_From:]", "[last_To:]", "[last_Call-ID:]", "[last_CSeq:]",
                    "Contact: <sip:carrier@[local_ip]:[local_port]>"
                ], body: sdp(direction, version: 2 + i), retrans: true)
            s += "  <recv request=\"ACK\"/>\n"
        }
        return s
    }

    /// The carrier's own hold and resume: re-INVITEs to `target` with `from`/`to`, CSeq
    /// from `cseq`; the gateway's answers must say recvonly (or inactive), then sendrecv.
    static func holdAndResume(
        target: String, from: String, to: String, cseq: Int, route: String?, public pub: String, private priv: String,
        n: Int
    ) -> String {
        var s = ""
        for (i, direction) in ["sendonly", "sendrecv"].enumerated() {
            let head =
                [
                    "INVITE \(target) SIP/2.0", "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
                    "From: \(from)", "To: \(to)", "[last_Call-ID:]", "CSeq: \(cseq + i) INVITE", "Max-Forwards: 70",
                    "Contact: <sip:carrier@[local_ip]:[local_port]>"
                ] + (route.map { [$0] } ?? [])
            s += "  <pause milliseconds=\"500\"/>\n"
            s += send(head, body: sdp(direction, version: 10 + i), retrans: true)
            s += "  <recv response=\"100\" optional=\"true\"/>\n"
            s +=
                "  <recv response=\"200\">\n" + checks(n + i, public: pub, private: priv, via: false, sdp: true)
                + "  </recv>\n"
            s += send(
                [
                    "ACK \(target) SIP/2.0", "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
                    "From: \(from)", "To: \(to)", "[last_Call-ID:]", "CSeq: \(cseq + i) ACK", "Max-Forwards: 70"
                ] + (route.map { [$0] } ?? []))
        }
        return s
    }

    /// The carrier answers our INVITE, takes our hold and resume, holds and resumes itself,
    /// lets the echo run, and hangs up.
    static func carrierAnswers(public pub: String, private priv: String) -> String {
        var s = head + "<scenario name=\"nat-carrier-answers\">\n"
        s +=
            "  <recv request=\"INVITE\" crlf=\"true\">\n"
            + checks(1, public: pub, private: priv, sdp: true)
            .replacingOccurrences(
                of: "      <log",
                with: """
                          <ereg regexp="sip:[^>;]*" search_in="hdr" header="Contact:" assign_to="contact"/>
                          <ereg regexp=".*" search_in="hdr" header="From:" assign_to="from"/>
                          <ereg regexp=".*" search_in="hdr" header="To:" assign_to="to"/>
                          <log
                    """) + "  </recv>\n"
        let ours = [
            "[last_Via:]", "[last_From:]", "[last_To:];tag=[pid]nat", "[last_Call-ID:]", "[last_CSeq:]",
            "Contact: <sip:carrier@[local_ip]:[local_port]>"
        ]
        s += send(["SIP/2.0 100 Trying", "[last_Via:]", "[last_From:]", "[last_To:]", "[last_Call-ID:]", "[last_CSeq:]"]
        )
        s += send(["SIP/2.0 180 Ringing"] + ours)
        s += "  <pause milliseconds=\"200\"/>\n"
        s += send(["SIP/2.0 200 OK"] + ours, body: sdp("sendrecv", version: 1), retrans: true)
        s += "  <recv request=\"ACK\">\n" + checks(2, public: pub, private: priv, contact: false) + "  </recv>\n"
        s += acceptHoldAndResume(3, public: pub, private: priv)
        s += holdAndResume(
            target: "[$contact]", from: "[$to];tag=[pid]nat", to: "[$from]", cseq: 1, route: nil, public: pub,
            private: priv, n: 5)
        s += "  <pause milliseconds=\"2500\"/>\n"
        s += send(
            [
                "BYE [$contact] SIP/2.0", "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
                "From: [$to];tag=[pid]nat",
                "To: [$from]", "[last_Call-ID:]", "CSeq: 3 BYE", "Max-Forwards: 70", "Reason: Q.850;cause=16"
            ], retrans: true)
        s += "  <recv response=\"200\"/>\n"
        return s + "</scenario>\n"
    }

    /// The carrier calls the gateway's public address, takes the app's hold and resume,
    /// holds and resumes itself, and takes the app's BYE.
    static func carrierCalls(public pub: String, private priv: String) -> String {
        var s = head + "<scenario name=\"nat-carrier-calls\">\n"
        s += send(
            [
                "INVITE sip:+15550001000@[remote_ip]:[remote_port] SIP/2.0",
                "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
                "From: <sip:+15557654321@[local_ip]>;tag=[pid]nat", "To: <sip:+15550001000@[remote_ip]>",
                "Call-ID: [call_id]",
                "CSeq: 1 INVITE", "Max-Forwards: 70", "Contact: <sip:carrier@[local_ip]:[local_port]>"
            ],
            body: sdp("sendrecv", version: 1), retrans: true)
        s +=
            "  <recv response=\"100\" optional=\"true\"/>\n  <recv response=\"180\" optional=\"true\"/>\n  <recv response=\"183\" optional=\"true\"/>\n"
        s +=
            "  <recv response=\"200\" rrs=\"true\">\n"
            + checks(1, public: pub, private: priv, via: false, sdp: true)
            .replacingOccurrences(
                of: "      <log",
                with: """
                          <ereg regexp=".*" search_in="hdr" header="To:" assign_to="to"/>
                          <log
                    """) + "  </recv>\n"
        s += send([
            "ACK [next_url] SIP/2.0", "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]",
            "From: <sip:+15557654321@[local_ip]>;tag=[pid]nat", "To: [$to]", "[last_Call-ID:]", "CSeq: 1 ACK",
            "Max-Forwards: 70"
        ])
        s += acceptHoldAndResume(3, public: pub, private: priv)
        s += holdAndResume(
            target: "[next_url]", from: "<sip:+15557654321@[local_ip]>;tag=[pid]nat", to: "[$to]", cseq: 2, route: nil,
            public: pub, private: priv, n: 5)
        s += "  <recv request=\"BYE\">\n" + checks(7, public: pub, private: priv, contact: false) + "  </recv>\n"
        s += send(["SIP/2.0 200 OK", "[last_Via:]", "[last_From:]", "[last_To:]", "[last_Call-ID:]", "[last_CSeq:]"])
        return s + "</scenario>\n"
    }
}
