import Foundation
import SIP
import Testing

@testable import Gateway

/// The profile keys of the carrier header policy and of authenticated inbound trunks:
/// values read, defaults, and every refusal as `<file>: <key path>: <message>`.
@Suite struct CarrierPolicyProfileTests {
    static let proxy = #"proxies: ["sip:127.0.0.1:5090"]"#
    static let routes = #"routes: [{ did: "*", routingId: "a" }]"#

    @Test func defaultsLeaveTheINVITEAsBefore() throws {
        let p = try ProfileLoader.parse(
            #"{ name: "t", outbound: { \#(Self.proxy) }, inbound: { \#(Self.routes) } }"#, file: "t.json5")
        let o = try #require(p.outbound)
        #expect(o.callerId == CallerID() && o.assertedIdentity == .none && !o.userPhone && o.techPrefix.isEmpty)
        #expect(o.headers.isEmpty && o.appHeaders.isEmpty)
        #expect(p.inbound?.auth == nil)
        #expect(p.inbound?.allows(source: "127.0.0.1") == true && p.inbound?.allows(source: "192.0.2.1") == false)
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            {
              name: "carrier",
              outbound: {
                \(Self.proxy),
                callerId: { policy: "pool", pool: ["+15550100000", "+12125550100"], displayName: "ACME" },
                assertedIdentity: "pai", userPhone: true, techPrefix: "4711",
                headers: { "X-Account": "acme", "P-Charging-Vector": "icid-value=1" },
                appHeaders: ["Diversion", "History-Info"],
              },
              inbound: { \(Self.routes), auth: { username: "carrier-in", passwordEnv: "CARRIER_IN_PASSWORD", algorithms: ["MD5", "SHA-256"] } },
            }
            """
        let p = try ProfileLoader.parse(text, file: "c.json5")
        let o = try #require(p.outbound)
        #expect(o.callerId == CallerID(policy: .pool, pool: ["+15550100000", "+12125550100"], displayName: "ACME"))
        #expect(o.assertedIdentity == .pai && o.userPhone && o.techPrefix == "4711")
        #expect(o.headers == [SIPHeader("X-Account", "acme"), SIPHeader("P-Charging-Vector", "icid-value=1")])
        #expect(o.appHeaders == ["Diversion", "History-Info"])
        let auth = try #require(p.inbound?.auth)
        #expect(auth.username == "carrier-in" && auth.passwordEnv == "CARRIER_IN_PASSWORD")
        #expect(auth.algorithms == [.sha256, .md5], "offered strongest first whatever the order given")
        // With auth and no allowFrom, any address may authenticate.
        #expect(p.inbound?.allows(source: "203.0.113.9") == true && p.inbound?.allows(source: "2001:db8::1") == true)
        #expect(try auth.password(environment: ["CARRIER_IN_PASSWORD": "pw"]) == "pw")
        let unset = #expect(throws: ProfileError.self) { try auth.password(environment: [:]) }
        #expect(
            unset?.description
                == "c.json5: inbound.auth.passwordEnv: environment variable CARRIER_IN_PASSWORD is not set")
    }

    @Test func authBesidesAllowFromKeepsTheList() throws {
        let p = try ProfileLoader.parse(
            #"{ name: "t", inbound: { allowFrom: ["198.51.100.0/24"], \#(Self.routes), auth: { username: "u", passwordEnv: "P" } } }"#,
            file: "t.json5")
        #expect(p.inbound?.allows(source: "198.51.100.7") == true && p.inbound?.allows(source: "127.0.0.1") == false)
    }

    static let broken: [(String, String, String)] = [
        (
            #"outbound: { \#(proxy), callerId: { policy: "fixed" } }"#, "outbound.callerId.number",
            #"missing required key (policy "fixed")"#
        ),
        (
            #"outbound: { \#(proxy), callerId: { policy: "pool" } }"#, "outbound.callerId.pool",
            #"missing required key (policy "pool")"#
        ),
        (
            #"outbound: { \#(proxy), callerId: { number: "+15550100000" } }"#, "outbound.callerId.number",
            #"applies only with policy "fixed" (policy is "app")"#
        ),
        (
            #"outbound: { \#(proxy), callerId: { policy: "random" } }"#, "outbound.callerId.policy",
            #"must be one of "app", "fixed", "pool", found "random""#
        ),
        (
            #"outbound: { \#(proxy), callerId: { policy: "pool", pool: ["+15550100000", "+15550100000"] } }"#,
            "outbound.callerId.pool[1]",
            "+15550100000 is listed twice"
        ),
        (
            #"outbound: { \#(proxy), callerId: { policy: "fixed", number: "ACME" } }"#, "outbound.callerId.number",
            #"must be a phone number: an optional + and 1 to 15 digits ("+15550100000"), found "ACME""#
        ),
        (
            #"outbound: { \#(proxy), callerId: { allowedPrefixes: ["+1-555"] } }"#,
            "outbound.callerId.allowedPrefixes[0]",
            #"a prefix is an optional + and digits ("+1555"), found "+1-555""#
        ),
        (
            #"outbound: { \#(proxy), callerId: { displayName: "a\nb" } }"#, "outbound.callerId.displayName",
            "holds a control byte (CR, LF, NUL ... are refused)"
        ),
        (
            #"outbound: { \#(proxy), assertedIdentity: "PAI" }"#, "outbound.assertedIdentity",
            #"must be one of "none", "pai", "ppi", found "PAI""#
        ),
        (
            #"outbound: { \#(proxy), techPrefix: "12#" }"#, "outbound.techPrefix",
            #"must be 0 to 16 digits, found "12#""#
        ),
        (
            #"outbound: { \#(proxy), headers: { Via: "SIP/2.0/UDP x" } }"#, "outbound.headers.Via",
            "written by the gateway itself, cannot be set"
        ),
        (
            #"outbound: { \#(proxy), headers: { "X-A": "1\r\nVia: x" } }"#, "outbound.headers.X-A",
            "the value holds the control byte 0x0D (CR, LF, NUL and other control bytes are refused: header injection)"
        ),
        (
            #"outbound: { \#(proxy), headers: { "X-A": "1", "x-a": "2" } }"#, "outbound.headers.x-a",
            "given twice (header names compare without case)"
        ),
        (
            #"outbound: { \#(proxy), headers: ["X-A: 1"] }"#, "outbound.headers",
            "expected an object of header name to value, found an array"
        ),
        (
            #"outbound: { \#(proxy), appHeaders: ["From"] }"#, "outbound.appHeaders[0]",
            "written by the gateway itself, cannot be set"
        ),
        (
            #"outbound: { \#(proxy), appHeaders: ["Bad Name"] }"#, "outbound.appHeaders[0]",
            "not a header name (RFC 3261 token)"
        ),
        (#"inbound: { \#(routes), auth: { username: "u" } }"#, "inbound.auth.passwordEnv", "missing required key"),
        (
            #"inbound: { \#(routes), auth: { username: "u", passwordEnv: "hunter2!" } }"#, "inbound.auth.passwordEnv",
            "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*); the password itself never goes in the file"
        ),
        (
            #"inbound: { \#(routes), auth: { username: "u", passwordEnv: "P", algorithms: ["SHA-512"] } }"#,
            "inbound.auth.algorithms[0]",
            #"must be "SHA-256" or "MD5", found "SHA-512""#
        ),
        (
            #"inbound: { \#(routes), auth: { username: "a user", passwordEnv: "P" } }"#, "inbound.auth.username",
            "must be 1 to 128 printable ASCII characters without spaces, quotes or backslashes"
        ),
        (
            #"inbound: { \#(routes), auth: { username: "u", password: "x", passwordEnv: "P" } }"#,
            "inbound.auth.password",
            "unknown key (allowed: username, passwordEnv, algorithms)"
        )
    ]

    @Test(arguments: broken) func refusals(body: String, keyPath: String, message: String) {
        let error = #expect(throws: ProfileError.self) {
            try ProfileLoader.parse("{ name: \"t\", \(body) }", file: "t.json5")
        }
        #expect(error?.description == "t.json5: \(keyPath): \(message)")
        // A password pasted into passwordEnv is never repeated in the error.
        #expect(error?.description.contains("hunter2") != true)
    }

    @Test func inboundUsernamesAreUniqueAcrossFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["a", "b"] {
            try Data(
                #"{ name: "\#(name)", inbound: { \#(Self.routes), auth: { username: "same", passwordEnv: "P" } } }"#
                    .utf8
            )
            .write(to: dir.appendingPathComponent(name + ".json5"))
        }
        let error = #expect(throws: ProfileError.self) { try ProfileLoader.loadDirectory(dir) }
        #expect(error?.keyPath == "inbound.auth.username")
        #expect(error?.message.hasPrefix("duplicate inbound username \"same\" (also in ") == true)
    }
}
