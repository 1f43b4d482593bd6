/// `a=setup` (RFC 4145 §4, RFC 5763 §5): who opens the DTLS association.
public enum SDPSetupRole: String, Sendable, Equatable, CaseIterable {
    /// The endpoint starts the handshake (the DTLS client).
    case active
    /// The endpoint waits for the handshake (the DTLS server).
    case passive
    /// Either: the offerer lets the answerer choose (RFC 5763 says the offer must be this).
    case actpass
    /// Neither, for now (RFC 4145): no association will be opened.
    case holdconn
}
