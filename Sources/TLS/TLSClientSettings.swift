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

/// How we check a TLS server and what we present to it. Hashable: a transport keeps one
/// OpenSSL context per distinct value.
public struct TLSClientSettings: Sendable, Hashable {
    /// PEM file of the CAs to trust; nil: the system trust store (`/etc/ssl/certs`).
    public var caFile: String?
    /// Our client certificate (PEM, chain allowed) for servers that ask for one; nil: none.
    public var certificateFile: String?
    /// The client certificate's private key (PEM).
    public var keyFile: String?
    /// How the server's certificate must name the host.
    public var names: TLSNamePolicy

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, names: TLSNamePolicy) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.names = names
    }
}

/// Where a TLS connection goes, beyond the address: the name its certificate must carry
/// (for SIP the host of the URI before DNS, RFC 5922 §4; for HTTPS the URL's host) and how to
/// check it. The name is also sent as SNI when it is not an IP address.
public struct TLSTarget: Sendable, Hashable, CustomStringConvertible {
    /// Lower case, without brackets or a trailing dot.
    public var serverName: String
    public var client: TLSClientSettings

    public init(serverName: String, client: TLSClientSettings) {
        var name = serverName.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        self.serverName = name
        self.client = client
    }

    public var description: String { serverName }
}

/// A TLS listener's certificate and what it asks of clients (the SIP TLS listener, the
/// HTTPS control API).
public struct TLSServerSettings: Sendable, Equatable {
    /// Whether a connecting peer must show a certificate.
    public enum ClientVerification: String, Sendable, Equatable, CaseIterable {
        /// No certificate is asked for.
        case none
        /// Asked for and checked when sent; a peer without one is still served.
        case optional
        /// A peer without a valid certificate is refused during the handshake.
        case require
    }

    /// Our certificate (PEM; the chain after it), reread on a reload.
    public var certificateFile: String
    /// Its private key (PEM).
    public var keyFile: String
    /// CAs that issue client certificates (PEM); nil: the system trust store.
    public var clientCAFile: String?
    public var verifyClient: ClientVerification

    public init(
        certificateFile: String, keyFile: String, clientCAFile: String? = nil, verifyClient: ClientVerification = .none
    ) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
        self.verifyClient = verifyClient
    }
}
