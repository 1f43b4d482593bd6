import Glibc
import IOCore

/// Copies of a leg's RTP and RTCP for a capture file or a HEP collector (the trunk leg's,
/// `MediaCallConfiguration.trunkTap`). Packets come as the application sees them: after
/// SRTP is removed on the way in and before it is applied on the way out, so a capture of
/// an SRTP call can still be played. Called on the leg's media thread for every packet: it
/// must copy what it keeps and never block.
public protocol MediaPacketTap: AnyObject, Sendable {
    /// `time`: seconds since 1970; `sent`: by us; `rtcp`: an RTCP compound packet.
    func mediaPacket(
        _ bytes: UnsafeRawBufferPointer, sent: Bool, rtcp: Bool, local: SocketAddress, remote: SocketAddress,
        time: Double)
}

extension RTPLeg {
    /// Hands `bytes` to the leg's tap, if it has one (the caller checks `tap != nil` first,
    /// so a call without one pays a nil test per packet).
    func tapPacket(
        _ bytes: UnsafeRawBufferPointer, sent: Bool, rtcp: Bool, local: SocketAddress, remote: RawSocketAddress?
    ) {
        guard let tap, let peer = remote?.address else { return }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        tap.mediaPacket(
            bytes, sent: sent, rtcp: rtcp, local: local, remote: peer,
            time: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
    }
}
