// The small single-value SIP headers as values: CSeq, RAck (RFC 3262) and Reason (RFC 3326).

/// `CSeq = "CSeq" HCOLON 1*DIGIT LWS Method` (RFC 3261 §20.16); the number is below 2**31
/// for new requests and must fit 32 bits (RFC 4475 §3.1.2.4).
public struct CSeq: Sendable, Equatable, CustomStringConvertible {
    public var sequence: UInt32
    public var method: String

    public init(_ sequence: UInt32, _ method: String) {
        self.sequence = sequence
        self.method = method
    }

    public static func parse(_ text: String) throws(SIPParseError) -> CSeq {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let start = s.index
        while let b = s.peek, isDigit(b) { s.index += 1 }
        let digits = String(decoding: s.bytes[start..<s.index], as: UTF8.self)
        guard let n = UInt32(digits) else { throw .init(400, "CSeq number missing or too large") }
        guard s.peek == 0x20 || s.peek == 0x09 else { throw .init(400, "CSeq needs white space before the method") }
        s.skipWhitespace()
        let method = try s.requireToken("CSeq method")
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in CSeq") }
        return CSeq(n, method)
    }

    public func serialize() -> String { String(sequence) + " " + method }
    public var description: String { serialize() }
}

/// `RAck = "RAck" HCOLON response-num LWS CSeq-num LWS Method` (RFC 3262 §7.2).
public struct RAck: Sendable, Equatable {
    public var rseq: UInt32
    public var cseq: UInt32
    public var method: String

    public init(rseq: UInt32, cseq: UInt32, method: String) {
        self.rseq = rseq
        self.cseq = cseq
        self.method = method
    }

    public static func parse(_ text: String) throws(SIPParseError) -> RAck {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        // 1*DIGIT: UInt32("+1") would accept a sign.
        guard parts.count == 3, parts[0].utf8.allSatisfy(isDigit), parts[1].utf8.allSatisfy(isDigit),
            let r = UInt32(parts[0]), let c = UInt32(parts[1]),
            SIPScanner.isToken(String(parts[2]))
        else { throw .init(400, "malformed RAck") }
        return RAck(rseq: r, cseq: c, method: String(parts[2]))
    }

    public func serialize() -> String { "\(rseq) \(cseq) \(method)" }
}

/// One value of a `Reason` header (RFC 3326):
/// `reason-value = protocol *(SEMI reason-params)`, with `cause=` and `text=`.
/// Carriers put the ISDN cause here (`Q.850;cause=17;text="User busy"`).
public struct Reason: Sendable, Equatable {
    /// `SIP`, `Q.850`, or an extension token.
    public var protocolName: String
    public var cause: Int?
    public var text: String?

    public init(protocolName: String, cause: Int?, text: String? = nil) {
        self.protocolName = protocolName
        self.cause = cause
        self.text = text
    }

    public static func parse(_ text: String) throws(SIPParseError) -> Reason {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let proto = try s.requireToken("reason protocol")
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in Reason") }
        var cause: Int? = nil
        if let c = params[parameter: "cause"] {
            guard let c, c.utf8.allSatisfy(isDigit), let n = Int(c), (0...65535).contains(n) else {
                throw .init(400, "bad Reason cause")
            }
            cause = n
        }
        var reasonText: String? = nil
        if let t = params[parameter: "text"], let t {
            var q = SIPScanner(t)
            reasonText = t.hasPrefix("\"") ? try q.quotedString() : t
        }
        return Reason(protocolName: proto, cause: cause, text: reasonText)
    }

    public func serialize() -> String {
        var out = protocolName
        if let cause { out += ";cause=" + String(cause) }
        if let text { out += ";text=\"" + SIPScanner.escapeQuoted(text) + "\"" }
        return out
    }
}
