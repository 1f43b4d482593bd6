/// The bounds of one stream connection. Deadlines are driven by the loop's timers (one timer
/// per connection, armed at the earliest); nil turns a deadline off.
public struct StreamConnectionSettings: Sendable, Equatable {
    /// Seconds with nothing carried either way before the connection ends (`.idle`).
    /// Default nil: none.
    public var idleTimeout: Double?
    /// Seconds for the security layer's handshake to finish (`.handshakeTimeout`). Default nil.
    public var handshakeTimeout: Double?
    /// Seconds from the start for the first complete frame (`.firstFrameTimeout`): an
    /// accepted connection that says nothing, or only half a header, is cut. Default nil.
    public var firstFrameTimeout: Double?
    /// Seconds for a frame to arrive whole once its first byte has (`.frameTimeout`).
    /// Default nil.
    public var frameTimeout: Double?
    /// Seconds of quiet after which `onKeepalive` is called (the owner sends its ping, RFC
    /// 5626 §4.4.1 for SIP). Default nil: no keep-alive.
    public var keepaliveInterval: Double?
    /// Seconds after a keep-alive for anything to come back before the connection ends
    /// (`.keepaliveTimeout`). Default 10.
    public var keepaliveTimeout: Double
    /// Bytes queued toward a peer that does not read (including what the security layer
    /// holds) before the connection ends (`.writeQueueFull`). Default 262,144.
    public var maxQueuedBytes: Int

    public init(
        idleTimeout: Double? = nil, handshakeTimeout: Double? = nil, firstFrameTimeout: Double? = nil,
        frameTimeout: Double? = nil, keepaliveInterval: Double? = nil, keepaliveTimeout: Double = 10,
        maxQueuedBytes: Int = 262_144
    ) {
        self.idleTimeout = idleTimeout
        self.handshakeTimeout = handshakeTimeout
        self.firstFrameTimeout = firstFrameTimeout
        self.frameTimeout = frameTimeout
        self.keepaliveInterval = keepaliveInterval
        self.keepaliveTimeout = keepaliveTimeout
        self.maxQueuedBytes = maxQueuedBytes
    }
}
