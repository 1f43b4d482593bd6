/// Bounds on what a SIP peer can make the transports hold. Every field has a documented
/// default; each refusal is counted in `SIPTransports.refusals` (and `/metrics`).
public struct SIPTransportLimits: Sendable, Equatable {
    /// Stream connections open at once, both directions. Default 1024. The effective cap is
    /// also at most half the process's file-descriptor limit, so sockets for calls, the
    /// database and the control API stay available whatever SIP peers do.
    public var maxConnections: Int
    /// Stream connections from one IP address. Default 32.
    public var maxConnectionsPerSource: Int
    /// Seconds a stream connection may carry nothing in either direction before it is
    /// closed. Default 120 (RFC 5626 keep-alives every 30 s or so keep a busy trunk open).
    public var idleTimeout: Double
    /// Seconds for one message to arrive whole once its first byte has (a new inbound
    /// connection must deliver its first message in this time too). Default 10.
    public var messageTimeout: Double
    /// Bytes queued toward one peer that does not read before the connection is closed.
    /// Default 262,144.
    public var maxQueuedBytes: Int
    /// Seconds the listener pauses when the process runs out of file descriptors, so a
    /// full backlog cannot make the loop spin. Default 0.1.
    public var acceptBackoff: Double
    /// Seconds a connection we opened (toward a trunk) may be quiet before we send an RFC
    /// 5626 double-CRLF ping, keeping the bindings of any NAT on the way. Default 0: off.
    /// Below `idleTimeout` it also keeps the connection from being closed as idle.
    public var keepaliveInterval: Double
    /// Seconds we wait for anything (the pong) after a ping before the connection counts as
    /// broken and is closed (RFC 5626 §4.4.1 says 10). Default 10.
    public var keepaliveTimeout: Double

    public init(
        maxConnections: Int = 1024, maxConnectionsPerSource: Int = 32, idleTimeout: Double = 120,
        messageTimeout: Double = 10, maxQueuedBytes: Int = 262_144, acceptBackoff: Double = 0.1,
        keepaliveInterval: Double = 0, keepaliveTimeout: Double = 10
    ) {
        self.keepaliveInterval = keepaliveInterval
        self.keepaliveTimeout = keepaliveTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerSource = maxConnectionsPerSource
        self.idleTimeout = idleTimeout
        self.messageTimeout = messageTimeout
        self.maxQueuedBytes = maxQueuedBytes
        self.acceptBackoff = acceptBackoff
    }
}

/// Why the transports refused or cut a stream peer; the `what` label in `/metrics`.
public enum SIPTransportRefusal: String, Sendable, CaseIterable {
    case tooManyConnections = "sip_tcp_too_many_connections"
    case tooManyFromSource = "sip_tcp_too_many_from_source"
    case idle = "sip_tcp_idle"
    case messageTimeout = "sip_tcp_message_timeout"
    case notSIP = "sip_tcp_not_sip"
    case framing = "sip_tcp_framing"
    case peerNotReading = "sip_tcp_peer_not_reading"
    case outOfDescriptors = "sip_tcp_out_of_descriptors"
    /// A keep-alive ping of ours got no answer: the flow is broken (not a refusal, but
    /// counted with the connections cut).
    case keepaliveTimeout = "sip_tcp_keepalive_timeout"
    /// A TLS handshake failed or did not finish in `messageTimeout` (a bad or unknown
    /// certificate, a wrong name, a peer that is not TLS), either way.
    case tlsFailed = "sip_tls_handshake_failed"
}
