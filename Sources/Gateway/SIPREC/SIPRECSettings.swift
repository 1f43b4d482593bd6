import SIP

/// One SIPREC recording client's settings (RFC 7866): where the recording server is and how
/// long to wait for it.
public struct SIPRECSettings: Sendable, Equatable {
    /// The recording server (SRS), e.g. `sip:srs@recorder.example`; located as any SIP URI
    /// (RFC 3263: NAPTR, SRV, A/AAAA; a `transport=` parameter or a port skips steps).
    public var srs: SIPURI
    /// Our transport when neither the URI nor DNS chooses one. Default UDP.
    public var transport: SIPTransportProtocol
    /// Seconds to wait for the recording server's final answer to the INVITE before giving
    /// up (CANCEL; reported as `.timeout`). Default 10.
    public var answerTimeout: Double
    /// Seconds `stop()` waits for the final metadata update (with the stop times) to be
    /// answered before sending BYE anyway. Default 2.
    public var stopTimeout: Double
    /// The address the two RTP sockets bind (ports from the OS). Default `0.0.0.0`: any, and
    /// the SDP names the address our SIP uses toward the recording server.
    public var rtpBindHost: String
    /// The From user of the recording session's INVITE. Default `irisgw-src`.
    public var fromUser: String

    /// Settings for the recording server at `srs`, the rest by default.
    public init(
        srs: SIPURI, transport: SIPTransportProtocol = .udp, answerTimeout: Double = 10, stopTimeout: Double = 2,
        rtpBindHost: String = "0.0.0.0", fromUser: String = "irisgw-src"
    ) {
        self.srs = srs
        self.transport = transport
        self.answerTimeout = answerTimeout
        self.stopTimeout = stopTimeout
        self.rtpBindHost = rtpBindHost
        self.fromUser = fromUser
    }
}
