/// What we sent on one stream, for the sender info of our SRs and for round-trip times
/// from the report blocks peers send back.
public struct RTPSenderStatistics: Sendable, Equatable, Hashable {
    /// Our SSRC.
    public let ssrc: UInt32
    /// The payload's RTP clock rate in Hz.
    public let clockRate: Int
    /// Packets sent (wraps, as on the wire).
    public private(set) var packetCount: UInt32 = 0
    /// Payload octets sent, headers and padding excluded (wraps).
    public private(set) var octetCount: UInt32 = 0
    /// The last RTP timestamp sent, to place SR timestamps between packets.
    public private(set) var lastTimestamp: UInt32?
    /// When (seconds) the last packet was sent.
    public private(set) var lastSendTime: Double?
    /// True when a packet went out since the last SR: §6.4 sends SR only while sending.
    public private(set) var sentSinceLastReport = false

    /// Statistics for our stream `ssrc` clocked at `clockRate` Hz.
    public init(ssrc: UInt32, clockRate: Int) {
        self.ssrc = ssrc
        self.clockRate = max(clockRate, 1)
    }

    /// Records a packet with `payloadLength` payload octets and RTP `timestamp`, sent at `now`.
    public mutating func recordSent(payloadLength: Int, timestamp: UInt32, now: Double) {
        packetCount &+= 1
        octetCount &+= UInt32(truncatingIfNeeded: max(payloadLength, 0))
        lastTimestamp = timestamp
        lastSendTime = now
        sentSinceLastReport = true
    }

    /// The sender info of an SR made at `now` seconds whose wall clock reads `ntp`: the RTP
    /// timestamp is the last one sent advanced by the time since at `clockRate`.
    public mutating func makeSenderInfo(ntp: NTPTimestamp, now: Double) -> RTCPSenderInfo {
        var rtpTimestamp: UInt32 = 0
        if let lastTimestamp, let lastSendTime {
            let elapsed = max(now - lastSendTime, 0) * Double(clockRate)
            rtpTimestamp = lastTimestamp &+ UInt32(truncatingIfNeeded: Int64(min(elapsed, 4e9).rounded()))
        }
        sentSinceLastReport = false
        return RTCPSenderInfo(
            ntpTimestamp: ntp, rtpTimestamp: rtpTimestamp, packetCount: packetCount, octetCount: octetCount)
    }

    /// Round-trip time in seconds from a block a peer sent about our stream, `arrival` being
    /// our wall clock when it arrived (§6.4.1); nil when the block is about another source
    /// or has no usable LSR.
    public func roundTripTime(from block: RTCPReportBlock, arrival: NTPTimestamp) -> Double? {
        guard block.ssrc == ssrc else { return nil }
        return block.roundTripTime(arrival: arrival)
    }
}
