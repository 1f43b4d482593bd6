import Foundation
import IrisAPI
import IrisClient
import SIP
import Testing

extension GatewaySuites {
    /// The carrier header policy end to end: what the trunk receives in our INVITE (SIPp's
    /// trace), refusals before any INVITE, the CLI's flags, and what a carrier's INVITE tells
    /// the app (UDP and TCP, with a multi-KB PASSporT).
    @Suite struct GatewayCarrierPolicyTests {
        static let policy = """
            callerId: { allowedPrefixes: ["+1555"], displayName: "ACME Support" }, assertedIdentity: "pai", userPhone: true,
            techPrefix: "4711", headers: { "X-Account": "acme" }, appHeaders: ["Diversion"],
            """

        /// The lines SIPp received, trimmed (retransmissions merged).
        static func receivedInvite(_ sipp: SIPp) -> Set<String> { sipp.lines }

        @Test func theInviteCarriesTheTrunkPolicyAndTheAppsFields() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.reject("486 Busy Here")) {
                $0.outboundExtra = Self.policy
            }
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.createWithTN(
                targetTN: "+15551230001", sourceTN: "+15557654321", callerName: "Alice Example", privacy: "id",
                headers: ["X-Ticket": "42", "Diversion": "<sip:+15550002000@gw.test>;reason=unconditional"])
            #expect(await session.waitForEnd(timeout: 15), "\(rec.trace)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let lines = Self.receivedInvite(sipp)
            #expect(
                lines.contains("INVITE sip:4711+15551230001@127.0.0.1:\(sipp.port);user=phone SIP/2.0"), sipp.report)
            #expect(lines.contains { $0.hasPrefix("To: <sip:4711+15551230001@127.0.0.1;user=phone>") }, sipp.report)
            #expect(
                lines.contains { $0.hasPrefix("From: Anonymous <sip:anonymous@anonymous.invalid>;tag=") }, sipp.report)
            #expect(
                lines.contains("P-Asserted-Identity: \"Alice Example\" <sip:+15557654321@gw.test;user=phone>"),
                sipp.report)
            #expect(lines.contains("Privacy: id"), sipp.report)
            #expect(lines.contains("X-Account: acme") && lines.contains("X-Ticket: 42"), sipp.report)
            #expect(lines.contains("Diversion: <sip:+15550002000@gw.test>;reason=unconditional"), sipp.report)
            #expect(rec.ended?.reason == .busy, "\(rec.trace)")
        }

        /// Each refusal is JSON with its Iris code, and nothing is dialled.
        @Test func refusedFieldsDialNothing() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer()) { $0.outboundExtra = Self.policy }
            defer { gw.stop(); sipp.stop() }
            let offer = GatewayAPIErrorTests.offer.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            func body(source: String = "+15557654321", _ extra: String) -> String {
                "{\"targetTN\":\"+15551230001\",\"sourceTN\":\"\(source)\",\"media\":{\"sdp\":\"\(offer)\"},\(extra)}"
            }
            let cases: [(String, String, Int, Int, String)] = [
                (
                    "CRLF header injection", body(#""headers":{"X-Foo":"bar\r\nVia: SIP/2.0/UDP evil.example"}"#), 400,
                    -103,
                    "headers.X-Foo: the value holds the control byte 0x0D"
                ),
                ("bare LF", body(#""headers":{"X-Foo":"bar\nX-Evil: 1"}"#), 400, -103, "control byte 0x0A"),
                ("NUL", body(#""headers":{"X-Foo":"bar\u0000baz"}"#), 400, -103, "control byte 0x00"),
                ("CRLF in a name", body(#""headers":{"X-Foo\r\nVia":"x"}"#), 400, -103, "not a header name"),
                (
                    "a name the trunk does not allow", body(#""headers":{"History-Info":"<sip:x@y>;index=1"}"#), 400,
                    -103,
                    "headers.History-Info: not allowed on this trunk (X- headers or Diversion)"
                ),
                (
                    "a header the gateway writes", body(#""headers":{"Contact":"<sip:evil@example>"}"#), 400, -103,
                    "written by the gateway"
                ),
                (
                    "the profile's fixed header", body(#""headers":{"X-Account":"other"}"#), 400, -103,
                    "set by the trunk profile"
                ),
                (
                    "caller name with CR", body(#""callerName":"Alice\rBob""#), 400, -103,
                    "callerName: holds a control byte"
                ),
                (
                    "unknown privacy", body(#""privacy":"anonymous""#), 400, -103,
                    "privacy: unknown priv-value \"anonymous\""
                ),
                (
                    "privacy none with id", body(#""privacy":"none;id""#), 400, -103,
                    "privacy: \"none\" asks for no privacy"
                ),
                ("headers not an object", body(#""headers":["X-Foo: bar"]"#), 400, -103, "wrong type at \"headers\""),
                (
                    "caller number not allowed", body(source: "+442071234567", #""privacy":"id""#), 403, -417,
                    "sourceTN: call forbidden: caller number +442071234567 is not allowed on this trunk (allowed: +1555)"
                )
            ]
            for (name, text, status, code, message) in cases {
                let r = try await GatewayAPIErrorTests.request(gw, "POST", "/v1/sessions", body: text)
                #expect(r.status == status && r.code == code, "\(name): \(r.status) \(r.text)")
                #expect(r.text.contains(message.replacingOccurrences(of: "\"", with: "\\\"")), "\(name): \(r.text)")
            }
            #expect(try await gw.connection().sessions().isEmpty)
            #expect(sipp.received("INVITE ") == 0, "a refused request dialled: \(sipp.report)")
        }

        /// `irisgw call --caller-name --privacy --header`.
        @Test func theCLIPassesCallerNamePrivacyAndHeaders() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.reject("486 Busy Here")) {
                $0.outboundExtra = Self.policy
            }
            defer { gw.stop(); sipp.stop() }
            let r = try await GatewayCLITests.run([
                "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir,
                "--caller-name", "Bob", "--privacy", "none", "--header", "X-Foo: bar baz",
                "--header", "X-Trace:abc"
            ])
            #expect(r.status == 1, "\(r.lines)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let lines = Self.receivedInvite(sipp)
            #expect(
                lines.contains { $0.hasPrefix("From: Bob <sip:+15557654321@gw.test;user=phone>;tag=") }, sipp.report)
            #expect(
                lines.contains("Privacy: none") && lines.contains("X-Foo: bar baz") && lines.contains("X-Trace: abc"),
                sipp.report)
            // A refused header: the gateway's message, exit 3.
            let refused = try await GatewayCLITests.run([
                "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL,
                "--data-dir", gw.dataDir, "--header", "Via: x"
            ])
            #expect(refused.status == 3, "\(refused.lines)")
            let usage = try await GatewayCLITests.run(["call", "+15551230001", "--from", "+1", "--header", "no colon"])
            #expect(usage.status == 2)
        }

        /// A carrier's INVITE with the headers apps care about, several KB of them.
        static func signedCaller(identity: String) -> String {
            """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="signed caller">
              <send retrans="500"><![CDATA[
            INVITE sip:[service]@[remote_ip]:[remote_port];user=phone SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: "ACME Corp" <sip:+15559876543;verstat=TN-Validation-Passed@[local_ip]:[local_port];user=phone>;tag=[pid]p[call_number]
            To: <sip:[service]@[remote_ip]:[remote_port];user=phone>
            Call-ID: [call_id]
            CSeq: 1 INVITE
            Contact: <sip:+15559876543@[local_ip]:[local_port];transport=[transport]>
            Max-Forwards: 70
            P-Asserted-Identity: "ACME Corp" <sip:+15559876543@carrier.example;user=phone>, <tel:+15559876543>
            Diversion: <sip:+15550002000@carrier.example>;reason=unconditional;counter=1
            History-Info: <sip:+15550002000@carrier.example>;index=1, <sip:+15550001000@carrier.example?Reason=SIP%3Bcause%3D302>;index=1.1;mp=1
            Identity: \(identity)
            X-Carrier-Ref: 7f3a9c
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
              <recv response="100" optional="true"/>
              <recv response="180"/>
              <recv response="603"/>
              <send><![CDATA[
            ACK sip:[service]@[remote_ip]:[remote_port];user=phone SIP/2.0
            [last_Via:]
            From: "ACME Corp" <sip:+15559876543;verstat=TN-Validation-Passed@[local_ip]:[local_port];user=phone>;tag=[pid]p[call_number]
            To: <sip:[service]@[remote_ip]:[remote_port];user=phone>[peer_tag_param]
            Call-ID: [call_id]
            CSeq: 1 ACK
            Max-Forwards: 70
            Content-Length: 0

            ]]></send>
            </scenario>
            """
        }

        /// A PASSporT padded to several KB, as the unit tests use.
        static let passport: String = {
            let body =
                "eyJhbGciOiJFUzI1NiIsInBwdCI6InNoYWtlbiIsInR5cCI6InBhc3Nwb3J0In0."
                + String(repeating: "eyJhdHRlc3QiOiJBIiwiZGVzdCI6eyJ0biI6WyIxNTU1MDAwMTAwMCJdfX0", count: 60)
                + ".MEUCIQDzK9v8Qk1b2Xo3uYfZ7l5Hj0sW2qP4eR6tY8uI0oP9aAIgL3kJ5hG7fD9sA1qW3eR5tY7uI9oP1aS3dF5gH7jK9lM"
            return body + ";info=<https://cert.example.org/passport.cer>;alg=ES256;ppt=shaken"
        }()

        @Test(arguments: [SIPTransportProtocol.udp, .tcp])
        func carrierHeadersReachTheApp(transport: SIPTransportProtocol) async throws {
            #expect(Self.passport.utf8.count > 3000)
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let peer = SIPPeer(transport: transport, address: SocketAddress(host: "127.0.0.1", port: gw.sipPort))
            let sipp = try SIPp(
                .inline(name: "signed-caller", xml: Self.signedCaller(identity: Self.passport)), remote: peer,
                transport: transport, timeout: 30, arguments: ["-s", "+15550001000"])
            defer { sipp.stop() }
            let n = try #require(await listener.next(timeout: 15), sipp.report)
            let carrier = try #require(n.carrier, "\(n)")
            #expect(n.userdata?.data.cid == "+15559876543", "the verstat parameter is not part of the number")
            #expect(carrier.identity && carrier.identityHeaders == [Self.passport], "the PASSporT passes unchanged")
            #expect(carrier.verstat == "TN-Validation-Passed")
            #expect(
                carrier.pAssertedIdentity == [
                    "\"ACME Corp\" <sip:+15559876543@carrier.example;user=phone>", "<tel:+15559876543>"
                ])
            #expect(carrier.diversion == ["<sip:+15550002000@carrier.example>;reason=unconditional;counter=1"])
            #expect(carrier.historyInfo?.count == 2)
            #expect(carrier.headers == ["X-Carrier-Ref": "7f3a9c"])
            let snapshot = try await gw.connection().snapshot(roomId: try #require(n.roomid))
            #expect(snapshot.carrier == carrier)
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: false)
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
        }
    }
}
