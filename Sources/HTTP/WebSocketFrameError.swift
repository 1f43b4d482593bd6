/// Frames that break RFC 6455, with the close code the receiving end fails the connection
/// with (§7.4.1); each end turns it into its own error (the client's `IrisTransportError`,
/// the server's close frame).
package enum WebSocketFrameError: Error, Equatable, Sendable {
    /// A framing rule broken (masking, reserved bits, opcodes, control frames): usually 1002.
    case protocolViolation(String, code: UInt16)
    /// A frame or message over the receiver's limit: 1009 (message too big).
    case tooLarge(what: String, limit: Int)

    /// The close code to fail the connection with.
    package var closeCode: UInt16 {
        switch self {
        case .protocolViolation(_, let code): code
        case .tooLarge: 1009
        }
    }
}
