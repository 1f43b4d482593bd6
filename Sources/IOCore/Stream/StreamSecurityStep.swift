/// What one step of a `StreamSecurity` layer produced.
public struct StreamSecurityStep {
    /// Decrypted bytes for the framer.
    public var plaintext: [UInt8]
    /// Bytes to write to the socket (handshake messages, records, alerts).
    public var ciphertext: [UInt8]
    /// The handshake finished (and the peer checked out) in this step.
    public var established: Bool
    /// Set once, when the layer fails; the connection then ends with `.security(failure)`.
    public var failure: (any Error & Sendable)?
    /// The peer closed the secure session (TLS close_notify).
    public var closed: Bool

    public init(
        plaintext: [UInt8] = [], ciphertext: [UInt8] = [], established: Bool = false,
        failure: (any Error & Sendable)? = nil, closed: Bool = false
    ) {
        self.plaintext = plaintext
        self.ciphertext = ciphertext
        self.established = established
        self.failure = failure
        self.closed = closed
    }
}
