import Testing
@testable import SIP

/// RFC 5922 §7 (which names of a certificate identify a SIP domain, and how they compare),
/// with RFC 6125 §6.4.3 for wildcards when a trunk allows them, as a table.
struct TLSNameMatcherTests {
    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var names: TLSCertificateNames
        var expected: String
        var wildcards = false
        var matches: Bool
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "dNSName equal", names: .init(dnsNames: ["carrier.test"]), expected: "carrier.test", matches: true),
        Row(name: "case and a trailing dot do not count", names: .init(dnsNames: ["Carrier.TEST."]), expected: "carrier.test", matches: true),
        Row(name: "one of several dNSNames", names: .init(dnsNames: ["a.test", "carrier.test"]), expected: "carrier.test", matches: true),
        Row(name: "another name", names: .init(dnsNames: ["other.test"]), expected: "carrier.test", matches: false),
        Row(name: "a suffix is not the name", names: .init(dnsNames: ["test"]), expected: "carrier.test", matches: false),
        Row(name: "the name inside a longer one", names: .init(dnsNames: ["carrier.test.evil"]), expected: "carrier.test", matches: false),
        Row(name: "URI sip:domain", names: .init(uris: ["sip:carrier.test"]), expected: "carrier.test", matches: true),
        Row(name: "URI with a port and parameters", names: .init(uris: ["sip:carrier.test:5061;transport=tls"]), expected: "carrier.test",
            matches: true),
        Row(name: "URI with a user part is no domain identity", names: .init(uris: ["sip:gw@carrier.test"]), expected: "carrier.test",
            matches: false),
        Row(name: "URI of another scheme", names: .init(uris: ["https://carrier.test/"]), expected: "carrier.test", matches: false),
        Row(name: "common name when there is no subjectAltName", names: .init(commonNames: ["carrier.test"]), expected: "carrier.test",
            matches: true),
        Row(name: "no CN fallback when subjectAltName exists", names: .init(dnsNames: ["other.test"], commonNames: ["carrier.test"]),
            expected: "carrier.test", matches: false),
        Row(name: "no CN fallback even with only an unrelated SAN type",
            names: .init(ipAddresses: ["192.0.2.1"], commonNames: ["carrier.test"]), expected: "carrier.test", matches: false),
        Row(name: "RFC 5922: a wildcard never identifies a SIP domain", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "sbc.carrier.test", matches: false),
        Row(name: "RFC 6125 when allowed: the whole leftmost label", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "sbc.carrier.test", wildcards: true, matches: true),
        Row(name: "a wildcard covers one label, not two", names: .init(dnsNames: ["*.carrier.test"]), expected: "a.sbc.carrier.test",
            wildcards: true, matches: false),
        Row(name: "a wildcard does not cover the parent", names: .init(dnsNames: ["*.carrier.test"]), expected: "carrier.test",
            wildcards: true, matches: false),
        Row(name: "no partial-label wildcard", names: .init(dnsNames: ["sbc*.carrier.test"]), expected: "sbc1.carrier.test",
            wildcards: true, matches: false),
        Row(name: "no wildcard below two labels", names: .init(dnsNames: ["*.test"]), expected: "carrier.test", wildcards: true,
            matches: false),
        Row(name: "no wildcard but in the leftmost label", names: .init(dnsNames: ["sbc.*.test"]), expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(name: "never a wildcard in a URI entry", names: .init(uris: ["sip:*.carrier.test"]), expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(name: "a wildcard CN (no SAN) does not match", names: .init(commonNames: ["*.carrier.test"]), expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(name: "an address against iPAddress", names: .init(ipAddresses: ["192.0.2.1"]), expected: "192.0.2.1", matches: true),
        Row(name: "IPv6 compared by value", names: .init(ipAddresses: ["2001:db8::1"]), expected: "[2001:DB8:0::1]", matches: true),
        Row(name: "an address is not a dNSName", names: .init(dnsNames: ["192.0.2.1"]), expected: "192.0.2.1", matches: false),
        Row(name: "an address never matches a wildcard", names: .init(dnsNames: ["*.2.1"]), expected: "192.0.2.1", wildcards: true,
            matches: false),
        Row(name: "nothing is expected: nothing matches", names: .init(dnsNames: ["carrier.test"]), expected: "", matches: false),
    ]

    @Test(arguments: rows)
    func matches(_ row: Row) {
        #expect(TLSNameMatcher.matches(row.names, expected: row.expected, allowWildcards: row.wildcards) == row.matches)
    }

    @Test func presentedNamesAreTheOnesThatCount() {
        #expect(TLSCertificateNames(dnsNames: ["a.test"], uris: ["sip:b.test"], commonNames: ["c.test"]).presented == ["sip:b.test", "a.test"])
        #expect(TLSCertificateNames(commonNames: ["c.test"]).presented == ["c.test"])
    }
}
