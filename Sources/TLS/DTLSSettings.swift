/// Which end of the DTLS handshake we are (RFC 5763 §5, from SDP's `a=setup`): we answer a
/// browser's `actpass` with `passive`, so the browser is the client and we are the server;
/// `a=setup:active` of ours makes us the client.
public enum DTLSRole: Sendable, Hashable {
    case client
    case server
}

/// Per-association knobs of a `DTLSTransport`.
public struct DTLSSettings: Sendable, Equatable {
    /// The largest UDP payload we send, in bytes: every datagram of ours, handshake
    /// fragments included, fits in it. 1200 leaves room for IPv6, UDP and a TURN channel
    /// header under a 1280-byte path MTU (what browsers assume too).
    public var mtu: Int
    /// The first retransmission timeout in seconds (RFC 6347 §4.2.4.1: 1 s); each further one
    /// doubles, up to 60 s.
    public var initialRetransmitTimeout: Double
    /// The whole handshake must be done within this many seconds of `start`, or the
    /// transport fails with `.handshakeTimeout`.
    public var handshakeTimeout: Double

    public init(mtu: Int = 1200, initialRetransmitTimeout: Double = 1, handshakeTimeout: Double = 10) {
        self.mtu = mtu
        self.initialRetransmitTimeout = initialRetransmitTimeout
        self.handshakeTimeout = handshakeTimeout
    }
}
