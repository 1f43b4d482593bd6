import IOCore

/// What a call's media reports, off the media thread (never per packet).
public enum MediaEvent: Sendable, Equatable {
    /// The first RTP packet arrived on a leg (early media on the trunk before answer).
    case firstPacket(MediaLeg)
    /// A DTMF digit finished on a leg (RFC 4733 or in-band).
    case dtmf(MediaLeg, digit: Character, durationMs: Int)
    /// No RTP for the configured timeout on a leg.
    case timeout(MediaLeg)
    /// A WebRTC leg's ICE check nominated a pair and DTLS keyed SRTP: media flows.
    case webrtcConnected(MediaLeg)
    /// A WebRTC leg gave up (no ICE check, a failed or stalled DTLS handshake, a wrong
    /// fingerprint, consent lost): it sends nothing more.
    case webrtcFailed(MediaLeg, String)
}
