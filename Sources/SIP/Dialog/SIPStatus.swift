import Crypto
import SDP

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
