import Foundation
import Media
import SIP
import Testing

@testable import Gateway

/// The repository's `sip-profiles/`, found from this file's place in `Tests/GatewayTests/`.
private let shippedProfiles = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("sip-profiles", isDirectory: true)

/// A fresh directory under the system temp directory, one per test.
private func makeTempDir() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
        .appendingPathComponent("irisgw-profiles-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private func write(_ text: String, to dir: URL, as name: String) throws -> URL {
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url
}

// MARK: Shipped profiles

@Test func shippedProfilesLoadInFileNameOrder() throws {
    let profiles = try ProfileLoader.loadDirectory(shippedProfiles)
    #expect(profiles.map(\.name) == ["carrier-sim", "example-ip-auth", "example-registration"])
}

@Test func carrierSimProfileMatchesTheDesignExample() throws {
    let profile = try ProfileLoader.load(file: shippedProfiles.appendingPathComponent("carrier-sim.json5"))
    let outbound = try #require(profile.outbound)
    #expect(outbound.proxies == [ProxyAddress(host: "127.0.0.1", hostKind: .ipv4, port: 5090, transport: .udp)])
    #expect(outbound.fromDomain == "gw.example.net")
    #expect(outbound.auth?.username == "gw")
    #expect(outbound.auth?.passwordEnv == "CARRIER_SIM_PASSWORD")
    #expect(outbound.register == .init(enabled: false, expiresSec: 3600))
    #expect(outbound.numberFormat == .e164)
    #expect(outbound.allowedPrefixes == ["+1"])
    #expect(outbound.maxConcurrentCalls == 100 && outbound.callsPerSecond == 10 && outbound.ringTimeoutSec == 60)
    let inbound = try #require(profile.inbound)
    #expect(inbound.routes == [.init(did: "+15550001000", routingId: "alice"), .init(did: "*", routingId: "operator")])
    #expect(inbound.route(forDID: "+15550001000")?.routingId == "alice")
    #expect(inbound.route(forDID: "+15550009999")?.routingId == "operator")
    #expect(inbound.allows(source: "127.0.0.1") && !inbound.allows(source: "127.0.0.2"))
    #expect(inbound.ringTimeoutSec == 45)
    #expect(profile.media == .init(codecs: [.pcmu, .pcma, .g722], dtmf: .rfc4733, rtpTimeoutSec: 30))
    #expect(profile.sip == .init(transport: .udp, prack: .supported, sessionTimerSec: 1800, optionsPingSec: 30))
}

@Test func exampleProfilesCarryTheirDistinctiveSettings() throws {
    let registration = try ProfileLoader.load(
        file: shippedProfiles.appendingPathComponent("example-registration.json5"))
    #expect(registration.outbound?.register.enabled == true)
    #expect(registration.outbound?.numberFormat == .national)
    #expect(registration.outbound?.proxies.first?.hostKind == .domainName)
    #expect(registration.outbound?.auth?.passwordEnv == "RETAIL_SIP_PASSWORD")

    let ipAuth = try ProfileLoader.load(file: shippedProfiles.appendingPathComponent("example-ip-auth.json5"))
    #expect(ipAuth.outbound?.auth == nil)
    #expect(ipAuth.outbound?.proxies.count == 2)
    #expect(ipAuth.outbound?.proxies.allSatisfy { $0.transport == .tcp } == true)
    #expect(ipAuth.sip.transport == .tcp)
    #expect(ipAuth.inbound?.allows(source: "198.51.100.20") == true)
    #expect(ipAuth.inbound?.allows(source: "2001:db8:c0::5") == true)
    #expect(ipAuth.inbound?.allows(source: "198.51.100.200") == false)
    #expect(ipAuth.outbound?.callerId.policy == .pool && ipAuth.outbound?.assertedIdentity == .pai)
    #expect(ipAuth.outbound?.userPhone == true && ipAuth.outbound?.appHeaders == ["Diversion"])
    #expect(ipAuth.outbound?.failoverTimeoutMs == 2000)
    #expect(ipAuth.media.opus == .init(complexity: 3))
    #expect(ipAuth.media.opusSettings(default: .init()) == .init(complexity: 3))
}

