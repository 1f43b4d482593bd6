/// How much captured media the gateway holds (config key `capture`). A capture's media is
/// counted as the memory it takes (`CapturedMedia.heldBytes`: packets, their headers and
/// allocations), not its payload alone; what does not fit is left out and counted (the
/// pcap's `X-Capture-Dropped` header). SIP traces are bounded apart (`SIPTrace`).
public struct CaptureLimits: Sendable, Equatable {
    /// One session's media. Default 32 MiB (`capture.maxSessionMiB`).
    public var maxSessionBytes: Int
    /// All live sessions' media together. Default 256 MiB (`capture.maxLiveMiB`).
    public var maxLiveBytes: Int
    /// Ended sessions' media together, kept for `GET .../pcap` after the end; the oldest is
    /// freed first. Default 256 MiB (`capture.maxEndedMiB`).
    public var maxEndedBytes: Int

    public init(maxSessionBytes: Int = 32 << 20, maxLiveBytes: Int = 256 << 20, maxEndedBytes: Int = 256 << 20) {
        self.maxSessionBytes = maxSessionBytes
        self.maxLiveBytes = maxLiveBytes
        self.maxEndedBytes = maxEndedBytes
    }
}
