import IOCore
import TLS

/// TLS as a client connection's security layer: the `TLSStream`, except that a close_notify
/// read together with the last data is reported one step later. `StreamConnection` ends at
/// a step that says `closed` before it hands that step's plaintext on, and a server that
/// answers with `Connection: close` (or closes a WebSocket) sends its last record, its
/// close_notify and its FIN together: the response would be lost. Reported later, the data
/// is framed first and the FIN that follows ends the connection as `.closedByPeer`.
struct ClientTLSLayer: StreamSecurity {
    private var stream: TLSStream
    private var closeHeld = false

    init(_ stream: TLSStream) { self.stream = stream }

    mutating func begin() -> StreamSecurityStep { stream.begin() }

    mutating func unwrap(_ ciphertext: UnsafeRawBufferPointer) -> StreamSecurityStep {
        var step = stream.unwrap(ciphertext)
        if closeHeld {
            closeHeld = false
            step.closed = true
        } else if step.closed, !step.plaintext.isEmpty {
            step.closed = false
            closeHeld = true
        }
        return step
    }

    mutating func wrap(_ plaintext: [UInt8]) -> StreamSecurityStep { stream.wrap(plaintext) }
    mutating func finish() -> [UInt8] { stream.finish() }
    var isHandshaking: Bool { stream.isHandshaking }
    var isEstablished: Bool { stream.isEstablished }
    var heldCount: Int { stream.heldCount }
}
