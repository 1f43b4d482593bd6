/// Which names of a peer's certificate identify the host we meant to reach, and how they
/// compare. One matcher (`TLSNameMatcher`) serves both; the policy picks the rule.
public enum TLSNamePolicy: Sendable, Hashable {
    /// RFC 5922 §7.2 (SIP domains): `sip:` URI entries without a user part and dNSNames,
    /// compared exactly; wildcards only when `allowWildcards` (RFC 6125 §6.4.3, whole
    /// leftmost label); the common name only when the certificate has no subjectAltName.
    case sip(allowWildcards: Bool)
    /// RFC 6125 §6.4 and RFC 2818 §3.1 (HTTPS, WSS): dNSNames, with a `*` that is the whole
    /// leftmost label matching exactly one label; an IP host matches iPAddress entries only.
    /// URI entries and the subject's common name are never used (as browsers do).
    case https
}
