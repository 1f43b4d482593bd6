import IrisAPI
import SIP

extension Gateway {
    /// A new session's capture: the SIP trace always, media when asked.
    func newCapture(roomId: String, recordsMedia: Bool) -> SessionCapture {
        SessionCapture(roomId: roomId, recordsMedia: recordsMedia)
    }

    /// `GET /v1/sessions/{roomId}/sip`: the trunk leg's SIP messages, live or ended (kept
    /// as long as the session's history).
    public func sipTrace(roomId: String) throws(GatewayError) -> SIPTraceDocument {
        let capture: SessionCapture? = ua.loop.sync { [self] in captures[roomId] }
        guard let capture else { throw .notFound(roomId) }
        return capture.traceDocument()
    }
}
