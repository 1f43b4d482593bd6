/// How we check a TLS server and what we present to it (a trunk's `sip.tls` keys). Hashable:
/// the transports keep one OpenSSL context per distinct value.
public struct SIPTLSClientSettings: Sendable, Hashable {
    /// PEM file of the CAs to trust; nil: the system trust store (`/etc/ssl/certs`).
    public var caFile: String?
    /// Our client certificate (PEM, chain allowed) for servers that ask for one; nil: none.
    public var certificateFile: String?
    /// The client certificate's private key (PEM).
    public var keyFile: String?
    /// Accept a wildcard dNSName (`*.example.net`) as RFC 6125 §6.4.3 allows it. RFC 5922
    /// §7.2 says a SIP domain never matches a wildcard, so the default is false.
    public var allowWildcardCertificates: Bool

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil,
                allowWildcardCertificates: Bool = false) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.allowWildcardCertificates = allowWildcardCertificates
    }
}

/// Where a TLS connection goes, beyond the address: the name its certificate must carry
/// (RFC 5922 §4: the host of the URI, before DNS; also sent as SNI when it is a name) and how
/// to check it.
public struct SIPTLSTarget: Sendable, Hashable, CustomStringConvertible {
    public var serverName: String
    public var client: SIPTLSClientSettings

    public init(serverName: String, client: SIPTLSClientSettings = SIPTLSClientSettings()) {
        var name = serverName.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        self.serverName = name
        self.client = client
    }

    public var description: String { serverName }
}

/// A TLS listener's certificate and what it asks of clients (`irisgw serve --sip-tls-listen`).
public struct SIPTLSServerSettings: Sendable, Equatable {
    /// Whether a connecting peer must show a certificate.
    public enum ClientVerification: String, Sendable, Equatable, CaseIterable {
        /// No certificate is asked for.
        case none
        /// Asked for and checked when sent; a peer without one is still served.
        case optional
        /// A peer without a valid certificate is refused during the handshake.
        case require
    }

    /// Our certificate (PEM; the chain after it), reread on `reloadTLSCertificates`.
    public var certificateFile: String
    /// Its private key (PEM).
    public var keyFile: String
    /// CAs that issue client certificates (PEM); nil: the system trust store.
    public var clientCAFile: String?
    public var verifyClient: ClientVerification

    public init(certificateFile: String, keyFile: String, clientCAFile: String? = nil, verifyClient: ClientVerification = .none) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
        self.verifyClient = verifyClient
    }
}
