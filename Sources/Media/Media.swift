/// The media layer: RTP/RTCP, codecs, DTMF, jitter buffer, mixer (issue 3).
/// Knows nothing of SIP; the session layer asks it for ports and codecs.
public enum Media {}
