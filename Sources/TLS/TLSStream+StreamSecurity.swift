import IOCore

/// TLS as the stream layer's security layer (IOCore's `StreamConnection` puts it between the
/// socket and the framer).
extension TLSStream: StreamSecurity {
    public mutating func begin() -> StreamSecurityStep { StreamSecurityStep(start()) }
    public mutating func unwrap(_ ciphertext: UnsafeRawBufferPointer) -> StreamSecurityStep {
        StreamSecurityStep(receive(ciphertext))
    }
    public mutating func wrap(_ plaintext: [UInt8]) -> StreamSecurityStep { StreamSecurityStep(send(plaintext)) }
    public mutating func finish() -> [UInt8] { close() }
}

extension StreamSecurityStep {
    init(_ out: TLSStream.Output) {
        self.init(
            plaintext: out.plaintext, ciphertext: out.ciphertext, established: out.established, failure: out.failure,
            closed: out.closed)
    }
}
