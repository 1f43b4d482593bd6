import HTTP
import TLS

/// Why an HTTP request or a WebSocket operation toward the gateway failed.
///
/// Each case says what went wrong in terms a log reader can act on; `kind` groups the cases
/// for callers that decide by class (retry on `.connection` and `.timeout`, give up on
/// `.rejected`, fix the code on `.usage`).
public enum IrisTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `http(s)://host[:port][/path]` or `ws(s)://host[:port][/path][?query]`
    /// with an IPv4/IPv6 literal, `localhost` or a DNS name as the host, or its CA file cannot
    /// be used.
    case invalidURL(String, reason: String)
    /// The request itself cannot be sent (a header with CR/LF, an empty method, ...).
    case invalidRequest(String)
    /// Nothing listens at the address (ECONNREFUSED).
    case connectionRefused(host: String, port: Int)
    /// The TCP connection could not be made for another reason (no route, ...).
    case connectFailed(host: String, port: Int, reason: String)
    /// `operation` did not finish within `seconds`.
    case timeout(operation: String, seconds: Double)
    /// The peer closed the connection while `operation` still expected data.
    case connectionClosed(during: String)
    /// A socket call failed mid-connection (reset by peer, ...).
    case io(operation: String, reason: String)
    /// The peer's bytes are not valid HTTP.
    case malformedResponse(String)
    /// A response head, body or WebSocket message exceeded the client's limit.
    case tooLarge(what: String, limit: Int)
    /// The WebSocket upgrade was answered with something other than 101.
    case handshakeRejected(status: Int, body: String)
    /// The server answered 101 but the upgrade is not a valid RFC 6455 handshake.
    case handshakeInvalid(String)
    /// The server broke RFC 6455 framing; the connection was closed with `code`.
    case webSocketProtocol(String, code: UInt16)
    /// The WebSocket was closed (locally or by the server) before this operation.
    case closed
    /// TLS toward `host:port` failed (https, wss): the certificate is not from a trusted CA,
    /// names another host, has expired; the peer does not speak TLS; the handshake broke.
    case tls(host: String, port: Int, failure: TLSFailure)

    /// The class of a failure.
    public enum Kind: Sendable, Equatable {
        /// A bad URL or request: retrying will not help.
        case usage
        /// Could not reach the server, or the connection broke: may be retried.
        case connection
        /// The server was too slow: may be retried.
        case timeout
        /// The server answered, but not in valid HTTP/WebSocket.
        case protocolViolation
        /// The server refused (WebSocket upgrade not 101).
        case rejected
        /// The WebSocket is closed.
        case closed
        /// The server's certificate did not check out, or TLS failed: retrying will not help
        /// until the trust (the CA file) or the name is fixed.
        case security
    }

    /// The class of this failure.
    public var kind: Kind {
        switch self {
        case .invalidURL, .invalidRequest: .usage
        case .connectionRefused, .connectFailed, .connectionClosed, .io: .connection
        case .timeout: .timeout
        case .malformedResponse, .tooLarge, .handshakeInvalid, .webSocketProtocol: .protocolViolation
        case .handshakeRejected: .rejected
        case .closed: .closed
        case .tls: .security
        }
    }

    /// True for `.timeout`.
    public var isTimeout: Bool { kind == .timeout }

    /// The HTTP status of a refused WebSocket upgrade.
    public var status: Int? {
        if case .handshakeRejected(let status, _) = self { return status }
        return nil
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "invalid URL \"\(url)\": \(reason)"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .connectionRefused(let host, let port):
            "connection refused by \(Self.endpoint(host, port)) (nothing listening?)"
        case .connectFailed(let host, let port, let reason): "cannot connect to \(Self.endpoint(host, port)): \(reason)"
        case .timeout(let operation, let seconds): "timed out after \(seconds) s: \(operation)"
        case .connectionClosed(let operation): "connection closed by the peer during \(operation)"
        case .io(let operation, let reason): "\(operation) failed: \(reason)"
        case .malformedResponse(let reason): "malformed response: \(reason)"
        case .tooLarge(let what, let limit): "\(what) exceeds the limit of \(limit) bytes"
        case .handshakeRejected(let status, let body):
            body.isEmpty
                ? "WebSocket upgrade refused with HTTP \(status)"
                : "WebSocket upgrade refused with HTTP \(status): \(body.prefix(500))"
        case .handshakeInvalid(let reason): "invalid WebSocket handshake: \(reason)"
        case .webSocketProtocol(let reason, let code): "WebSocket protocol error (closed with \(code)): \(reason)"
        case .closed: "the WebSocket is closed"
        case .tls(let host, let port, let failure): "TLS with \(Self.endpoint(host, port)) failed: \(failure)"
        }
    }

    private static func endpoint(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension IrisTransportError {
    /// A frame the HTTP module's WebSocket codec refused, as the client reports it.
    init(_ error: WebSocketFrameError) {
        switch error {
        case .protocolViolation(let reason, let code): self = .webSocketProtocol(reason, code: code)
        case .tooLarge(let what, let limit): self = .tooLarge(what: what, limit: limit)
        }
    }
}
