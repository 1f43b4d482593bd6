import Crypto
import SDP

/// Identifiers RFC 3261 asks to be globally unique (tags §19.3, branches §8.1.1.7, Call-ID §8.1.1.4).
public enum SIPIdentifiers {
    /// A random token of `bytes` bytes, hex encoded.
    public static func token(_ bytes: Int = 8) -> String { Crypto.hex(Crypto.randomBytes(count: bytes)) }
    public static func tag() -> String { token(6) }
    /// A branch with the RFC 3261 magic cookie.
    public static func branch() -> String { "z9hG4bK" + token(8) }
    public static func callID(host: String) -> String { token(12) + "@" + host }
}

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

/// Standard reason phrases (RFC 3261 §21 and extensions).
public enum SIPStatus {
    public static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 100: "Trying"
        case 180: "Ringing"
        case 181: "Call Is Being Forwarded"
        case 182: "Queued"
        case 183: "Session Progress"
        case 200: "OK"
        case 202: "Accepted"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 415: "Unsupported Media Type"
        case 416: "Unsupported URI Scheme"
        case 420: "Bad Extension"
        case 421: "Extension Required"
        case 422: "Session Interval Too Small"
        case 423: "Interval Too Brief"
        case 480: "Temporarily Unavailable"
        case 481: "Call/Transaction Does Not Exist"
        case 482: "Loop Detected"
        case 483: "Too Many Hops"
        case 484: "Address Incomplete"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 488: "Not Acceptable Here"
        case 491: "Request Pending"
        case 500: "Server Internal Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Server Time-out"
        case 505: "Version Not Supported"
        case 513: "Message Too Large"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        case 606: "Not Acceptable"
        default: "Unknown"
        }
    }
}
