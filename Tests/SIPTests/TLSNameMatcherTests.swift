import Testing

@testable import SIP
@testable import TLS

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
        Row(
            name: "case and a trailing dot do not count", names: .init(dnsNames: ["Carrier.TEST."]),
            expected: "carrier.test", matches: true),
        Row(
            name: "one of several dNSNames", names: .init(dnsNames: ["a.test", "carrier.test"]),
            expected: "carrier.test", matches: true),
        Row(name: "another name", names: .init(dnsNames: ["other.test"]), expected: "carrier.test", matches: false),
        Row(
            name: "a suffix is not the name", names: .init(dnsNames: ["test"]), expected: "carrier.test", matches: false
        ),
        Row(
            name: "the name inside a longer one", names: .init(dnsNames: ["carrier.test.evil"]),
            expected: "carrier.test", matches: false),
        Row(name: "URI sip:domain", names: .init(uris: ["sip:carrier.test"]), expected: "carrier.test", matches: true),
        Row(
            name: "URI with a port and parameters", names: .init(uris: ["sip:carrier.test:5061;transport=tls"]),
            expected: "carrier.test",
            matches: true),
        Row(
            name: "URI with a user part is no domain identity", names: .init(uris: ["sip:gw@carrier.test"]),
            expected: "carrier.test",
            matches: false),
        Row(
            name: "URI of another scheme", names: .init(uris: ["https://carrier.test/"]), expected: "carrier.test",
            matches: false),
        Row(
            name: "common name when there is no subjectAltName", names: .init(commonNames: ["carrier.test"]),
            expected: "carrier.test",
            matches: true),
        Row(
            name: "no CN fallback when subjectAltName exists",
            names: .init(dnsNames: ["other.test"], commonNames: ["carrier.test"]),
            expected: "carrier.test", matches: false),
        Row(
            name: "no CN fallback even with only an unrelated SAN type",
            names: .init(ipAddresses: ["192.0.2.1"], commonNames: ["carrier.test"]), expected: "carrier.test",
            matches: false),
        Row(
            name: "RFC 5922: a wildcard never identifies a SIP domain", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "sbc.carrier.test", matches: false),
        Row(
            name: "RFC 6125 when allowed: the whole leftmost label", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "sbc.carrier.test", wildcards: true, matches: true),
        Row(
            name: "a wildcard covers one label, not two", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "a.sbc.carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "a wildcard does not cover the parent", names: .init(dnsNames: ["*.carrier.test"]),
            expected: "carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "no partial-label wildcard", names: .init(dnsNames: ["sbc*.carrier.test"]),
            expected: "sbc1.carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "no wildcard below two labels", names: .init(dnsNames: ["*.test"]), expected: "carrier.test",
            wildcards: true,
            matches: false),
        Row(
            name: "no wildcard but in the leftmost label", names: .init(dnsNames: ["sbc.*.test"]),
            expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "never a wildcard in a URI entry", names: .init(uris: ["sip:*.carrier.test"]),
            expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "a wildcard CN (no SAN) does not match", names: .init(commonNames: ["*.carrier.test"]),
            expected: "sbc.carrier.test",
            wildcards: true, matches: false),
        Row(
            name: "an address against iPAddress", names: .init(ipAddresses: ["192.0.2.1"]), expected: "192.0.2.1",
            matches: true),
        Row(
            name: "IPv6 compared by value", names: .init(ipAddresses: ["2001:db8::1"]), expected: "[2001:DB8:0::1]",
            matches: true),
        Row(
            name: "an address is not a dNSName", names: .init(dnsNames: ["192.0.2.1"]), expected: "192.0.2.1",
            matches: false),
        Row(
            name: "an address never matches a wildcard", names: .init(dnsNames: ["*.2.1"]), expected: "192.0.2.1",
            wildcards: true,
            matches: false),
        Row(
            name: "nothing is expected: nothing matches", names: .init(dnsNames: ["carrier.test"]), expected: "",
            matches: false)
    ]

    @Test(arguments: rows)
    func matches(_ row: Row) {
        #expect(
            TLSNameMatcher.matches(row.names, expected: row.expected, policy: .sip(allowWildcards: row.wildcards))
                == row.matches)
    }

    /// One certificate, two policies: SIP's RFC 5922 (no wildcards) and HTTPS's RFC 6125 /
    /// RFC 2818, side by side.
    struct PolicyRow: Sendable, CustomStringConvertible {
        var name: String
        var names: TLSCertificateNames
        var expected: String
        var sip: Bool
        var https: Bool
        var description: String { name }
    }

    static let policyRows: [PolicyRow] = [
        PolicyRow(
            name: "dNSName equal", names: .init(dnsNames: ["api.example.test"]), expected: "api.example.test",
            sip: true, https: true),
        PolicyRow(
            name: "dNSName case and trailing dot", names: .init(dnsNames: ["API.Example.Test."]),
            expected: "api.example.test",
            sip: true, https: true),
        PolicyRow(
            name: "leftmost-label wildcard", names: .init(dnsNames: ["*.example.test"]), expected: "api.example.test",
            sip: false, https: true),
        PolicyRow(
            name: "wildcard covers one label only", names: .init(dnsNames: ["*.example.test"]),
            expected: "a.api.example.test",
            sip: false, https: false),
        PolicyRow(
            name: "wildcard does not cover the parent", names: .init(dnsNames: ["*.example.test"]),
            expected: "example.test",
            sip: false, https: false),
        PolicyRow(
            name: "no partial-label wildcard", names: .init(dnsNames: ["api*.example.test"]),
            expected: "api1.example.test",
            sip: false, https: false),
        PolicyRow(
            name: "no wildcard below two labels", names: .init(dnsNames: ["*.test"]), expected: "example.test",
            sip: false, https: false),
        PolicyRow(
            name: "sip: URI entry is SIP's only", names: .init(uris: ["sip:api.example.test"]),
            expected: "api.example.test",
            sip: true, https: false),
        PolicyRow(
            name: "https URI entry is no HTTPS identity either", names: .init(uris: ["https://api.example.test/"]),
            expected: "api.example.test", sip: false, https: false),
        PolicyRow(
            name: "common name without subjectAltName: SIP only", names: .init(commonNames: ["api.example.test"]),
            expected: "api.example.test", sip: true, https: false),
        PolicyRow(
            name: "IPv4 host against iPAddress", names: .init(ipAddresses: ["127.0.0.1"]), expected: "127.0.0.1",
            sip: true, https: true),
        PolicyRow(
            name: "IPv6 host by value", names: .init(ipAddresses: ["::1"]), expected: "[0:0::1]", sip: true, https: true
        ),
        PolicyRow(
            name: "IP host is not a dNSName", names: .init(dnsNames: ["127.0.0.1"]), expected: "127.0.0.1", sip: false,
            https: false),
        PolicyRow(
            name: "IP host never by common name", names: .init(commonNames: ["127.0.0.1"]), expected: "127.0.0.1",
            sip: false, https: false),
        PolicyRow(
            name: "wrong host", names: .init(dnsNames: ["other.test"], ipAddresses: ["127.0.0.1"]),
            expected: "localhost",
            sip: false, https: false),
        PolicyRow(
            name: "a wildcard never matches an address", names: .init(dnsNames: ["*.0.0.1"]), expected: "127.0.0.1",
            sip: false, https: false)
    ]

    @Test(arguments: policyRows)
    func policies(_ row: PolicyRow) {
        #expect(
            TLSNameMatcher.matches(row.names, expected: row.expected, policy: .sip(allowWildcards: false)) == row.sip)
        #expect(TLSNameMatcher.matches(row.names, expected: row.expected, policy: .https) == row.https)
    }

    @Test func httpsListsTheNamesItChecks() {
        let names = TLSCertificateNames(
            dnsNames: ["a.test"], uris: ["sip:b.test"], ipAddresses: ["127.0.0.1"], commonNames: ["c.test"])
        #expect(TLSNameMatcher.presented(names, policy: .https) == ["a.test", "127.0.0.1"])
    }

    @Test func presentedNamesAreTheOnesThatCount() {
        #expect(
            TLSCertificateNames(dnsNames: ["a.test"], uris: ["sip:b.test"], commonNames: ["c.test"]).presented == [
                "sip:b.test", "a.test"
            ])
        #expect(TLSCertificateNames(commonNames: ["c.test"]).presented == ["c.test"])
    }
}
