import Foundation
import IrisAPI
import SIP
import Testing

@testable import Gateway

/// The carrier header policy as tables: the app's headers (header injection included),
/// caller ID policies, the outbound INVITE's identity headers, and what inbound carrier
/// INVITEs (captured-looking: PAI, Diversion, History-Info, a multi-KB PASSporT) tell apps.
@Suite struct CarrierPolicyTests {
    // MARK: App headers

    struct HeaderRow: Sendable, CustomStringConvertible {
        var name: String
        var headers: [String: String]
        var allowed: [String] = []
        var fixed: [SIPHeader] = []
        /// The refusal's field and a part of its problem; nil: accepted.
        var refusal: (field: String, problem: String)?
        var description: String { name }
    }

    static let headerRows: [HeaderRow] = [
        HeaderRow(name: "X- headers pass, sorted", headers: ["X-b": "2", "X-A": "1"]),
        HeaderRow(
            name: "a name the profile allows",
            headers: ["Diversion": "<sip:+15550002000@example.net>;reason=user-busy"],
            allowed: ["diversion"]),
        HeaderRow(
            name: "CRLF injection", headers: ["X-Foo": "bar\r\nVia: SIP/2.0/UDP evil.example"],
            refusal: ("headers.X-Foo", "control byte 0x0D")),
        HeaderRow(
            name: "LF injection", headers: ["X-Foo": "bar\nBYE sip:x SIP/2.0"],
            refusal: ("headers.X-Foo", "control byte 0x0A")),
        HeaderRow(name: "NUL", headers: ["X-Foo": "a\u{0}b"], refusal: ("headers.X-Foo", "control byte 0x00")),
        HeaderRow(name: "HTAB and DEL", headers: ["X-Foo": "a\tb"], refusal: ("headers.X-Foo", "control byte 0x09")),
        HeaderRow(name: "DEL", headers: ["X-Foo": "a\u{7F}"], refusal: ("headers.X-Foo", "control byte 0x7F")),
        HeaderRow(
            name: "a CRLF in the name", headers: ["X-Foo\r\nVia": "x"],
            refusal: ("headers.X-Foo\\u{d}\\u{a}Via", "not a header name")),
        HeaderRow(
            name: "a space in the name", headers: ["X Foo": "x"], refusal: ("headers.X Foo", "not a header name")),
        HeaderRow(
            name: "a colon in the name", headers: ["X-Foo:": "x"], refusal: ("headers.X-Foo:", "not a header name")),
        HeaderRow(
            name: "a name the profile does not allow", headers: ["Diversion": "x"],
            refusal: ("headers.Diversion", "not allowed on this trunk")),
        HeaderRow(
            name: "a header the gateway writes", headers: ["Via": "x"], allowed: [],
            refusal: ("headers.Via", "written by the gateway")),
        HeaderRow(
            name: "P-Asserted-Identity is the policy's", headers: ["P-Asserted-Identity": "<sip:+1@x>"],
            refusal: ("headers.P-Asserted-Identity", "written by the gateway")),
        HeaderRow(name: "a compact form", headers: ["f": "x"], refusal: ("headers.f", "compact header forms")),
        HeaderRow(
            name: "the same name twice", headers: ["X-Foo": "1", "x-foo": "2"],
            refusal: ("headers.x-foo", "given twice")),
        HeaderRow(
            name: "a fixed header of the profile", headers: ["X-Account": "other"],
            fixed: [SIPHeader("X-Account", "acme")],
            refusal: ("headers.X-Account", "set by the trunk profile")),
        HeaderRow(name: "an empty value", headers: ["X-Foo": ""], refusal: ("headers.X-Foo", "an empty value")),
        HeaderRow(
            name: "a value over 2048 bytes", headers: ["X-Foo": String(repeating: "a", count: 2049)],
            refusal: ("headers.X-Foo", "longer than 2048")),
        HeaderRow(
            name: "more than 16 headers", headers: Dictionary(uniqueKeysWithValues: (0..<17).map { ("X-H\($0)", "v") }),
            refusal: ("headers", "17 headers; at most 16")),
        HeaderRow(
            name: "more than 4096 bytes in all",
            headers: Dictionary(
                uniqueKeysWithValues: (0..<3).map { ("X-H\($0)", String(repeating: "v", count: 1500)) }),
            refusal: ("headers", "bytes of names and values; at most 4096"))
    ]

