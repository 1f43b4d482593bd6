import Glibc

/// The identities a certificate presents: subjectAltName entries of type URI, dNSName and
/// iPAddress, and the subject's common names. Which of them count is `TLSNamePolicy`'s.
public struct TLSCertificateNames: Sendable, Equatable {
    public var dnsNames: [String]
    /// URI entries as written (`sip:carrier.example`).
    public var uris: [String]
    /// iPAddress entries as text (`192.0.2.1`, `2001:db8::1`).
    public var ipAddresses: [String]
    public var commonNames: [String]
    /// The certificate has a subjectAltName extension (then the common name is never used).
    public var hasSubjectAltName: Bool

    public init(
        dnsNames: [String] = [], uris: [String] = [], ipAddresses: [String] = [], commonNames: [String] = [],
        hasSubjectAltName: Bool? = nil
    ) {
        self.dnsNames = dnsNames
        self.uris = uris
        self.ipAddresses = ipAddresses
        self.commonNames = commonNames
        self.hasSubjectAltName = hasSubjectAltName ?? !(dnsNames.isEmpty && uris.isEmpty && ipAddresses.isEmpty)
    }

    /// What an error message lists under RFC 5922: the names that count, in certificate order.
    public var presented: [String] {
        hasSubjectAltName ? uris + dnsNames + ipAddresses : commonNames
    }
}

/// Whether a certificate identifies the host we meant to reach, by a `TLSNamePolicy`: SIP's
/// RFC 5922 §7.2 or HTTPS's RFC 6125 §6.4 / RFC 2818 §3.1. One matcher, the policy picks
/// which entries count. A plain function of values, tested as a table.
///
/// - The expected name is the host we were given (the SIP URI's or the URL's, before DNS),
///   lower case.
/// - An IP address matches iPAddress entries only (both policies).
/// - A dNSName matches when equal to the name (case-insensitive, a trailing dot ignored).
///   A `*` that is the whole leftmost label matches exactly one label (RFC 6125 §6.4.3) —
///   always for `.https`, for `.sip` only with `allowWildcards` (RFC 5922 forbids them) —
///   never a partial label (`f*.example`), never below two labels (`*.com`), never an IP.
/// - `.sip` only: a `sip:` URI entry with no user part matches when its host equals the
///   name (never by wildcard), and the common name counts when the certificate has no
///   subjectAltName at all.
/// - `.https`: URI entries and the common name never count.
public enum TLSNameMatcher {
    public static func matches(_ names: TLSCertificateNames, expected: String, policy: TLSNamePolicy) -> Bool {
        let host = normalize(expected)
        guard !host.isEmpty else { return false }
        if let ip = IPText(host) {
            return names.ipAddresses.contains { IPText($0) == ip }
        }
        switch policy {
        case .sip(let allowWildcards):
            if names.uris.contains(where: { sipURIHost($0).map(normalize) == host }) { return true }
            if names.dnsNames.contains(where: { dnsMatches($0, host, allowWildcards: allowWildcards) }) { return true }
            if !names.hasSubjectAltName {
                return names.commonNames.contains { normalize($0) == host }
            }
            return false
        case .https:
            return names.dnsNames.contains { dnsMatches($0, host, allowWildcards: true) }
        }
    }

    /// What an error message lists under `policy`: the names that could have matched.
    public static func presented(_ names: TLSCertificateNames, policy: TLSNamePolicy) -> [String] {
        switch policy {
        case .sip: names.presented
        case .https: names.dnsNames + names.ipAddresses
        }
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
            !base.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
        else { return false }
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
        if host.hasPrefix("[") {
            return host.firstIndex(of: "]").map { String(host[host.index(after: host.startIndex)..<$0]) }
        }
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
