/// One Via entry (RFC 3261 §20.42, rport per RFC 3581):
///
/// ```
/// via-parm      = sent-protocol LWS sent-by *( SEMI via-params )
/// sent-protocol = protocol-name SLASH protocol-version SLASH transport
/// sent-by       = host [ COLON port ]
/// ```
public struct Via: Sendable, Equatable, CustomStringConvertible {
    /// `SIP/2.0`
    public var protocolName: String
    public var protocolVersion: String
    /// Upper-cased transport token: `UDP`, `TCP`, `TLS`, `SCTP`, or an extension.
    public var transport: String
    /// sent-by host, without IPv6 brackets.
    public var host: String
    public var port: Int?
    public var parameters: [SIPParameter]

    public init(transport: String, host: String, port: Int?, branch: String, rport: Bool = true) {
        self.protocolName = "SIP"
        self.protocolVersion = "2.0"
        self.transport = transport
        self.host = host
        self.port = port
        self.parameters = [SIPParameter("branch", branch)]
        if rport { parameters.append(SIPParameter("rport")) }
    }

    public var branch: String? {
        get { parameters[parameter: "branch"] ?? nil }
        set { parameters.set("branch", newValue) }
    }
    public var received: String? {
        get { parameters[parameter: "received"] ?? nil }
        set { parameters.set("received", newValue) }
    }
    /// `nil` when absent, `.some(nil)` when present without a value (a request for rport).
    public var rport: Int?? {
        guard let p = parameters[parameter: "rport"] else { return nil }
        return .some(p.flatMap { Int($0) })
    }
    public mutating func setRport(_ port: Int) { parameters.set("rport", String(port)) }

    /// RFC 3261 §8.1.1.7: branches starting with the magic cookie are unique per transaction.
    public var hasRFC3261Branch: Bool { branch.map { $0.hasPrefix("z9hG4bK") && $0.count > 7 } ?? false }

    public static func parse(_ text: String) throws(SIPParseError) -> Via {
        var s = SIPScanner(text)
        s.skipWhitespace()
        let name = try s.requireToken("protocol name")
        try s.expect(0x2F, "/ in Via")
        let version = try s.requireToken("protocol version")
        try s.expect(0x2F, "/ in Via")
        let transport = try s.requireToken("transport")
        s.skipWhitespace()
        var host: String
        if s.peek == 0x5B {
            let start = s.index + 1
            while let b = s.peek, b != 0x5D { s.index += 1 }
            guard s.peek == 0x5D else { throw .init(400, "unterminated IPv6 reference in Via") }
            // IPv6reference = "[" IPv6address "]" (RFC 3261 §25.1), checked as SIPURI does:
            // the host is kept without brackets, so anything else would serialise as text no
            // parser takes ("[x;y]" would even come back as a host and a parameter).
            let inner = s.bytes[start..<s.index]
            guard inner.allSatisfy({ isHex($0) || $0 == 0x3A || $0 == 0x2E }) else {
                throw .init(400, "bad IPv6 reference in Via")
            }
            host = String(decoding: inner, as: UTF8.self)
            s.index += 1
        } else {
            let start = s.index
            while let b = s.peek, isAlnum(b) || b == 0x2D || b == 0x2E || b == 0x5F { s.index += 1 }
            host = String(decoding: s.bytes[start..<s.index], as: UTF8.self)
        }
        guard !host.isEmpty else { throw .init(400, "Via without sent-by host") }
        var port: Int? = nil
        if s.consume(0x3A) {
            let start = s.index
            while let b = s.peek, isDigit(b) { s.index += 1 }
            guard s.index > start, s.index - start <= 5,
                let p = Int(String(decoding: s.bytes[start..<s.index], as: UTF8.self)), p <= 65535
            else {
                throw .init(400, "bad port in Via")
            }
            port = p
        }
        let params = try s.parameters()
        s.skipWhitespace()
        guard s.atEnd else { throw .init(400, "unexpected text in Via: \(s.rest)") }
        var via = Via(transport: transport.uppercased(), host: host, port: port, branch: "")
        via.protocolName = name
        via.protocolVersion = version
        via.parameters = params
        return via
    }

    public func serialize() -> String {
        var out = protocolName + "/" + protocolVersion + "/" + transport + " "
        out += host.utf8.contains(0x3A) ? "[" + host + "]" : host
        if let port { out += ":" + String(port) }
        return out + parameters.serialized()
    }

    public var description: String { serialize() }
}