@Test func defaultsApplyWhenKeysAreAbsent() throws {
    let profile = try ProfileLoader.parse(
        #"{ name: "min", outbound: { proxies: ["sip:gw.example.com"] } }"#, file: "min.json5")
    let outbound = try #require(profile.outbound)
    #expect(
        outbound.proxies == [
            ProxyAddress(
                host: "gw.example.com", hostKind: .domainName, port: 5060, transport: nil, hasExplicitPort: false)
        ])
    #expect(outbound.fromDomain == "gw.example.com")
    #expect(outbound.auth == nil)
    #expect(outbound.register == .init(enabled: false, expiresSec: 3600))
    #expect(outbound.numberFormat == .e164)
    #expect(outbound.defaultCountryCode == "1")
    #expect(outbound.allowedPrefixes == ["+1"])  // home country only, never international
    #expect(outbound.maxConcurrentCalls == 100 && outbound.callsPerSecond == 10 && outbound.ringTimeoutSec == 60)
    #expect(outbound.failoverTimeoutMs == 4000)
    #expect(profile.inbound == nil)
    #expect(profile.media == .init(codecs: [.pcmu, .pcma], dtmf: .rfc4733, rtpTimeoutSec: 30))
    #expect(profile.sip == .init(transport: .udp, prack: .supported, sessionTimerSec: 1800, optionsPingSec: 30))

    let inboundOnly = try ProfileLoader.parse(
        #"{ name: "in", inbound: { routes: [{ did: "*", routingId: "x" }] } }"#, file: "in.json5")
    #expect(inboundOnly.inbound?.allowFrom.map(\.description) == ["127.0.0.1/32"])
    #expect(inboundOnly.inbound?.ringTimeoutSec == 45)
    #expect(inboundOnly.inbound?.maxConcurrentCalls == 100 && inboundOnly.inbound?.callsPerSecond == 10)
    let budget = try ProfileLoader.parse(
        #"{ name: "b", inbound: { routes: [{ did: "*", routingId: "x" }], maxConcurrentCalls: 7, callsPerSecond: 3 } }"#,
        file: "b.json5")
    #expect(budget.inbound?.maxConcurrentCalls == 7 && budget.inbound?.callsPerSecond == 3)

    let natted = try ProfileLoader.parse(
        #"{ name: "n", \#(goodOutbound), sip: { advertise: "[2001:db8::7]:5062" }, media: { advertise: "198.51.100.4" } }"#,
        file: "n.json5")
    #expect(
        natted.sip.advertise == SIPAdvertisedAddress(host: "2001:db8::7", port: 5062)
            && natted.media.advertise == "198.51.100.4")

    let uk = try ProfileLoader.parse(
        #"{ name: "uk", outbound: { proxies: ["sip:[2001:db8::1]"], defaultCountryCode: "44" } }"#, file: "uk.json5")
    #expect(uk.outbound?.allowedPrefixes == ["+44"])
    #expect(uk.outbound?.nationalPrefix == "0" && uk.outbound?.internationalPrefix == "00")
    #expect(uk.outbound?.fromDomain == "[2001:db8::1]")
}

// MARK: Broken profiles

/// One broken profile: its text, and the key path and message the error must give.
struct BrokenProfile: Sendable, CustomStringConvertible {
    var label: String
    var text: String
    var keyPath: String
    var message: String
    var description: String { label }
}

private let goodOutbound = #"outbound: { proxies: ["sip:127.0.0.1:5090"] }"#

let brokenProfiles: [BrokenProfile] = [
    .init(
        label: "unknown top-level key",
        text: #"{ name: "t", outbond: { proxies: ["sip:a.example"] } }"#,
        keyPath: "outbond", message: "unknown key (did you mean outbound?)"),
    .init(
        label: "unknown key in an array element",
        text: #"{ name: "t", inbound: { routes: [{ did: "*", routingid: "a" }] } }"#,
        keyPath: "inbound.routes[0].routingid", message: "unknown key (did you mean routingId?)"),
    .init(
        label: "unknown key with no near match",
        text: #"{ name: "t", \#(goodOutbound), sip: { colour: "red" } }"#,
        keyPath: "sip.colour",
        message: "unknown key (allowed: transport, prack, sessionTimerSec, optionsPingSec, advertise, tls)"),
    .init(
        label: "string for an integer",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], maxConcurrentCalls: "100" } }"#,
        keyPath: "outbound.maxConcurrentCalls", message: #"expected an integer, found string "100""#),
    .init(
        label: "fraction for an integer",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], callsPerSecond: 2.5 } }"#,
        keyPath: "outbound.callsPerSecond", message: "expected an integer, found number 2.5"),
    .init(
        label: "string for a boolean",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], register: { enabled: "yes" } } }"#,
        keyPath: "outbound.register.enabled", message: #"expected true or false, found string "yes""#),
    .init(
        label: "string for an array",
        text: #"{ name: "t", outbound: { proxies: "sip:a.example" } }"#,
        keyPath: "outbound.proxies", message: #"expected an array, found string "sip:a.example""#),
    .init(
        label: "array for an object",
        text: #"{ name: "t", \#(goodOutbound), media: [] }"#,
        keyPath: "media", message: "expected an object, found an array"),
    .init(
        label: "top level not an object",
        text: #"["carrier"]"#,
        keyPath: "", message: "expected an object, found an array"),
    .init(
        label: "missing name",
        text: #"{ \#(goodOutbound) }"#,
        keyPath: "name", message: "missing required key"),
    .init(
        label: "bad name",
        text: #"{ name: "my trunk", \#(goodOutbound) }"#,
        keyPath: "name", message: #"must match [A-Za-z0-9_-]+, found "my trunk""#),
    .init(
        label: "neither outbound nor inbound",
        text: #"{ name: "t" }"#,
        keyPath: "", message: "a profile needs an outbound section, an inbound section or both"),
    .init(
        label: "missing proxies",
        text: #"{ name: "t", outbound: { fromDomain: "gw.example.net" } }"#,
        keyPath: "outbound.proxies", message: "missing required key"),
    .init(
        label: "empty proxies",
        text: #"{ name: "t", outbound: { proxies: [] } }"#,
        keyPath: "outbound.proxies", message: "must not be empty"),
    .init(
        label: "bad proxy URI",
        text: #"{ name: "t", outbound: { proxies: ["sip:127.0.0.1:5090", "sip:"] } }"#,
        keyPath: "outbound.proxies[1]", message: #"not a SIP URI: "sip:" (the host is missing)"#),
    .init(
        label: "proxy with a WebSocket transport",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example;transport=wss"] } }"#,
        keyPath: "outbound.proxies[0]",
        message: #"not a SIP URI: "sip:a.example;transport=wss" (transport wss is not supported (udp, tcp or tls))"#),
    .init(
        label: "sips: over UDP",
        text: #"{ name: "t", outbound: { proxies: ["sips:a.example;transport=udp"] } }"#,
        keyPath: "outbound.proxies[0]",
        message:
            #"not a SIP URI: "sips:a.example;transport=udp" (a sips: URI goes over TLS; transport=udp contradicts it)"#),
    .init(
        label: "unknown sip.tls key",
        text: #"{ name: "t", outbound: { proxies: ["sips:a.example"] }, sip: { tls: { caFiles: "ca.pem" } } }"#,
        keyPath: "sip.tls.caFiles",
        message: "unknown key (did you mean caFile?)"),
    .init(
        label: "a client certificate without its key",
        text: #"{ name: "t", outbound: { proxies: ["sips:a.example"] }, sip: { tls: { certificateFile: "gw.pem" } } }"#,
        keyPath: "sip.tls.keyFile",
        message: "missing: certificateFile needs its keyFile"),
    .init(
        label: "a server name that is no host",
        text: #"{ name: "t", outbound: { proxies: ["sips:a.example"] }, sip: { tls: { serverName: "a b" } } }"#,
        keyPath: "sip.tls.serverName",
        message: #"not a host name or IP address: "a b""#),
    .init(
        label: "password written instead of a variable name",
        text:
            #"{ name: "t", outbound: { proxies: ["sip:a.example"], auth: { username: "u", passwordEnv: "s3cret!" } } }"#,
        keyPath: "outbound.auth.passwordEnv",
        message:
            "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*); the password itself never goes in the file"),
    .init(
        label: "bad CIDR",
        text:
            #"{ name: "t", inbound: { allowFrom: ["10.0.0.0/8", "10.0.0.0/33"], routes: [{ did: "*", routingId: "a" }] } }"#,
        keyPath: "inbound.allowFrom[1]",
        message: #"not a CIDR network: "10.0.0.0/33" (the prefix length must be a number from 0 to 32)"#),
    .init(
        label: "CIDR with host bits",
        text: #"{ name: "t", inbound: { allowFrom: ["10.1.2.3/8"], routes: [{ did: "*", routingId: "a" }] } }"#,
        keyPath: "inbound.allowFrom[0]",
        message: #"not a CIDR network: "10.1.2.3/8" (host bits are set beyond /8; the network is 10.0.0.0/8)"#),
    .init(
        label: "bad DID",
        text: #"{ name: "t", inbound: { routes: [{ did: "5550001000", routingId: "a" }] } }"#,
        keyPath: "inbound.routes[0].did",
        message: #"must be an E.164 number ("+15550001000") or "*", found "5550001000""#),
    .init(
        label: "duplicate DID",
        text: #"{ name: "t", inbound: { routes: [{ did: "*", routingId: "a" }, { did: "*", routingId: "b" }] } }"#,
        keyPath: "inbound.routes[1].did", message: #"duplicate did "*" (also inbound.routes[0])"#),
    .init(
        label: "bad enum value",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], numberFormat: "E164" } }"#,
        keyPath: "outbound.numberFormat", message: #"must be one of "e164", "national", "raw", found "E164""#),
    .init(
        label: "bad codec in a list",
        text: #"{ name: "t", \#(goodOutbound), media: { codecs: ["PCMU", "G729"] } }"#,
        keyPath: "media.codecs[1]", message: #"must be one of "PCMU", "PCMA", "G722", "opus", found "G729""#),
    .init(
        label: "sessionTimerSec below 90",
        text: #"{ name: "t", \#(goodOutbound), sip: { sessionTimerSec: 60 } }"#,
        keyPath: "sip.sessionTimerSec", message: "must be 0 (disabled) or at least 90 (RFC 4028), found 60"),
    .init(
        label: "advertised SIP address with a bad port",
        text: #"{ name: "t", \#(goodOutbound), sip: { advertise: "203.0.113.7:70000" } }"#,
        keyPath: "sip.advertise",
        message: #"must be HOST, HOST:PORT or [IPV6]:PORT (port 1-65535), found "203.0.113.7:70000""#),
    .init(
        label: "advertised RTP address that is a name",
        text: #"{ name: "t", \#(goodOutbound), media: { advertise: "gw.example.net" } }"#,
        keyPath: "media.advertise", message: #"must be a numeric IPv4 or IPv6 address, found "gw.example.net""#),
    .init(
        label: "unknown media encryption",
        text: #"{ name: "t", \#(goodOutbound), media: { encryption: "srtp" } }"#,
        keyPath: "media.encryption", message: #"must be one of "none", "optional", "required", found "srtp""#),
    .init(
        label: "an SRTP suite listed twice",
        text:
            #"{ name: "t", \#(goodOutbound), media: { srtpSuites: ["AES_CM_128_HMAC_SHA1_80", "AES_CM_128_HMAC_SHA1_80"] } }"#,
        keyPath: "media.srtpSuites[1]", message: "AES_CM_128_HMAC_SHA1_80 is listed twice"),
    .init(
        label: "SRTP required where no proxy could carry the keys",
        text: #"{ name: "t", outbound: { proxies: ["sip:192.0.2.1:5060"] }, media: { encryption: "required" } }"#,
        keyPath: "media.encryption",
        message:
            "is required but no proxy is sips: or transport=tls, and SDES keys are sent only over TLS (set media.sdesRequiresTLS: false to send them over UDP or TCP)"
    ),
    .init(
        label: "out-of-range integer",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], ringTimeoutSec: 0 } }"#,
        keyPath: "outbound.ringTimeoutSec", message: "must be from 1 to 600, found 0"),
    .init(
        label: "a failover time too short for a live target's 100 Trying",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], failoverTimeoutMs: 200 } }"#,
        keyPath: "outbound.failoverTimeoutMs", message: "must be 0 (Timer B only) or from 500 to 31000, found 200"),
    .init(
        label: "a failover time past Timer B",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], failoverTimeoutMs: 40000 } }"#,
        keyPath: "outbound.failoverTimeoutMs", message: "must be from 0 to 31000, found 40000"),
    .init(
        label: "a failover time in seconds",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], failoverTimeoutMs: "4s" } }"#,
        keyPath: "outbound.failoverTimeoutMs", message: #"expected an integer, found string "4s""#),
    .init(
        label: "bad allowed prefix",
        text: #"{ name: "t", outbound: { proxies: ["sip:a.example"], allowedPrefixes: ["+1", "1-800"] } }"#,
        keyPath: "outbound.allowedPrefixes[1]",
        message: #"a prefix is an optional + or * and digits ("+1", "+4420"), found "1-800""#),
    .init(
        label: "malformed JSON5: missing comma between array elements",
        text:
            "{\n  name: \"t\",\n  inbound: {\n    routes: [\n      { did: \"*\", routingId: \"a\" }\n      { did: \"+15550001000\", routingId: \"b\" },\n    ],\n  },\n}\n",
        keyPath: "inbound.routes",
        message: "JSON5 syntax error at line 6, column 7: expected ',' or ']' after element 0, found '{'"),
    .init(
        label: "malformed JSON5: unquoted string value",
        text: "{\n  name: carrier,\n}",
        keyPath: "name",
        message:
            "JSON5 syntax error at line 2, column 9: unexpected word 'carrier': expected a value (strings need quotes)"),
    .init(
        label: "duplicate key",
        text: "{\n  name: \"a\",\n  name: \"b\",\n}",
        keyPath: "name", message: "JSON5 syntax error at line 3, column 3: duplicate key")
]

@Test(arguments: brokenProfiles)
func brokenProfileNamesFileAndKeyPath(_ broken: BrokenProfile) throws {
    let dir = try makeTempDir()
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = try write(broken.text, to: dir, as: "broken.json5")
    let error = #expect(throws: ProfileError.self) { try ProfileLoader.load(file: url) }
    #expect(error?.file == url.relativePath)
    #expect(error?.keyPath == broken.keyPath)
    #expect(error?.message == broken.message)
    let prefix = broken.keyPath.isEmpty ? "\(url.relativePath): " : "\(url.relativePath): \(broken.keyPath): "
    #expect(error?.description == prefix + broken.message)
}

@Test func syntaxErrorsCarryLineAndColumn() throws {
    let error = #expect(throws: ProfileError.self) {
        try ProfileLoader.parse("{\n  name: \"t\"\n  outbound: {}\n}", file: "x.json5")
    }
    #expect(error?.line == 3)
    #expect(error?.column == 3)
    #expect(error?.keyPath == "")
    #expect(
        error?.description
            == "x.json5: JSON5 syntax error at line 3, column 3: expected ',' or '}' after the value of 'name', found 'o'"
    )
}

