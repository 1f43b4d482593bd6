import Glibc
import IOCore
import TLS

extension IrisTransportError {
    /// How a client connection to `host:port` ended, in the client's words: `operation` is
    /// what was under way ("waiting for the response to GET /v1/calls"), `seconds` the
    /// timeout a deadline came from. A connect failure names the address that refused.
    init(_ failure: StreamFailure, peer: SocketAddress, host: String, operation: String, seconds: Double) {
        switch failure {
        case .connect(let code) where code == ECONNREFUSED:
            self = .connectionRefused(host: peer.host, port: peer.port)
        case .connect(let code):
            self = .connectFailed(host: peer.host, port: peer.port, reason: Self.errnoText(code))
        case .refused(let why):
            self = .connectFailed(host: peer.host, port: peer.port, reason: "refused: \(why)")
        case .closedByPeer, .securityClosed:
            self = .connectionClosed(during: operation)
        case .socket(let code) where code == ECONNRESET || code == EPIPE:
            self = .connectionClosed(during: operation)
        case .socket(let code):
            self = .io(operation: operation, reason: Self.errnoText(code))
        case .closedDuringHandshake:
            self = .tls(host: host, port: peer.port, failure: .closedDuringHandshake)
        case .security(let f as TLSFailure):
            self = .tls(host: host, port: peer.port, failure: f)
        case .security(let f):
            self = .tls(host: host, port: peer.port, failure: .handshakeFailed("\(f)"))
        case .handshakeTimeout, .firstFrameTimeout, .frameTimeout, .idle, .keepaliveTimeout:
            self = .timeout(operation: operation, seconds: seconds)
        case .framing(let e as IrisTransportError):
            self = e
        case .framing(let e):
            self = .malformedResponse("\(e)")
        case .writeQueueFull:
            self = .io(operation: operation, reason: failure.description)
        }
    }

    /// strerror's text with the number, for a log reader who greps for it.
    static func errnoText(_ code: Int32) -> String { "\(StreamFailure.errorText(code)) (errno \(code))" }
}

extension StreamFailure {
    /// The peer ended the stream in order: its FIN, or TLS's close_notify.
    var isEndOfStream: Bool {
        switch self {
        case .closedByPeer, .securityClosed: true
        default: false
        }
    }
}
