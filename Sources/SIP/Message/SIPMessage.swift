/// A SIP request or response as a value: start line, header fields in wire order, body.
///
/// Typed accessors (`vias`, `from`, `cseq`, ...) parse the stored header text on demand, so
/// the value stays a faithful copy of what was received; `SIPMessage.parse` has already
/// checked that the headers every message needs are well formed.
public struct SIPMessage: Sendable, Equatable {
    public enum StartLine: Sendable, Equatable {
        case request(method: String, uri: SIPURI)
        case response(status: Int, reason: String)
    }

    public var startLine: StartLine
    public var headers: [SIPHeader]
    public var body: [UInt8]

    public init(startLine: StartLine, headers: [SIPHeader] = [], body: [UInt8] = []) {
        self.startLine = startLine
        self.headers = headers
        self.body = body
    }

    /// A request with no headers yet.
    public static func request(_ method: String, _ uri: SIPURI) -> SIPMessage {
        SIPMessage(startLine: .request(method: method, uri: uri))
    }

    public var isRequest: Bool { if case .request = startLine { true } else { false } }

    /// The request method, or for a response the method of its CSeq.
    public var method: String {
        switch startLine {
        case .request(let m, _): return m
        case .response: return cseq?.method ?? ""
        }
    }

    public var requestURI: SIPURI? {
        if case .request(_, let uri) = startLine { return uri }
        return nil
    }

    public var statusCode: Int? {
        if case .response(let s, _) = startLine { return s }
        return nil
    }

    public var reasonPhrase: String? {
        if case .response(_, let r) = startLine { return r }
        return nil
    }

    // MARK: Raw header access

    /// The first value of `name`, as text.
    public subscript(name: SIPHeaderName) -> String? {
        get {
            for i in headers.indices where headers[i].name == name { return headers[i].value }
            return nil
        }
        set {
            if let newValue { setHeader(name, newValue) } else { removeHeaders(name) }
        }
    }

    /// Every value of `name`, with comma-separated lists split into elements.
    public func values(_ name: SIPHeaderName) -> [String] {
        var out: [String] = []
        for i in headers.indices where headers[i].name == name {
            out.append(contentsOf: SIPScanner.splitList(headers[i].value))
        }
        return out
    }

    /// Replaces all `name` headers with one (at the first one's position).
    public mutating func setHeader(_ name: SIPHeaderName, _ value: String) {
        if let i = headers.firstIndex(where: { $0.name == name }) {
            headers[i].value = value
            var j = headers.count - 1
            while j > i {
                if headers[j].name == name { headers.remove(at: j) }
                j -= 1
            }
        } else {
            headers.append(SIPHeader(name, value))
        }
    }

    public mutating func addHeader(_ name: SIPHeaderName, _ value: String) {
        headers.append(SIPHeader(name, value))
    }

    /// Inserts a header before all others of any name (Via and Route are prepended).
    public mutating func prependHeader(_ name: SIPHeaderName, _ value: String) {
        headers.insert(SIPHeader(name, value), at: 0)
    }

    public mutating func removeHeaders(_ name: SIPHeaderName) {
        headers.removeAll(where: { $0.name == name })
    }

    // MARK: Typed access (values that do not parse read as absent)

