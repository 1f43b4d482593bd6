/// A layer between a stream's socket and its framer that turns ciphertext into plaintext and
/// back: TLS in practice (the TLS module's `TLSStream` conforms), but IOCore knows no TLS.
/// Bytes in, bytes out, no socket and no clock: `StreamConnection` moves the bytes, holds the
/// handshake deadline and queues what the layer produces.
public protocol StreamSecurity {
    /// A client's first flight (its ClientHello); nothing for a server.
    mutating func begin() -> StreamSecurityStep
    /// Ciphertext read from the socket.
    mutating func unwrap(_ ciphertext: UnsafeRawBufferPointer) -> StreamSecurityStep
    /// Plaintext to send; a layer still handshaking holds it until it may leave.
    mutating func wrap(_ plaintext: [UInt8]) -> StreamSecurityStep
    /// Our closing message (TLS close_notify), sent best effort before the socket closes.
    mutating func finish() -> [UInt8]
    /// True until the handshake is done or has failed.
    var isHandshaking: Bool { get }
    /// True once the handshake is done and the session is open.
    var isEstablished: Bool { get }
    /// Plaintext held until the handshake is done (it counts toward the write-queue bound).
    var heldCount: Int { get }
}
