@_exported import TLS

// SIP's names for the generic TLS settings (the TLS module), and SIP's defaults: a trunk's
// `sip.tls` keys check names by RFC 5922 unless `allowWildcardCertificates` is set.

/// How we check a SIP TLS server and what we present to it (a trunk's `sip.tls` keys).
public typealias SIPTLSClientSettings = TLSClientSettings
/// Where a SIP TLS connection goes: the SIP domain its certificate must name (RFC 5922 §4).
public typealias SIPTLSTarget = TLSTarget
/// The SIP TLS listener's certificate (`irisgw serve --sip-tls-listen`).
public typealias SIPTLSServerSettings = TLSServerSettings

extension TLSClientSettings {
    /// SIP client settings: names checked by RFC 5922 (`.sip`), wildcards only when allowed.
    public init(
        caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil,
        allowWildcardCertificates: Bool = false
    ) {
        self.init(
            caFile: caFile, certificateFile: certificateFile, keyFile: keyFile,
            names: .sip(allowWildcards: allowWildcardCertificates))
    }

    /// Accept a wildcard dNSName (`*.example.net`) as RFC 6125 §6.4.3 allows it. RFC 5922
    /// §7.2 says a SIP domain never matches a wildcard, so the default is false. Setting it
    /// makes the policy `.sip`.
    public var allowWildcardCertificates: Bool {
        get {
            switch names {
            case .sip(let allowed): allowed
            case .https: true
            }
        }
        set { names = .sip(allowWildcards: newValue) }
    }
}
