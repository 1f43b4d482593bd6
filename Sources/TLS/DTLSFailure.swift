/// Why a DTLS-SRTP association could not be set up or went down, in words an operator can
/// act on. No case carries key material or a fingerprint's digest. `kind` is a stable label
/// for metrics and tests.
public enum DTLSFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer's certificate does not hash to any `a=fingerprint` of its SDP (RFC 5763 §5).
    /// The associated value names the hash compared ("sha-256").
    case fingerprintMismatch(String)
    /// The peer sent no certificate (we require one both ways, RFC 5763 §5).
    case noPeerCertificate
    /// No DTLS-SRTP profile in common (the peer offered none of ours, or none at all:
    /// RFC 5764 §4.1.2).
    case noSRTPProfile
    /// The peer refused our certificate, with its alert ("bad certificate" ...): typically
    /// our fingerprint in the SDP it got does not match.
    case certificateRefusedByPeer(String)
    /// No protocol version in common: we speak DTLS 1.2 only.
    case protocolVersion
    /// The handshake did not finish within `DTLSSettings.handshakeTimeout`.
    case handshakeTimeout
    /// The peer closed (close_notify) before or while we were setting up.
    case closedByPeer
    /// A fatal alert after the handshake (the association is gone), with its description.
    case alert(String)
    /// Any other handshake failure, with OpenSSL's reason.
    case handshakeFailed(String)
    /// Our certificate or context could not be made.
    case configuration(String)

    /// Short text for an `onSessionError`, a call record and stderr.
    public var description: String {
        switch self {
        case .fingerprintMismatch(let hash): "the peer's certificate does not match its SDP fingerprint (\(hash))"
        case .noPeerCertificate: "the peer sent no certificate"
        case .noSRTPProfile: "no DTLS-SRTP profile in common"
        case .certificateRefusedByPeer(let alert): "the peer refused our certificate (\(alert))"
        case .protocolVersion: "no common DTLS version (1.2 only)"
        case .handshakeTimeout: "DTLS handshake timeout"
        case .closedByPeer: "the peer closed the DTLS association"
        case .alert(let what): "DTLS alert: \(what)"
        case .handshakeFailed(let why): "DTLS handshake failure: \(why)"
        case .configuration(let why): "DTLS configuration: \(why)"
        }
    }

    /// A stable label for metrics and tests.
    public var kind: String {
        switch self {
        case .fingerprintMismatch: "fingerprint_mismatch"
        case .noPeerCertificate: "no_peer_certificate"
        case .noSRTPProfile: "no_srtp_profile"
        case .certificateRefusedByPeer: "certificate_refused"
        case .protocolVersion: "protocol_version"
        case .handshakeTimeout: "handshake_timeout"
        case .closedByPeer: "closed_by_peer"
        case .alert: "alert"
        case .handshakeFailed: "handshake_failure"
        case .configuration: "configuration"
        }
    }
}