    @Test(arguments: headerRows) func appHeaders(_ row: HeaderRow) throws {
        if let refusal = row.refusal {
            do {
                _ = try InviteFields.appHeaders(row.headers, allowed: row.allowed, fixed: row.fixed)
                Issue.record("accepted: \(row.headers)")
            } catch {
                #expect(error.field == refusal.field, "\(error)")
                #expect(error.problem.contains(refusal.problem), "\(error)")
                #expect(error.irisCode == -103 && error.refusal == .invalid)
                #expect(!error.description.utf8.contains { $0 < 0x20 }, "no control byte reaches an error message")
            }
        } else {
            let out = try InviteFields.appHeaders(row.headers, allowed: row.allowed, fixed: row.fixed)
            #expect(out.map(\.value) == row.headers.keys.sorted().map { row.headers[$0]! })
        }
    }

    @Test(arguments: [
        ("Alice Example", true), ("", false), ("Bob\r\nVia: x", false), (String(repeating: "n", count: 129), false)
    ])
    func callerNames(name: String, ok: Bool) {
        #expect(((try? InviteFields.callerName(name)) != nil) == ok)
    }

    // MARK: Caller ID

    struct CallerRow: Sendable, CustomStringConvertible {
        var name: String
        var policy: CallerID
        var source = "+15557654321"
        var target = "+15551230001"
        /// The presented number, or nil when refused (-417).
        var presented: String?
        var description: String { name }
    }

    static let callerRows: [CallerRow] = [
        CallerRow(name: "app, any number", policy: CallerID(), presented: "+15557654321"),
        CallerRow(
            name: "app, allowed prefix", policy: CallerID(allowedPrefixes: ["+1555765"]), presented: "+15557654321"),
        CallerRow(name: "app, refused number", policy: CallerID(allowedPrefixes: ["+44", "+1212"]), presented: nil),
        CallerRow(name: "fixed", policy: CallerID(policy: .fixed, number: "+15550100000"), presented: "+15550100000"),
        CallerRow(
            name: "pool keeps an owned number", policy: CallerID(policy: .pool, pool: ["+12125550100", "+15557654321"]),
            presented: "+15557654321"),
        CallerRow(
            name: "pool picks the most local number",
            policy: CallerID(policy: .pool, pool: ["+12125550100", "+15551239999", "+15550000000"]),
            source: "+19995550000", presented: "+15551239999"),
        CallerRow(
            name: "pool, first on a tie", policy: CallerID(policy: .pool, pool: ["+442071234567", "+33123456789"]),
            presented: "+442071234567")
    ]

