/// Why a TLS connection could not be set up or went down, in words an operator can act on.
/// Each case says what failed; none carries key material. `reason` is the short text the
/// gateway puts in an `onSessionError`, a call record and stderr.
public enum TLSFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer's certificate is past its notAfter date.
    case certificateExpired
    /// The peer's certificate's notBefore date is still ahead.
    case certificateNotYetValid
    /// No trusted CA issued the peer's certificate (self-signed, an unknown CA, an incomplete
    /// chain).
    case unknownCA
    /// The certificate is valid but names other hosts (RFC 5922 §7): `presented` lists them.
    case wrongName(expected: String, presented: [String])
    /// Another problem with the peer's certificate, in OpenSSL's words (revoked, bad
    /// signature, wrong purpose ...).
    case badCertificate(String)
    /// We require a certificate of the peer (a listener with `tlsVerifyClient: "require"`)
    /// and it sent none.
    case noPeerCertificate
    /// The server asked for a client certificate and we have none configured
    /// (`sip.tls.certificateFile`).
    case clientCertificateRequired
    /// The peer refused the certificate we sent, with its alert ("unknown CA", "certificate
    /// expired", "bad certificate" ...).
    case certificateRefusedByPeer(String)
    /// As a server: the client refused our certificate, with its alert ("unknown CA",
    /// "bad certificate" ...): it does not trust our CA, or we are not the host it meant.
    case certificateRefusedByClient(String)
    /// The peer does not speak TLS on that port (plain SIP, HTTP, noise).
    case notTLS
    /// No protocol version in common: we speak TLS 1.2 and 1.3 only.
    case protocolVersion
    /// Any other handshake failure, with OpenSSL's reason.
    case handshakeFailed(String)
    /// The connection closed or broke before the handshake finished.
    case closedDuringHandshake
    /// The handshake did not finish within the transport's message timeout.
    case handshakeTimeout
    /// Our own certificate, key or CA file could not be used (unreadable, not PEM, the key
    /// does not match the certificate).
    case configuration(String)

    /// Short text: "certificate expired", "certificate names carrier.example, not x.example".
    public var description: String {
        switch self {
        case .certificateExpired: "certificate expired"
        case .certificateNotYetValid: "certificate not yet valid"
        case .unknownCA: "certificate from an unknown CA"
        case let .wrongName(expected, presented):
            presented.isEmpty
                ? "certificate names no host (expected \(expected))"
                : "wrong name: certificate names \(presented.prefix(4).joined(separator: ", ")), not \(expected)"
        case .badCertificate(let why): "bad certificate: \(why)"
        case .noPeerCertificate: "no client certificate"
        case .clientCertificateRequired: "the server requires a client certificate and none is configured"
        case .certificateRefusedByPeer(let alert): "the server refused our client certificate (\(alert))"
        case .certificateRefusedByClient(let alert): "the client refused our certificate (\(alert))"
        case .notTLS: "the peer does not speak TLS"
        case .protocolVersion: "no common TLS version (1.2 and 1.3 only)"
        case .handshakeFailed(let why): "handshake failure: \(why)"
        case .closedDuringHandshake: "connection closed during the handshake"
        case .handshakeTimeout: "handshake timeout"
        case .configuration(let why): "TLS configuration: \(why)"
        }
    }

    /// A stable label for metrics and tests.
    public var kind: String {
        switch self {
        case .certificateExpired: "expired"
        case .certificateNotYetValid: "not_yet_valid"
        case .unknownCA: "unknown_ca"
        case .wrongName: "wrong_name"
        case .badCertificate: "bad_certificate"
        case .noPeerCertificate: "no_client_certificate"
        case .clientCertificateRequired: "client_certificate_required"
        case .certificateRefusedByPeer, .certificateRefusedByClient: "certificate_refused"
        case .notTLS: "not_tls"
        case .protocolVersion: "protocol_version"
        case .handshakeFailed: "handshake_failure"
        case .closedDuringHandshake: "closed_during_handshake"
        case .handshakeTimeout: "handshake_timeout"
        case .configuration: "configuration"
        }
    }

    /// The kinds a TLS server sees of its clients, for metrics that list them at zero.
    public static let serverKinds = [
        "not_tls", "protocol_version", "handshake_failure", "closed_during_handshake",
        "handshake_timeout", "no_client_certificate", "unknown_ca", "expired", "bad_certificate",
        "certificate_refused"
    ]
}
