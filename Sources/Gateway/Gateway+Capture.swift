import IrisAPI
import SIP

extension Gateway {
    /// A new session's capture: the SIP trace always, media when asked.
    func newCapture(roomId: String, recordsMedia: Bool) -> SessionCapture {
        var onRTCP: SessionCapture.RTCPTap?
        if let hep {
            onRTCP = { bytes, sent, local, remote, time, callID in
                hep.rtcp(bytes, sent: sent, local: local, remote: remote, time: time, callID: callID)
            }
        }
        return SessionCapture(
            roomId: roomId, recordsMedia: recordsMedia, maxMediaBytes: configuration.capture.maxSessionBytes,
            budget: captureBudget, onRTCP: onRTCP)
    }

    /// `GET /v1/sessions/{roomId}/pcap`: the trunk leg's SIP, RTP and RTCP as a pcap file,
    /// for a session created (or joined) with `capture: true`.
    /// With it, what the capture left out: media packets past its bounds (`dropped`) and
    /// empty or short datagrams (`ignored`).
    public func capturePcap(roomId: String) throws(GatewayError) -> (pcap: CaptureFile, dropped: Int, ignored: Int) {
        let capture: SessionCapture? = ua.loop.sync { [self] in captures[roomId] }
        guard let capture else { throw .notFound(roomId) }
        guard let (sip, media, _) = capture.captured() else {
            if capture.mediaWasFreed {
                throw GatewayError(
                    IrisCode.incorrectParams, .notFound,
                    "session \(roomId)'s capture was freed to keep ended captures within "
                        + "\(configuration.capture.maxEndedBytes >> 20) MiB "
                        + "(its SIP is still at /v1/sessions/\(roomId)/sip)")
            }
            throw GatewayError(
                IrisCode.incorrectParams, .notFound,
                "session \(roomId) has no capture: create or join it with \"capture\": true (its SIP is at /v1/sessions/\(roomId)/sip)"
            )
        }
        let counts = capture.mediaCounts
        return (CaptureFile(sip: sip, media: media), counts.dropped, counts.ignored)
    }

    /// `GET /v1/sessions/{roomId}/sip`: the trunk leg's SIP messages, live or ended (kept
    /// as long as the session's history).
    public func sipTrace(roomId: String) throws(GatewayError) -> SIPTraceDocument {
        let capture: SessionCapture? = ua.loop.sync { [self] in captures[roomId] }
        guard let capture else { throw .notFound(roomId) }
        return capture.traceDocument()
    }
}
