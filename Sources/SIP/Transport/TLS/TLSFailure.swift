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
            presented.isEmpty ? "certificate names no host (expected \(expected))"
                : "wrong name: certificate names \(presented.prefix(4).joined(separator: ", ")), not \(expected)"
        case .badCertificate(let why): "bad certificate: \(why)"
        case .noPeerCertificate: "no client certificate"
        case .clientCertificateRequired: "the server requires a client certificate and none is configured"
        case .certificateRefusedByPeer(let alert): "the server refused our client certificate (\(alert))"
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
        case .certificateRefusedByPeer: "certificate_refused"
        case .notTLS: "not_tls"
        case .protocolVersion: "protocol_version"
        case .handshakeFailed: "handshake_failure"
        case .closedDuringHandshake: "closed_during_handshake"
        case .handshakeTimeout: "handshake_timeout"
        case .configuration: "configuration"
        }
    }
}

/// Why a stream connection (TCP or TLS) went down or could not be opened, reported by the
/// transports so the requests sent over it fail at once instead of waiting for Timer B.
public enum SIPConnectionFailure: Sendable, Hashable, CustomStringConvertible {
    /// connect(2) failed (refused, unreachable, out of descriptors ...).
    case connect(String)
    /// The TLS layer failed: handshake, certificate, name.
    case tls(TLSFailure)
    /// The peer closed the connection, or it broke, or a bound cut it (idle, keep-alive).
    case closed(String)

    public var description: String {
        switch self {
        case .connect(let why): "connect: \(why)"
        case .tls(let f): "TLS: \(f)"
        case .closed(let why): "closed: \(why)"
        }
    }
}

/// One stream connection that failed: where to, which connection, and why. Delivered on the
/// SIP loop, never from inside a send.
public struct SIPConnectionFailureReport: Sendable, Hashable, CustomStringConvertible {
    /// The peer (transport and address; for TLS the name it was checked against).
    public var peer: SIPPeer
    /// We opened it (toward a trunk) rather than accepted it.
    public var outbound: Bool
    public var failure: SIPConnectionFailure
    /// Loop clock when it failed.
    public var at: Double
    /// We had sent something over it (or meant to: a connection that never opened), so
    /// requests of ours may have been waiting on it.
    public var carried: Bool

    public init(peer: SIPPeer, outbound: Bool, failure: SIPConnectionFailure, at: Double, carried: Bool = true) {
        self.peer = peer
        self.outbound = outbound
        self.failure = failure
        self.at = at
        self.carried = carried
    }

    /// "TLS: carrier.example: certificate expired": what a session's end and the log say.
    /// The name is the one checked (SNI), else the address.
    public var reason: String {
        let name = peer.tls?.serverName ?? peer.address.description
        switch failure {
        case .tls(let f): return "TLS: \(name): \(f)"
        case .connect(let why): return "\(peer.transport.rawValue): \(peer.address): connect: \(why)"
        case .closed(let why): return "\(peer.transport.rawValue): \(peer.address): connection closed: \(why)"
        }
    }

    public var description: String { reason }
}
