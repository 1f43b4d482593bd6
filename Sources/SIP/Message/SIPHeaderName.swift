/// A header field name, compared case-insensitively, with compact forms expanded
/// (RFC 3261 §7.3.3: `v` is Via, `f` is From, ...).
///
/// `canonical` is how irisgw writes the name; `key` is what comparisons use.
public struct SIPHeaderName: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The spelling used when serialising.
    public let canonical: String
    /// Lower-case long form; the identity of the name.
    public let key: String

    public init(_ raw: String) {
        let lower = raw.lowercased()
        if let known = Self.known[lower] {
            self.canonical = known.canonical
            self.key = known.key
        } else {
            self.canonical = raw
            self.key = lower
        }
    }

    private init(canonical: String) {
        self.canonical = canonical
        self.key = canonical.lowercased()
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { canonical }

    public static func == (a: Self, b: Self) -> Bool { a.key == b.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    public static let accept = Self(canonical: "Accept")
    public static let allow = Self(canonical: "Allow")
    public static let authorization = Self(canonical: "Authorization")
    public static let callID = Self(canonical: "Call-ID")
    public static let contact = Self(canonical: "Contact")
    public static let contentLength = Self(canonical: "Content-Length")
    public static let contentType = Self(canonical: "Content-Type")
    public static let contentEncoding = Self(canonical: "Content-Encoding")
    public static let cseq = Self(canonical: "CSeq")
    public static let date = Self(canonical: "Date")
    public static let expires = Self(canonical: "Expires")
    public static let from = Self(canonical: "From")
    public static let maxForwards = Self(canonical: "Max-Forwards")
    public static let minExpires = Self(canonical: "Min-Expires")
    public static let minSE = Self(canonical: "Min-SE")
    public static let proxyAuthenticate = Self(canonical: "Proxy-Authenticate")
    public static let proxyAuthorization = Self(canonical: "Proxy-Authorization")
    public static let proxyRequire = Self(canonical: "Proxy-Require")
    public static let rack = Self(canonical: "RAck")
    public static let reason = Self(canonical: "Reason")
    public static let recordRoute = Self(canonical: "Record-Route")
    public static let require = Self(canonical: "Require")
    public static let retryAfter = Self(canonical: "Retry-After")
    public static let route = Self(canonical: "Route")
    public static let rseq = Self(canonical: "RSeq")
    public static let server = Self(canonical: "Server")
    public static let sessionExpires = Self(canonical: "Session-Expires")
    public static let subject = Self(canonical: "Subject")
    public static let supported = Self(canonical: "Supported")
    public static let to = Self(canonical: "To")
    public static let unsupported = Self(canonical: "Unsupported")
    public static let userAgent = Self(canonical: "User-Agent")
    public static let via = Self(canonical: "Via")
    public static let wwwAuthenticate = Self(canonical: "WWW-Authenticate")
    public static let event = Self(canonical: "Event")
    public static let referTo = Self(canonical: "Refer-To")

    private static let all: [SIPHeaderName] = [
        accept, allow, authorization, callID, contact, contentLength, contentType, contentEncoding,
        cseq, date, expires, from, maxForwards, minExpires, minSE, proxyAuthenticate,
        proxyAuthorization, proxyRequire, rack, reason, recordRoute, require, retryAfter, route,
        rseq, server, sessionExpires, subject, supported, to, unsupported, userAgent, via,
        wwwAuthenticate, event, referTo,
    ]

    /// RFC 3261 §7.3.3 and later RFCs' compact forms.
    private static let compact: [String: SIPHeaderName] = [
        "i": callID, "m": contact, "e": contentEncoding, "l": contentLength, "c": contentType,
        "f": from, "s": subject, "k": supported, "t": to, "v": via, "x": sessionExpires,
        "o": event, "r": referTo,
    ]

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
