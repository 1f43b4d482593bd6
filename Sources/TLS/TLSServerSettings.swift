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
