import Crypto
import SDP

extension SIPMessage {
    /// A response to `request` as RFC 3261 §8.2.6.2 builds it: Via, From, To, Call-ID and CSeq
    /// copied; a To tag added when `toTag` is given and the request's To has none.
    public static func response(
        to request: SIPMessage, status: Int, reason: String? = nil, toTag: String? = nil
    ) -> SIPMessage {
        var r = SIPMessage(startLine: .response(status: status, reason: reason ?? SIPStatus.reasonPhrase(status)))
        for h in request.headers where h.name == .via { r.headers.append(h) }
        if let from = request[.from] { r.addHeader(.from, from) }
        if var to = request[.to] {
            if let toTag, var addr = try? NameAddress.parse(to), addr.tag == nil, status != 100 {
                addr.tag = toTag
                to = addr.serialize()
            }
            r.addHeader(.to, to)
        }
        if let callID = request[.callID] { r.addHeader(.callID, callID) }
        if let cseq = request[.cseq] { r.addHeader(.cseq, cseq) }
        // RFC 3261 §12.1.1: a response that may establish a dialog carries the request's
        // Record-Route, in order, so the caller's route set runs through the proxies.
        if request.method == "INVITE", (101...299).contains(status) {
            for h in request.headers where h.name == .recordRoute { r.headers.append(h) }
        }
        return r
    }

    /// True when the message carries an SDP body.
    public var hasSDP: Bool {
        !body.isEmpty && (contentType?.lowercased().hasPrefix("application/sdp") ?? false)
    }

    /// The SDP body, when there is one and it parses.
    public var sdp: SessionDescription? {
        hasSDP ? try? SessionDescription.parse(body) : nil
    }

    /// Sets an SDP body (or removes the body with `nil`).
    public mutating func setSDP(_ sdp: SessionDescription?) {
        if let sdp {
            body = Array(sdp.serialize().utf8)
            setHeader(.contentType, "application/sdp")
        } else {
            body = []
            removeHeaders(.contentType)
        }
    }
}
