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
