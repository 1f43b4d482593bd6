import Glibc

/// The identities a certificate presents, as RFC 5922 §7.1 reads them: subjectAltName
/// entries of type URI and dNSName (and iPAddress, for peers named by address), and the
/// subject's common names, which count only when the certificate has no subjectAltName.
public struct TLSCertificateNames: Sendable, Equatable {
    public var dnsNames: [String]
    /// URI entries as written (`sip:carrier.example`).
    public var uris: [String]
    /// iPAddress entries as text (`192.0.2.1`, `2001:db8::1`).
    public var ipAddresses: [String]
    public var commonNames: [String]
    /// The certificate has a subjectAltName extension (then the common name is never used).
    public var hasSubjectAltName: Bool

    public init(dnsNames: [String] = [], uris: [String] = [], ipAddresses: [String] = [], commonNames: [String] = [],
                hasSubjectAltName: Bool? = nil) {
        self.dnsNames = dnsNames
        self.uris = uris
        self.ipAddresses = ipAddresses
        self.commonNames = commonNames
        self.hasSubjectAltName = hasSubjectAltName ?? !(dnsNames.isEmpty && uris.isEmpty && ipAddresses.isEmpty)
    }

    /// What an error message lists: the names that count, in certificate order.
    public var presented: [String] {
        hasSubjectAltName ? uris + dnsNames + ipAddresses : commonNames
    }
}

/// Whether a certificate identifies the SIP domain we meant to reach (RFC 5922 §7.2, with
/// RFC 6125 §6.4.3 for wildcards when they are allowed). A plain function of values, tested
/// as a table.
///
/// - The expected name is the host of the URI we were given (before DNS), lower case.
/// - A `sip:` URI entry with no user part matches when its host equals the name. URI
///   entries never match by wildcard.
/// - A dNSName matches when equal to the name (case-insensitive, a trailing dot ignored).
///   RFC 5922 forbids wildcards for SIP domains; with `allowWildcards` a `*` that is the
///   whole leftmost label matches exactly one label, never a partial label (`f*.example`),
///   never below a public-suffix-like two labels (`*.com`), never an IP address.
/// - An IP address matches iPAddress entries only.
/// - The common name counts only when the certificate has no subjectAltName at all.
public enum TLSNameMatcher {
    public static func matches(_ names: TLSCertificateNames, expected: String, allowWildcards: Bool = false) -> Bool {
        let host = normalize(expected)
        guard !host.isEmpty else { return false }
        if let ip = IPText(host) {
            return names.ipAddresses.contains { IPText($0) == ip }
        }
        if names.uris.contains(where: { sipURIHost($0).map(normalize) == host }) { return true }
        if names.dnsNames.contains(where: { dnsMatches($0, host, allowWildcards: allowWildcards) }) { return true }
        if !names.hasSubjectAltName {
            return names.commonNames.contains { normalize($0) == host }
        }
        return false
    }

    /// One dNSName against a host name.
    static func dnsMatches(_ presented: String, _ host: String, allowWildcards: Bool) -> Bool {
        let pattern = normalize(presented)
        guard !pattern.isEmpty, pattern.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        if pattern == host { return true }
        guard allowWildcards, pattern.hasPrefix("*.") else { return false }
        let base = pattern.dropFirst(2)
        // The rest must be a name of two labels or more, itself without wildcards.
        guard !base.contains("*"), base.split(separator: ".", omittingEmptySubsequences: false).count >= 2,
              !base.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return false }
        guard let dot = host.firstIndex(of: ".") else { return false }
        let label = host[..<dot]
        return !label.isEmpty && host[host.index(after: dot)...] == base
    }

    /// The host of a `sip:` URI entry without a user part (`sip:example.com`,
    /// `sip:example.com;transport=tls`); nil for anything else.
    static func sipURIHost(_ uri: String) -> String? {
        guard uri.count > 4, uri.prefix(4).lowercased() == "sip:" else { return nil }
        let rest = uri.dropFirst(4)
        guard !rest.contains("@") else { return nil }
        let end = rest.firstIndex { $0 == ";" || $0 == "?" } ?? rest.endIndex
        var host = rest[..<end]
        if host.hasPrefix("[") { return host.firstIndex(of: "]").map { String(host[host.index(after: host.startIndex)..<$0]) } }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return host.isEmpty ? nil : String(host)
    }

    static func normalize(_ name: String) -> String {
        var n = name.lowercased()
        if n.hasPrefix("["), n.hasSuffix("]") { n = String(n.dropFirst().dropLast()) }
        if n.hasSuffix(".") { n.removeLast() }
        return n
    }
}

/// An IP address compared by value (`::1` and `0:0::1` are one address).
private struct IPText: Equatable {
    let bytes: [UInt8]
    init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }
}
