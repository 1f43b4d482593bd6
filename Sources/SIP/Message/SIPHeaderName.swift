/// A header field name, compared case-insensitively, with compact forms expanded
/// (RFC 3261 §7.3.3: `v` is Via, `f` is From, ...).
///
/// `canonical` is how irisgw writes the name; `key` is what comparisons use.
public struct SIPHeaderName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The spelling used when serialising.
    public let canonical: String
    /// Lower-case long form; the identity of the name.
    public let key: String
    /// Index of a well-known name (0 for others), so comparing two known names is one integer test.
    private let id: UInt16

    public init(_ raw: String) {
        // Most names arrive spelled as we spell them: skip the lower-casing then.
        let length = raw.utf8.count
        if length < Self.exactByLength.count {
            for candidate in Self.exactByLength[length] where candidate.spelling == raw {
                self = candidate.name
                return
            }
        }
        let lower = raw.lowercased()
        if let known = Self.known[lower] {
            self = known
        } else {
            self.canonical = raw
            self.key = lower
            self.id = 0
        }
    }

    private init(canonical: String, _ id: UInt16) {
        self.canonical = canonical
        self.key = canonical.lowercased()
        self.id = id
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { canonical }

    public static func == (a: Self, b: Self) -> Bool {
        if a.id != 0 || b.id != 0 { return a.id == b.id }
        return a.key == b.key
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    public static let accept = Self(canonical: "Accept", 1)
    public static let allow = Self(canonical: "Allow", 2)
    public static let authorization = Self(canonical: "Authorization", 3)
    public static let callID = Self(canonical: "Call-ID", 4)
    public static let contact = Self(canonical: "Contact", 5)
    public static let contentLength = Self(canonical: "Content-Length", 6)
    public static let contentType = Self(canonical: "Content-Type", 7)
    public static let contentEncoding = Self(canonical: "Content-Encoding", 8)
    public static let cseq = Self(canonical: "CSeq", 9)
    public static let date = Self(canonical: "Date", 10)
    public static let expires = Self(canonical: "Expires", 11)
    public static let from = Self(canonical: "From", 12)
    public static let maxForwards = Self(canonical: "Max-Forwards", 13)
    public static let minExpires = Self(canonical: "Min-Expires", 14)
    public static let minSE = Self(canonical: "Min-SE", 15)
    public static let proxyAuthenticate = Self(canonical: "Proxy-Authenticate", 16)
    public static let proxyAuthorization = Self(canonical: "Proxy-Authorization", 17)
    public static let proxyRequire = Self(canonical: "Proxy-Require", 18)
    public static let rack = Self(canonical: "RAck", 19)
    public static let reason = Self(canonical: "Reason", 20)
    public static let recordRoute = Self(canonical: "Record-Route", 21)
    public static let require = Self(canonical: "Require", 22)
    public static let retryAfter = Self(canonical: "Retry-After", 23)
    public static let route = Self(canonical: "Route", 24)
    public static let rseq = Self(canonical: "RSeq", 25)
    public static let server = Self(canonical: "Server", 26)
    public static let sessionExpires = Self(canonical: "Session-Expires", 27)
    public static let subject = Self(canonical: "Subject", 28)
    public static let supported = Self(canonical: "Supported", 29)
    public static let to = Self(canonical: "To", 30)
    public static let unsupported = Self(canonical: "Unsupported", 31)
    public static let userAgent = Self(canonical: "User-Agent", 32)
    public static let via = Self(canonical: "Via", 33)
    public static let wwwAuthenticate = Self(canonical: "WWW-Authenticate", 34)
    public static let event = Self(canonical: "Event", 35)
    public static let referTo = Self(canonical: "Refer-To", 36)
    public static let referredBy = Self(canonical: "Referred-By", 37)
    public static let replaces = Self(canonical: "Replaces", 38)
    public static let subscriptionState = Self(canonical: "Subscription-State", 39)

    private static let all: [SIPHeaderName] = [
        accept, allow, authorization, callID, contact, contentLength, contentType, contentEncoding,
        cseq, date, expires, from, maxForwards, minExpires, minSE, proxyAuthenticate,
        proxyAuthorization, proxyRequire, rack, reason, recordRoute, require, retryAfter, route,
        rseq, server, sessionExpires, subject, supported, to, unsupported, userAgent, via,
        wwwAuthenticate, event, referTo, referredBy, replaces, subscriptionState
    ]

    /// RFC 3261 §7.3.3 and later RFCs' compact forms.
    private static let compact: [String: SIPHeaderName] = [
        "i": callID, "m": contact, "e": contentEncoding, "l": contentLength, "c": contentType,
        "f": from, "s": subject, "k": supported, "t": to, "v": via, "x": sessionExpires,
        "o": event, "r": referTo, "b": referredBy
    ]

    /// Spellings as we write them, bucketed by length: cheaper than hashing every name.
    private static let exactByLength: [[(spelling: String, name: SIPHeaderName)]] = {
        var table = [[(spelling: String, name: SIPHeaderName)]](repeating: [], count: 24)
        for name in all where name.canonical.utf8.count < 24 {
            table[name.canonical.utf8.count].append((name.canonical, name))
        }
        for (short, name) in compact { table[1].append((short, name)) }
        return table
    }()

    private static let known: [String: SIPHeaderName] = {
        var table: [String: SIPHeaderName] = [:]
        for name in all { table[name.key] = name }
        for (short, name) in compact { table[short] = name }
        return table
    }()
}

/// One header field line, unfolded, in the order it appeared.
public struct SIPHeader: Sendable, Equatable {
    public var name: SIPHeaderName
    /// The field value with leading/trailing whitespace removed and folding replaced by one SP.
    public var value: String

    public init(_ name: SIPHeaderName, _ value: String) {
        self.name = name
        self.value = value
    }
}
