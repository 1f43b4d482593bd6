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

    /// True when the message carries an SDP body: the whole body, or the SDP part of a
    /// `multipart/mixed` body (RFC 5621; a SIPREC INVITE or its answer).
    public var hasSDP: Bool { sdpBytes != nil }

    /// The SDP body, plain or in a multipart body, when there is one and it parses.
    public var sdp: SessionDescription? {
        sdpBytes.flatMap { try? SessionDescription.parse($0) }
    }

    /// The SDP's bytes: the body when it is `application/sdp`, else the first
    /// `application/sdp` part of a `multipart/*` body.
    var sdpBytes: [UInt8]? {
        guard !body.isEmpty, let type = contentType else { return nil }
        if MultipartBody.mediaType(of: type) == "application/sdp" { return body }
        return MultipartBody.parse(body, contentType: type)?.firstPart(ofType: "application/sdp")?.body
    }

    /// Sets an SDP body (or removes the body with `nil`). With `parts` the body becomes
    /// `multipart/mixed` (RFC 5621): the SDP first, then `parts` in order.
    public mutating func setSDP(_ sdp: SessionDescription?, with parts: [MultipartBody.Part] = []) {
        guard let sdp else {
            body = []
            removeHeaders(.contentType)
            return
        }
        let bytes = Array(sdp.serialize().utf8)
        guard !parts.isEmpty else {
            body = bytes
            setHeader(.contentType, "application/sdp")
            return
        }
        let sdpPart = MultipartBody.Part(headers: [("Content-Type", "application/sdp")], body: bytes)
        let multipart = MultipartBody(boundary: MultipartBody.newBoundary(), parts: [sdpPart] + parts)
        body = multipart.serialize()
        setHeader(.contentType, multipart.contentType)
    }
}
