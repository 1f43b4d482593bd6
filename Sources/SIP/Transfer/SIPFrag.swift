/// The status line of a `message/sipfrag` body (RFC 3420) that a REFER's NOTIFY carries
/// (RFC 3515 §2.4.5): how the referred request is doing, as `SIP/2.0 180 Ringing`.
public struct SIPFrag: Sendable, Equatable {
    public var status: Int
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// The first line of the body; headers after it are allowed and ignored.
    public static func parse(_ body: [UInt8]) throws(SIPParseError) -> SIPFrag {
        var line = body.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        // The line ends in CRLF (RFC 3420 §2): its CR is no part of the reason phrase.
        if line.last == 0x0D { line = line.dropLast() }
        let text = String(decoding: line, as: UTF8.self).trimmingSIPWhitespace()
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].uppercased() == "SIP/2.0", parts[1].count == 3,
            parts[1].utf8.allSatisfy(isDigit), let code = Int(parts[1]), (100...699).contains(code)
        else { throw .init(400, "message/sipfrag without a SIP status line") }
        return SIPFrag(status: code, reason: parts.count > 2 ? String(parts[2]) : "")
    }

    public func serialize() -> [UInt8] { Array("SIP/2.0 \(status) \(reason)\r\n".utf8) }

    public static let contentType = "message/sipfrag;version=2.0"
}

/// `Subscription-State` (RFC 6665 §8.2.3): `substate-value *( SEMI subexp-params )`.
public struct SubscriptionState: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case active, pending, terminated
        case other(String)
    }
    public var value: Value
    public var expires: Int?
    /// Why it ended (`noresource`, `timeout`, `rejected` ...), with `terminated`.
    public var reason: String?

    public init(_ value: Value, expires: Int? = nil, reason: String? = nil) {
        self.value = value
        self.expires = expires
        self.reason = reason
    }

    public static func parse(_ text: String) throws(SIPParseError) -> SubscriptionState {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let token = try s.requireToken("subscription state").lowercased()
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in Subscription-State") }
        let value: Value =
            switch token {
            case "active": .active
            case "pending": .pending
            case "terminated": .terminated
            default: .other(token)
            }
        let expires = (params[parameter: "expires"] ?? nil).flatMap { Int($0) }
        return SubscriptionState(value, expires: expires, reason: params[parameter: "reason"] ?? nil)
    }

    public func serialize() -> String {
        var out: String =
            switch value {
            case .active: "active"
            case .pending: "pending"
            case .terminated: "terminated"
            case .other(let t): t
            }
        if let expires { out += ";expires=" + String(expires) }
        if let reason { out += ";reason=" + reason }
        return out
    }
}

/// `Event` (RFC 6665 §8.2.1): `event-type *( SEMI event-param )`; a REFER's subscription is
/// `refer`, its `id` the REFER's CSeq number (RFC 3515 §2.4.6).
public struct EventHeader: Sendable, Equatable {
    public var package: String
    public var id: String?

    public init(package: String, id: String? = nil) {
        self.package = package
        self.id = id
    }

    public static func parse(_ text: String) throws(SIPParseError) -> EventHeader {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let package = try s.requireToken("event package")
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in Event") }
        return EventHeader(package: package, id: params[parameter: "id"] ?? nil)
    }

    public func serialize() -> String { package + (id.map { ";id=" + $0 } ?? "") }
}