    public var vias: [Via] { values(.via).compactMap { try? Via.parse($0) } }
    public var topVia: Via? { values(.via).first.flatMap { try? Via.parse($0) } }
    public var from: NameAddress? { self[.from].flatMap { try? NameAddress.parse($0) } }
    public var to: NameAddress? { self[.to].flatMap { try? NameAddress.parse($0) } }
    public var callID: String? { self[.callID] }
    public var cseq: CSeq? { self[.cseq].flatMap { try? CSeq.parse($0) } }
    public var maxForwards: Int? { self[.maxForwards].flatMap { Int($0) } }
    public var contacts: [NameAddress] { values(.contact).compactMap { try? NameAddress.parse($0) } }
    public var routes: [NameAddress] { values(.route).compactMap { try? NameAddress.parse($0) } }
    public var recordRoutes: [NameAddress] { values(.recordRoute).compactMap { try? NameAddress.parse($0) } }
    public var contentType: String? { self[.contentType] }
    public var expires: Int? { self[.expires].flatMap { Int($0) } }
    /// Option tags of Require (RFC 3261 §20.32).
    public var require: [String] { values(.require).filter { !$0.isEmpty } }
    public var supported: [String] { values(.supported).filter { !$0.isEmpty } }
    public var proxyRequire: [String] { values(.proxyRequire).filter { !$0.isEmpty } }
    public var reasons: [Reason] { values(.reason).compactMap { try? Reason.parse($0) } }
    /// REFER's target (RFC 3515 §2.1), one address; nil when absent or unreadable.
    public var referTo: NameAddress? { self[.referTo].flatMap { try? NameAddress.parse($0) } }
    /// Who asked for the transfer (RFC 3892).
    public var referredBy: NameAddress? { self[.referredBy].flatMap { try? NameAddress.parse($0) } }
    /// An INVITE's `Replaces` (RFC 3891); nil when absent or unreadable.
    public var replaces: Replaces? { self[.replaces].flatMap { try? Replaces.parse($0) } }
    public var event: EventHeader? { self[.event].flatMap { try? EventHeader.parse($0) } }
    public var subscriptionState: SubscriptionState? {
        self[.subscriptionState].flatMap { try? SubscriptionState.parse($0) }
    }
    public var rseq: UInt32? { self[.rseq].flatMap { UInt32($0) } }
    public var rack: RAck? { self[.rack].flatMap { try? RAck.parse($0) } }
    /// The Q.850 cause of the first `Reason: Q.850;cause=N`.
    public var q850Cause: Int? { reasons.first(where: { $0.protocolName.caseInsensitiveCompare("Q.850") })?.cause }
    /// delta-seconds of Retry-After, without its comment or parameters.
    public var retryAfter: Int? {
        guard let v = self[.retryAfter] else { return nil }
        return Int(v.prefix(while: { $0.isNumber }))
    }

    /// Session-Expires (RFC 4028 §4), when present and well formed.
    public var sessionExpires: SessionExpires? { self[.sessionExpires].flatMap { try? SessionExpires.parse($0) } }
    /// Min-SE (RFC 4028 §5).
    public var minSE: MinSE? { self[.minSE].flatMap { try? MinSE.parse($0) } }
    /// Digest challenges of a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate); whole header
    /// values, since a challenge holds commas.
    public var digestChallenges: [DigestChallenge] {
        let name: SIPHeaderName = statusCode == 407 ? .proxyAuthenticate : .wwwAuthenticate
        return headers.filter { $0.name == name }.compactMap { try? DigestChallenge.parse($0.value) }
    }
    /// Digest credentials in Authorization and Proxy-Authorization.
    public var digestAuthorizations: [DigestAuthorization] {
        headers.filter { $0.name == .authorization || $0.name == .proxyAuthorization }
            .compactMap { try? DigestAuthorization.parse($0.value) }
    }

    /// True when `tag` is among the Supported or Require option tags.
    public func supports(_ tag: String) -> Bool {
        supported.contains(where: { $0.caseInsensitiveCompare(tag) })
            || require.contains(where: { $0.caseInsensitiveCompare(tag) })
    }

    // MARK: Serialisation

    /// The wire form: start line, headers in order, CRLF, body. `Content-Length` is written
    /// from the body (any stored value is replaced) so the framing is always right.
    public func serialize() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + headers.count * 64 + body.count)
        switch startLine {
        case .request(let method, let uri):
            out.append(contentsOf: method.utf8)
            out.append(0x20)
            out.append(contentsOf: uri.serialize().utf8)
            out.append(contentsOf: " SIP/2.0\r\n".utf8)
        case .response(let status, let reason):
            out.append(contentsOf: "SIP/2.0 ".utf8)
            out.append(contentsOf: String(status).utf8)
            out.append(0x20)
            out.append(contentsOf: reason.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        for h in headers where h.name != .contentLength {
            out.append(contentsOf: h.name.canonical.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: h.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "Content-Length: ".utf8)
        out.append(contentsOf: String(body.count).utf8)
        out.append(contentsOf: "\r\n\r\n".utf8)
        out.append(contentsOf: body)
        return out
    }

    /// The serialised size in bytes.
    public var size: Int { serialize().count }
}

extension SIPMessage: CustomStringConvertible {
    public var description: String { String(decoding: serialize(), as: UTF8.self) }
}