    @Test(arguments: callerRows) func callerIdPolicies(_ row: CallerRow) {
        do {
            let n = try row.policy.present(sourceTN: row.source, target: row.target)
            #expect(n == row.presented)
        } catch {
            #expect(row.presented == nil, "\(error)")
            #expect(
                error.code == -417 && error.message.contains("caller number \(row.source) is not allowed"), "\(error)")
        }
    }

    // MARK: The outbound INVITE

    static func outbound(_ configure: (inout TrunkProfile.Outbound) -> Void = { _ in }) -> TrunkProfile.Outbound {
        var o = TrunkProfile.Outbound(
            proxies: [ProxyAddress(host: "192.0.2.10", hostKind: .ipv4, port: 5060, transport: .udp)],
            fromDomain: "gw.example.net")
        configure(&o)
        return o
    }

    struct PlanRow: Sendable, CustomStringConvertible {
        var name: String
        var outbound: TrunkProfile.Outbound
        var request = OutboundCallerRequest()
        var requestURI: String
        var to: String
        var from: String
        var headers: [String]
        var description: String { name }
    }

    static let planRows: [PlanRow] = [
        PlanRow(
            name: "defaults: as before", outbound: outbound(),
            requestURI: "sip:+15551230001@192.0.2.10:5060", to: "<sip:+15551230001@192.0.2.10>",
            from: "<sip:+15557654321@gw.example.net>", headers: []),
        PlanRow(
            name: "user=phone, tech prefix, PAI with the caller name",
            outbound: outbound {
                $0.userPhone = true; $0.techPrefix = "4711"; $0.assertedIdentity = .pai
            },
            request: OutboundCallerRequest(callerName: "Alice Example"),
            requestURI: "sip:4711+15551230001@192.0.2.10:5060;user=phone",
            to: "<sip:4711+15551230001@192.0.2.10;user=phone>",
            from: "\"Alice Example\" <sip:+15557654321@gw.example.net;user=phone>",
            headers: ["P-Asserted-Identity: \"Alice Example\" <sip:+15557654321@gw.example.net;user=phone>"]),
        PlanRow(
            name: "privacy id: anonymous From, the identity asserted, Privacy",
            outbound: outbound { $0.assertedIdentity = .pai },
            request: OutboundCallerRequest(callerName: "Alice", privacy: PrivacyHeader([.id, .critical])),
            requestURI: "sip:+15551230001@192.0.2.10:5060", to: "<sip:+15551230001@192.0.2.10>",
            from: "Anonymous <sip:anonymous@anonymous.invalid>",
            headers: ["P-Asserted-Identity: Alice <sip:+15557654321@gw.example.net>", "Privacy: id;critical"]),
        PlanRow(
            name: "PPI, privacy none, the profile's display name, fixed then app headers",
            outbound: outbound {
                $0.assertedIdentity = .ppi
                $0.callerId = CallerID(displayName: "ACME Support")
                $0.headers = [SIPHeader("X-Account", "acme")]
            },
            request: OutboundCallerRequest(privacy: PrivacyHeader([.none]), headers: [SIPHeader("X-Ticket", "42")]),
            requestURI: "sip:+15551230001@192.0.2.10:5060", to: "<sip:+15551230001@192.0.2.10>",
            from: "\"ACME Support\" <sip:+15557654321@gw.example.net>",
            headers: [
                "P-Preferred-Identity: \"ACME Support\" <sip:+15557654321@gw.example.net>", "Privacy: none",
                "X-Account: acme", "X-Ticket: 42"
            ]),
        PlanRow(
            name: "national format with a tech prefix",
            outbound: outbound {
                $0.numberFormat = .national; $0.techPrefix = "99"
            },
            requestURI: "sip:9915551230001@192.0.2.10:5060", to: "<sip:9915551230001@192.0.2.10>",
            from: "<sip:+15557654321@gw.example.net>", headers: [])
    ]

    @Test(arguments: planRows) func outboundInvite(_ row: PlanRow) {
        let plan = OutboundInvitePlan(
            outbound: row.outbound, target: "+15551230001", caller: "+15557654321", request: row.request,
            host: "192.0.2.10", port: 5060)
        #expect(plan.requestURI.serialize() == row.requestURI)
        #expect(plan.to.serialize() == row.to)
        #expect(plan.from.serialize() == row.from)
        #expect(plan.headers.map { "\($0.name.canonical): \($0.value)" } == row.headers)
    }

    // MARK: Inbound carrier INVITEs

    /// A PASSporT as carriers sign them (header.payload.signature, base64url), padded out so
    /// that the Identity header is several KB.
    static let passport: String = {
        let header =
            "eyJhbGciOiJFUzI1NiIsInBwdCI6InNoYWtlbiIsInR5cCI6InBhc3Nwb3J0IiwieDV1IjoiaHR0cHM6Ly9jZXJ0LmV4YW1wbGUub3JnL3Bhc3Nwb3J0LmNlciJ9"
        let payload =
            "eyJhdHRlc3QiOiJBIiwiZGVzdCI6eyJ0biI6WyIxNTU1MDAwMTAwMCJdfSwiaWF0IjoxNzAwMDAwMDAwLCJvcmlnIjp7InRuIjoiMTU1NTk4NzY1NDMifSwib3JpZ2lkIjoiNGYyYjk2ZDYtMWE2Yy00YmQyLWE4YzYtN2FmOGM0ZDE3YTMyIn0"
            + String(repeating: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", count: 100)
        let signature =
            "MEUCIQDzK9v8Qk1b2Xo3uYfZ7l5Hj0sW2qP4eR6tY8uI0oP9aAIgL3kJ5hG7fD9sA1qW3eR5tY7uI9oP1aS3dF5gH7jK9lM"
        return header + "." + payload + "." + signature
            + ";info=<https://cert.example.org/passport.cer>;alg=ES256;ppt=shaken"
    }()

    static func invite(from: String, extra: [String]) -> SIPMessage? {
        let sdp =
            "v=0\r\no=carrier 1 1 IN IP4 198.51.100.7\r\ns=-\r\nc=IN IP4 198.51.100.7\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
        let lines =
            [
                "INVITE sip:+15550001000@203.0.113.10:5060;user=phone SIP/2.0",
                "Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-carrier-1",
                "Max-Forwards: 69",
                "From: \(from);tag=as7d8f",
                "To: <sip:+15550001000@203.0.113.10;user=phone>",
                "Call-ID: 3848276298220188511@198.51.100.7",
                "CSeq: 102 INVITE",
                "Contact: <sip:+15559876543@198.51.100.7:5060>"
            ] + extra + ["Content-Type: application/sdp", "Content-Length: \(sdp.utf8.count)", "", ""]
        return try? SIPMessage.parse(Array((lines.joined(separator: "\r\n") + sdp).utf8))
    }

    struct InboundRow: Sendable, CustomStringConvertible {
        var name: String
        var from: String
        var extra: [String]
        var caller: String
        var info: CarrierCallInfo
        var description: String { name }
    }

    static let inboundRows: [InboundRow] = [
        InboundRow(
            name: "a plain call", from: "<sip:+15559876543@198.51.100.7>", extra: [], caller: "+15559876543",
            info: CarrierCallInfo()),
        InboundRow(
            name: "signed, verified, diverted, with carrier headers",
            from: "\"ACME Corp\" <sip:+15559876543;verstat=TN-Validation-Passed@198.51.100.7;user=phone>",
            extra: [
                "P-Asserted-Identity: \"ACME Corp\" <sip:+15559876543@198.51.100.7;user=phone>, <tel:+15559876543>",
                "Diversion: <sip:+15550002000@198.51.100.7>;reason=unconditional;counter=1;privacy=off",
                "History-Info: <sip:+15550002000@198.51.100.7>;index=1, <sip:+15550001000@203.0.113.10?Reason=SIP%3Bcause%3D302>;index=1.1;mp=1",
                "Identity: " + passport,
                "X-Carrier-Ref: 7f3a9c",
                "x-carrier-ref: second",
                "X-Billing: acct=42;plan=\"gold\""
            ],
            caller: "+15559876543",
            info: CarrierCallInfo(
                headers: ["X-Carrier-Ref": "7f3a9c, second", "X-Billing": "acct=42;plan=\"gold\""],
                pAssertedIdentity: ["\"ACME Corp\" <sip:+15559876543@198.51.100.7;user=phone>", "<tel:+15559876543>"],
                diversion: ["<sip:+15550002000@198.51.100.7>;reason=unconditional;counter=1;privacy=off"],
                historyInfo: [
                    "<sip:+15550002000@198.51.100.7>;index=1",
                    "<sip:+15550001000@203.0.113.10?Reason=SIP%3Bcause%3D302>;index=1.1;mp=1"
                ],
                identity: true, identityHeaders: [passport], verstat: "TN-Validation-Passed")),
        InboundRow(
            name: "verstat on the asserted tel URI, anonymous From",
            from: "\"Anonymous\" <sip:anonymous@anonymous.invalid>",
            extra: ["P-Asserted-Identity: <tel:+15559876543;verstat=TN-Validation-Failed>", "Privacy: id"],
            caller: "anonymous",
            info: CarrierCallInfo(
                pAssertedIdentity: ["<tel:+15559876543;verstat=TN-Validation-Failed>"], verstat: "TN-Validation-Failed")
        ),
        InboundRow(
            name: "a tel From with verstat, two Diversions",
            from: "<tel:+15559876543;verstat=No-TN-Validation>",
            extra: [
                "Diversion: <sip:+15550003000@198.51.100.7>;reason=no-answer;counter=1",
                "Diversion: <sip:+15550002000@198.51.100.7>;reason=user-busy;counter=1"
            ],
            caller: "+15559876543",
            info: CarrierCallInfo(
                diversion: [
                    "<sip:+15550003000@198.51.100.7>;reason=no-answer;counter=1",
                    "<sip:+15550002000@198.51.100.7>;reason=user-busy;counter=1"
                ],
                verstat: "No-TN-Validation"))
    ]

    @Test(arguments: inboundRows) func inboundCarrierInfo(_ row: InboundRow) throws {
        let invite = try #require(Self.invite(from: row.from, extra: row.extra), "the captured INVITE parses")
        #expect(CarrierCallInfo(invite: invite) == row.info)
        #expect(invite.callingNumber == row.caller)
        #expect(invite.calledNumber == "+15550001000")
    }

    @Test func aMultiKilobyteIdentityPassesUnchanged() throws {
        #expect(Self.passport.utf8.count > 3000)
        let invite = try #require(
            Self.invite(from: "<sip:+15559876543@198.51.100.7>", extra: ["Identity: " + Self.passport]))
        #expect(
            invite.size > 3500 && invite.size < SIPStreamFramer().maxHeaderBytes, "fits a stream's header limit too")
        #expect(CarrierCallInfo(invite: invite).identityHeaders == [Self.passport])
        // And through the JSON the app gets.
        let json = try JSONEncoder().encode(CarrierCallInfo(invite: invite))
        #expect(try JSONDecoder().decode(CarrierCallInfo.self, from: json).identityHeaders == [Self.passport])
    }
}
