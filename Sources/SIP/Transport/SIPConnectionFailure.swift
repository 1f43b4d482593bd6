import TLS

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
