/// A SIP, SIPS or other URI (RFC 3261 §19.1, §25.1; IPv6 references per RFC 5118).
///
/// ```
/// SIP-URI  = "sip:" [ userinfo ] hostport uri-parameters [ headers ]
/// userinfo = ( user / telephone-subscriber ) [ ":" password ] "@"
/// hostport = host [ ":" port ]
/// host     = hostname / IPv4address / IPv6reference
/// ```
/// Other schemes (`tel:`, `isbn:`, ...) parse with their scheme and an opaque remainder.
/// User and password stay %-escaped as received: `value%41` is not `valueA`
/// (RFC 4475 §3.1.1.3), so comparisons by the caller see what was sent.
public struct SIPURI: Sendable, Equatable, CustomStringConvertible {
    public var scheme: String
    public var user: String?
    public var password: String?
    /// The host without IPv6 brackets.
    public var host: String
    public var port: Int?
    public var parameters: [SIPParameter]
    /// `?name=value&...` (escaped as received).
    public var headers: String?
    /// For non-SIP schemes: everything after `scheme:`.
    public var opaque: String?

    public init(
        scheme: String = "sip", user: String? = nil, host: String, port: Int? = nil,
        parameters: [SIPParameter] = []
    ) {
        self.scheme = scheme
        self.user = user
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    public var isSIP: Bool { opaque == nil }
    public var isIPv6: Bool { host.utf8.contains(0x3A) }
    /// `transport` URI parameter, lower-cased.
    public var transport: String? { parameters[parameter: "transport"].flatMap { $0?.lowercased() } }
    /// True when the URI carries `;lr` (loose routing, RFC 3261 §16.12).
    public var isLooseRouter: Bool { parameters[parameter: "lr"] != nil }

    public static func parse(_ text: String) throws(SIPParseError) -> SIPURI {
        let bytes = Array(text.utf8)
        return try parse(bytes[...])
    }

    static func parse(_ bytes: ArraySlice<UInt8>) throws(SIPParseError) -> SIPURI {
        func text() -> String { String(decoding: bytes, as: UTF8.self) }
        guard let colon = bytes.firstIndex(of: 0x3A), colon > bytes.startIndex, isAlpha(bytes[bytes.startIndex]) else {
            throw .init(400, "URI without a scheme: \(text())")
        }
        var lower = true
        for b in bytes[bytes.startIndex..<colon] {
            guard isAlnum(b) || b == 0x2B || b == 0x2D || b == 0x2E else {
                throw .init(400, "bad URI scheme in \(text())")
            }
            if b >= 0x41 && b <= 0x5A { lower = false }
        }
        for b in bytes where b <= 0x20 || b == 0x7F || b == 0x3C || b == 0x3E || b == 0x22 {
            throw .init(400, "illegal character in URI \(text())")
        }
        var scheme = String(decoding: bytes[bytes.startIndex..<colon], as: UTF8.self)
        if !lower { scheme = scheme.lowercased() }
        let restStart = colon + 1
        let end = bytes.endIndex
        guard scheme == "sip" || scheme == "sips" else {
            guard restStart < end else { throw .init(400, "empty URI \(text())") }
            var uri = SIPURI(scheme: scheme, host: "")
            uri.opaque = String(decoding: bytes[restStart...], as: UTF8.self)
            return uri
        }
        var uri = SIPURI(scheme: scheme, host: "")
        var i = restStart
        if let at = bytes[restStart...].firstIndex(of: 0x40) {
            if let pc = bytes[restStart..<at].firstIndex(of: 0x3A) {
                uri.user = String(decoding: bytes[restStart..<pc], as: UTF8.self)
                uri.password = String(decoding: bytes[(pc + 1)..<at], as: UTF8.self)
            } else {
                uri.user = String(decoding: bytes[restStart..<at], as: UTF8.self)
            }
            guard !(uri.user ?? "").isEmpty else { throw .init(400, "empty user part in \(text())") }
            i = at + 1
        }
        if i < end, bytes[i] == 0x5B {
            guard let close = bytes[i...].firstIndex(of: 0x5D) else {
                throw .init(400, "unterminated IPv6 reference in \(text())")
            }
            let inner = bytes[(i + 1)..<close]
            guard !inner.isEmpty, inner.allSatisfy({ isHex($0) || $0 == 0x3A || $0 == 0x2E }) else {
                throw .init(400, "bad IPv6 reference in \(text())")
            }
            uri.host = String(decoding: inner, as: UTF8.self)
            i = close + 1
        } else {
            let start = i
            while i < end, isAlnum(bytes[i]) || bytes[i] == 0x2D || bytes[i] == 0x2E || bytes[i] == 0x5F { i += 1 }
            guard i > start else { throw .init(400, "missing host in \(text())") }
            uri.host = String(decoding: bytes[start..<i], as: UTF8.self)
        }
        if i < end, bytes[i] == 0x3A {
            i += 1
            var port = 0
            let start = i
            while i < end, isDigit(bytes[i]), i - start < 5 {
                port = port * 10 + Int(bytes[i] - 0x30)
                i += 1
            }
            guard i > start, port <= 65535, !(i < end && isDigit(bytes[i])) else {
                throw .init(400, "bad port in \(text())")
            }
            uri.port = port
        }
        var paramEnd = end
        if let q = bytes[i...].firstIndex(of: 0x3F) {
            paramEnd = q
            uri.headers = String(decoding: bytes[(q + 1)...], as: UTF8.self)
        }
        if i < paramEnd {
            guard bytes[i] == 0x3B else { throw .init(400, "unexpected character after host in \(text())") }
            var pieceStart = i + 1
            while pieceStart <= paramEnd {
                let pieceEnd = bytes[pieceStart..<paramEnd].firstIndex(of: 0x3B) ?? paramEnd
                guard pieceEnd > pieceStart else { throw .init(400, "empty URI parameter in \(text())") }
                let piece = bytes[pieceStart..<pieceEnd]
                if let eq = piece.firstIndex(of: 0x3D) {
                    guard eq > piece.startIndex else { throw .init(400, "URI parameter without a name in \(text())") }
                    uri.parameters.append(
                        SIPParameter(
                            String(decoding: piece[..<eq], as: UTF8.self),
                            String(decoding: piece[(eq + 1)...], as: UTF8.self)))
                } else {
                    uri.parameters.append(SIPParameter(String(decoding: piece, as: UTF8.self)))
                }
                pieceStart = pieceEnd + 1
            }
        }
        return uri
    }

    public func serialize() -> String {
        if let opaque { return scheme + ":" + opaque }
        var out = scheme + ":"
        if let user {
            out += user
            if let password { out += ":" + password }
            out += "@"
        }
        out += isIPv6 ? "[" + host + "]" : host
        if let port { out += ":" + String(port) }
        out += parameters.serialized()
        if let headers { out += "?" + headers }
        return out
    }

    public var description: String { serialize() }

    /// `host[:port]` as written in a Via sent-by or a socket address string.
    public var hostPort: String {
        let h = isIPv6 ? "[" + host + "]" : host
        return port.map { h + ":" + String($0) } ?? h
    }
}

@inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
@inline(__always) func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
@inline(__always) func isAlnum(_ b: UInt8) -> Bool { isDigit(b) || isAlpha(b) }
@inline(__always) func isHex(_ b: UInt8) -> Bool { isDigit(b) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66) }