@Test func duplicateNamesAcrossFilesNameBothFiles() throws {
    let dir = try makeTempDir()
    defer { try? FileManager.default.removeItem(at: dir) }
    let first = try write(#"{ name: "same", \#(goodOutbound) }"#, to: dir, as: "a.json5")
    let second = try write(#"{ name: "same", \#(goodOutbound) }"#, to: dir, as: "b.json5")
    let error = #expect(throws: ProfileError.self) { try ProfileLoader.loadDirectory(dir) }
    #expect(error?.file == second.relativePath)
    #expect(error?.keyPath == "name")
    #expect(error?.message == "duplicate profile name \"same\" (also in \(first.relativePath))")
}

@Test func directoryWithoutProfilesIsAnError() throws {
    let dir = try makeTempDir()
    defer { try? FileManager.default.removeItem(at: dir) }
    _ = try write("not a profile", to: dir, as: "README.md")
    _ = try write(#"{ name: "hidden", \#(goodOutbound) }"#, to: dir, as: ".hidden.json5")
    let error = #expect(throws: ProfileError.self) { try ProfileLoader.loadDirectory(dir) }
    #expect(error?.file == dir.relativePath)
    #expect(error?.message == "no trunk profiles (*.json5 files) in the directory")
}

@Test func directoryStopsAtTheFirstBadFile() throws {
    let dir = try makeTempDir()
    defer { try? FileManager.default.removeItem(at: dir) }
    _ = try write(#"{ name: "good", \#(goodOutbound) }"#, to: dir, as: "a.json5")
    let bad = try write(#"{ name: "bad", \#(goodOutbound), extra: 1 }"#, to: dir, as: "b.json5")
    let error = #expect(throws: ProfileError.self) { try ProfileLoader.loadDirectory(dir) }
    #expect(error?.file == bad.relativePath)
    #expect(error?.keyPath == "extra")
}

// MARK: Secrets

@Test func passwordComesFromTheNamedEnvironmentVariable() throws {
    let profile = try ProfileLoader.load(file: shippedProfiles.appendingPathComponent("carrier-sim.json5"))
    let auth = try #require(profile.outbound?.auth)
    #expect(try auth.password(environment: ["CARRIER_SIM_PASSWORD": "pa55"]) == "pa55")

    let unset = #expect(throws: ProfileError.self) { try auth.password(environment: ["OTHER": "x"]) }
    #expect(unset?.file == profile.source)
    #expect(unset?.keyPath == "outbound.auth.passwordEnv")
    #expect(
        unset?.description.hasSuffix("outbound.auth.passwordEnv: environment variable CARRIER_SIM_PASSWORD is not set")
            == true)

    let empty = #expect(throws: ProfileError.self) { try auth.password(environment: ["CARRIER_SIM_PASSWORD": ""]) }
    #expect(empty?.message == "environment variable CARRIER_SIM_PASSWORD is empty")
}

@Test(arguments: [(0, 0), (500, 500), (2500, 2500), (31000, 31000)])
func failoverTimeIsRead(_ ms: Int, _ expected: Int) throws {
    let p = try ProfileLoader.parse(
        #"{ name: "t", outbound: { proxies: ["sip:a.example"], failoverTimeoutMs: \#(ms) } }"#, file: "t.json5")
    #expect(p.outbound?.failoverTimeoutMs == expected)
}

// MARK: Proxy addresses

@Test(arguments: [
    ("sip:127.0.0.1:5090;transport=udp", ProxyAddress(host: "127.0.0.1", hostKind: .ipv4, port: 5090, transport: .udp)),
    (
        "SIP:Proxy.Example.com",
        ProxyAddress(
            host: "Proxy.Example.com", hostKind: .domainName, port: 5060, transport: nil, hasExplicitPort: false)
    ),
    (
        "sip:[2001:db8::10]:5070;Transport=TCP",
        ProxyAddress(host: "2001:db8::10", hostKind: .ipv6, port: 5070, transport: .tcp)
    ),
    ("sip:[::1]", ProxyAddress(host: "::1", hostKind: .ipv6, port: 5060, transport: nil, hasExplicitPort: false)),
    (
        "sips:sbc.example",
        ProxyAddress(
            host: "sbc.example", hostKind: .domainName, port: 5061, transport: nil, hasExplicitPort: false, secure: true
        )
    ),
    ("SIPS:192.0.2.1:5071", ProxyAddress(host: "192.0.2.1", hostKind: .ipv4, port: 5071, transport: nil, secure: true)),
    (
        "sips:192.0.2.1;transport=tcp",
        ProxyAddress(
            host: "192.0.2.1", hostKind: .ipv4, port: 5061, transport: .tls, hasExplicitPort: false, secure: true)
    ),
    (
        "sip:sbc.example;transport=TLS",
        ProxyAddress(host: "sbc.example", hostKind: .domainName, port: 5061, transport: .tls, hasExplicitPort: false)
    ),
    ("sip:192.0.2.1:5081;transport=tls", ProxyAddress(host: "192.0.2.1", hostKind: .ipv4, port: 5081, transport: .tls))
])
func proxyAddressParses(_ text: String, _ expected: ProxyAddress) throws {
    #expect(try ProxyAddress(parsing: text) == expected)
}

@Test(arguments: [
    ("sip:", "the host is missing"),
    ("127.0.0.1:5060", "must start with sip: or sips:"),
    ("sips:", "the host is missing"),
    ("sips:a.example;transport=udp", "a sips: URI goes over TLS; transport=udp contradicts it"),
    ("sip:user@a.example", "a proxy URI has no user part"),
    ("sip:a.example:0", "the port \"0\" is not a number from 1 to 65535"),
    ("sip:a.example:65536", "the port \"65536\" is not a number from 1 to 65535"),
    ("sip:a.example:", "the port \"\" is not a number from 1 to 65535"),
    ("sip:a.example;lr", "unsupported parameter \"lr\" (only transport=udp, tcp or tls)"),
    ("sip:a.example;transport=sctp", "transport sctp is not supported (udp, tcp or tls)"),
    ("sip:a.example;transport=quic", "unknown transport \"quic\" (udp, tcp or tls)"),
    ("sip:a.example;transport=udp;transport=tcp", "transport is given twice"),
    ("sip:256.1.1.1", "\"256.1.1.1\" is not an IPv4 address"),
    ("sip:2001:db8::1", "an IPv6 address must be in brackets: sip:[::1]:5060"),
    ("sip:[2001:db8::zz]", "\"2001:db8::zz\" is not an IPv6 address"),
    ("sip:-bad.example", "a host name label cannot start or end with '-'"),
    ("sip:a..example", "the host name \"a..example\" has an empty label"),
    ("sip:a_b.example", "\"a_b.example\" is not a valid host name"),
    ("sip:a.example?subject=x", "headers are not allowed in a proxy URI")
])
func proxyAddressRefuses(_ text: String, _ reason: String) {
    let error = #expect(throws: ProxyAddressError.self) { try ProxyAddress(parsing: text) }
    #expect(error?.reason == reason)
}

@Test func proxyAddressWritesItsURI() throws {
    #expect(try ProxyAddress(parsing: "sip:[::1]:5070;transport=tcp").uri == "sip:[::1]:5070;transport=tcp")
    #expect(try ProxyAddress(parsing: "sip:a.example").uri == "sip:a.example:5060")
    #expect(try ProxyAddress(parsing: "sips:a.example").uri == "sips:a.example:5061")
    #expect(try ProxyAddress(parsing: "sip:a.example;transport=tls").uri == "sip:a.example:5061;transport=tls")
    #expect(
        try ProxyAddress(parsing: "sips:a.example").isTLS && ProxyAddress(parsing: "sip:a.example;transport=tls").isTLS)
}

@Test func sipTLSKeysLoad() throws {
    let text = #"""
        { name: "t", outbound: { proxies: ["sips:sbc.carrier.example", "sip:192.0.2.1;transport=tls"] },
          sip: { transport: "tls", tls: { caFile: "/etc/irisgw/carrier-ca.pem", serverName: "SBC.Carrier.Example",
                                          certificateFile: "/etc/irisgw/gw.pem", keyFile: "/etc/irisgw/gw.key",
                                          allowWildcardCertificates: true } } }
        """#
    let p = try ProfileLoader.parse(text, file: "t.json5")
    #expect(p.sip.transport == .tls)
    #expect(
        p.sip.tls
            == .init(
                caFile: "/etc/irisgw/carrier-ca.pem", serverName: "sbc.carrier.example",
                certificateFile: "/etc/irisgw/gw.pem", keyFile: "/etc/irisgw/gw.key", allowWildcardCertificates: true))
    #expect(p.outbound?.proxies.map(\.isTLS) == [true, true])
}

@Test func mediaEncryptionKeysLoad() throws {
    let tls = try ProfileLoader.parse(
        #"""
        { name: "t", outbound: { proxies: ["sips:sbc.carrier.example"] },
          media: { encryption: "required", srtpSuites: ["AEAD_AES_128_GCM", "AES_CM_128_HMAC_SHA1_80"] } }
        """#, file: "t.json5")
    #expect(tls.media.encryption == .required)
    #expect(tls.media.srtpSuites == [.aeadAES128GCM, .aesCM128HmacSHA1_80])
    #expect(tls.media.sdesRequiresTLS)
    // Clear SDES, when the profile says so.
    let clear = try ProfileLoader.parse(
        #"""
        { name: "t", outbound: { proxies: ["sip:192.0.2.1"] }, media: { encryption: "required", sdesRequiresTLS: false } }
        """#, file: "t.json5")
    #expect(!clear.media.sdesRequiresTLS)
    #expect(clear.media.srtpSuites == SRTPSuite.allCases)
    let plain = try ProfileLoader.parse(#"{ name: "t", outbound: { proxies: ["sip:192.0.2.1"] } }"#, file: "t.json5")
    #expect(plain.media.encryption == TrunkProfile.MediaSettings.Encryption.none)
}

// MARK: CIDR

@Test(arguments: [
    ("127.0.0.1/32", "127.0.0.1", true),
    ("127.0.0.1/32", "127.0.0.2", false),
    ("10.0.0.0/8", "10.255.1.2", true),
    ("10.0.0.0/8", "11.0.0.1", false),
    ("192.168.4.0/22", "192.168.7.255", true),
    ("192.168.4.0/22", "192.168.8.0", false),
    ("0.0.0.0/0", "203.0.113.9", true),
    ("10.0.0.0/8", "::ffff:10.1.2.3", true),  // IPv4-mapped, as dual-stack sockets report
    ("10.0.0.0/8", "2001:db8::1", false),
    ("::1/128", "::1", true),
    ("::1/128", "[::1]", true),
    ("::1/128", "::2", false),
    ("2001:db8::/32", "2001:db8:ffff::1", true),
    ("2001:db8::/32", "2001:db9::1", false),
    ("2001:db8::/32", "10.0.0.1", false),
    ("2001:db8:5e1f::/48", "2001:db8:5e1f:1::", true),
    ("198.51.100.7", "198.51.100.7", true),  // a bare address is a /32
    ("198.51.100.7", "198.51.100.8", false),
    ("2001:db8::7", "2001:db8::7", true),  // ... or a /128
    ("2001:db8::7", "2001:db8::8", false),
    ("10.0.0.0/8", "not-an-address", false)
])
func cidrContains(_ cidr: String, _ address: String, _ expected: Bool) throws {
    #expect(try CIDR(parsing: cidr).contains(address) == expected)
}

@Test func cidrPrefixLengthsAndDescriptions() throws {
    #expect(try CIDR(parsing: "198.51.100.7").prefixLength == 32)
    #expect(try CIDR(parsing: "2001:DB8::7").description == "2001:db8::7/128")
    #expect(try CIDR(parsing: "2001:db8::/32").description == "2001:db8::/32")
    for bad in ["", "10.0.0.0/", "10.0.0.0/-1", "::/129", "10.0.0/8", "host.example/24", "10.0.0.0/8/8"] {
        #expect(throws: CIDRError.self) { try CIDR(parsing: bad) }
    }
}

// MARK: Number policy

private let nanp = TrunkProfile.Outbound(
    proxies: [ProxyAddress(host: "a.example", hostKind: .domainName)],
    allowedPrefixes: ["+1"])
private let ukNational = TrunkProfile.Outbound(
    proxies: [ProxyAddress(host: "a.example", hostKind: .domainName)],
    numberFormat: .national, defaultCountryCode: "44",
    allowedPrefixes: ["+44", "+1"])
private let rawTrunk = TrunkProfile.Outbound(
    proxies: [ProxyAddress(host: "a.example", hostKind: .domainName)],
    numberFormat: .raw, allowedPrefixes: ["9", "+1"])

@Test(arguments: [
    ("+1 (555) 123-4567", "+15551234567"),
    ("+1.555.123.4567", "+15551234567"),
    ("555-123-4567", "+15551234567"),  // national: + and the country code added
    ("1 555 123 4567", "+15551234567"),  // national with the trunk prefix 1
    ("0015551234567", "+15551234567"),  // 00 is read as +
    ("01115551234567", "+15551234567")  // so is the NANP access code 011
])
func nanpNumbersNormalise(_ raw: String, _ expected: String) throws {
    #expect(try nanp.normalize(raw) == expected)
}

@Test(arguments: [
    ("020 7946 0000", "+442079460000", "02079460000"),  // trunk prefix 0 stripped, then restored
    ("2079460000", "+442079460000", "02079460000"),
    ("0044 20 7946 0000", "+442079460000", "02079460000"),
    ("+1 555 123 4567", "+15551234567", "0015551234567")  // foreign: international access code
])
func nationalTrunkNormalisesAndDials(_ raw: String, _ e164: String, _ dial: String) throws {
    let number = try ukNational.normalize(raw)
    #expect(number == e164)
    #expect(ukNational.dialString(forE164: number) == dial)
}

@Test func e164AndRawTrunksDialAsNormalised() throws {
    #expect(nanp.dialString(forE164: "+15551234567") == "+15551234567")
    #expect(try rawTrunk.normalize("9-555-1234") == "95551234")
    #expect(rawTrunk.dialString(forE164: "95551234") == "95551234")
    #expect(try rawTrunk.normalize("+1 555 123 4567") == "+15551234567")
}

@Test(arguments: [
    ("555-CALL-NOW", NumberError.incorrectParams),
    ("", NumberError.incorrectParams),
    ("+", NumberError.incorrectParams),
    ("++15551234567", NumberError.incorrectParams),
    ("+1555#1234", NumberError.incorrectParams),
    ("5551234567*", NumberError.incorrectParams),
    ("+1234567890123456", NumberError.incorrectParams),  // 16 digits: longer than E.164 allows
    ("+0123456", NumberError.incorrectParams),  // no country code starts with 0
    ("+44 20 7946 0000", NumberError.callForbidden),  // not in allowedPrefixes
    ("00 44 20 7946 0000", NumberError.callForbidden),
    ("*67", NumberError.callForbidden)  // feature codes stay as they are and must be allowed
])
func badNumbersAreRefused(_ raw: String, _ code: Int) {
    let error = #expect(throws: NumberError.self) { try nanp.normalize(raw) }
    #expect(error?.code == code)
    #expect(error?.message.isEmpty == false)
}

@Test func refusalsExplainThemselves() {
    let forbidden = #expect(throws: NumberError.self) { try nanp.normalize("+44 20 7946 0000") }
    #expect(forbidden?.message == "call forbidden: +442079460000 does not start with an allowed prefix (+1)")
    let letters = #expect(throws: NumberError.self) { try nanp.normalize("555-CALL") }
    #expect(
        letters?.message == "incorrect params: \"555-CALL\" is not a phone number (digits, optionally after + or *)")
}

@Test func profileWithoutOutboundRefusesEveryNumber() throws {
    let profile = TrunkProfile(name: "in-only", inbound: .init(routes: [.init(did: "*", routingId: "a")]))
    let error = #expect(throws: NumberError.self) { try profile.normalize("+15551234567") }
    #expect(error?.code == NumberError.callForbidden)
}
