#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a trunk's outbound requests go: the host, port and transport of a proxy,
/// written in a profile as a SIP URI (`sip:`, or `sips:` for TLS, RFC 5630).
public struct ProxyAddress: Sendable, Equatable, CustomStringConvertible {
    /// A transport named by a `transport=` URI parameter.
    public enum Transport: String, Sendable, Equatable, CaseIterable {
        case udp
        case tcp
        /// TLS over TCP (RFC 3261 §26).
        case tls
    }

    /// What kind of host the URI names.
    public enum HostKind: Sendable, Equatable {
        case domainName
        case ipv4
        case ipv6
    }

    /// The host, without brackets for an IPv6 address.
    public var host: String
    /// What `host` is.
    public var hostKind: HostKind
    /// The port; 5060 when the URI gives none.
    public var port: Int
    /// Whether the URI wrote the port. A host name without one is located through NAPTR and
    /// SRV (RFC 3263); with one, through A/AAAA only.
    public var hasExplicitPort: Bool
    /// The transport from `;transport=`, or nil when the URI names none (the profile's
    /// `sip.transport` applies then).
    public var transport: Transport?
    /// A `sips:` URI: only TLS will do, to every hop (RFC 5630).
    public var secure: Bool

    /// The port used when a URI has none (RFC 3261 section 19.1.2).
    public static let defaultPort = 5060
    /// The port of `sips:` and `transport=tls` URIs that give none.
    public static let defaultTLSPort = 5061

    /// TLS is asked for: a `sips:` URI or `transport=tls`.
    public var isTLS: Bool { secure || transport == .tls }

    /// Builds an address from parts; `host` is not checked here (use `init(parsing:)` for input).
    public init(
        host: String, hostKind: HostKind, port: Int = ProxyAddress.defaultPort, transport: Transport? = nil,
        hasExplicitPort: Bool = true, secure: Bool = false
    ) {
        self.host = host
        self.hostKind = hostKind
        self.port = port
        self.hasExplicitPort = hasExplicitPort
        self.transport = transport
        self.secure = secure
    }

    /// Parses the subset of a SIP URI that addresses a proxy (RFC 3261 section 25.1):
    ///
    /// ```
    /// SIP-URI         = ( "sip:" / "sips:" ) hostport [ ";" transport-param ]
    /// hostport        = host [ ":" port ]
    /// host            = hostname / IPv4address / IPv6reference
    /// IPv6reference   = "[" IPv6address "]"
    /// transport-param = "transport=" ( "udp" / "tcp" / "tls" )
    /// ```
    /// The scheme and the parameter are case-insensitive. `sips:` (and `transport=tls`) mean
    /// TLS, port 5061 unless given; a `sips:` URI with `transport=udp` is refused (RFC 5630
    /// §3.2). User info, other parameters, headers and SCTP/WebSocket transports are
    /// refused, each with a reason.
    public init(parsing text: String) throws(ProxyAddressError) {
        func fail(_ reason: String) -> ProxyAddressError { ProxyAddressError(input: text, reason: reason) }

        let lower = text.lowercased()
        let secure = lower.hasPrefix("sips:")
        guard (lower.hasPrefix("sip:") && text.count > 4) || (secure && text.count > 5) else {
            if lower == "sip:" || lower == "sips:" { throw fail("the host is missing") }
            throw fail("must start with sip: or sips:")
        }
        var rest = Substring(text.dropFirst(secure ? 5 : 4))
        if rest.contains("@") { throw fail("a proxy URI has no user part") }
        if rest.contains("?") { throw fail("headers are not allowed in a proxy URI") }
        if rest.contains(where: { $0 == " " || $0 == "\t" }) { throw fail("white space is not allowed") }

        var transport: Transport?
        if let semicolon = rest.firstIndex(of: ";") {
            let params = rest[rest.index(after: semicolon)...].split(separator: ";", omittingEmptySubsequences: false)
            rest = rest[..<semicolon]
            for param in params {
                let pair = param.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, pair[0].lowercased() == "transport" else {
                    throw fail("unsupported parameter \"\(param)\" (only transport=udp, tcp or tls)")
                }
                guard transport == nil else { throw fail("transport is given twice") }
                let value = pair[1].lowercased()
                guard let parsed = Transport(rawValue: value) else {
                    if value == "sctp" || value == "ws" || value == "wss" {
                        throw fail("transport \(value) is not supported (udp, tcp or tls)")
                    }
                    throw fail("unknown transport \"\(pair[1])\" (udp, tcp or tls)")
                }
                if secure && parsed == .udp { throw fail("a sips: URI goes over TLS; transport=udp contradicts it") }
                // sips: with transport=tcp is TLS over TCP (RFC 3261 §26.2.2).
                transport = secure ? .tls : parsed
            }
        }

        var host: Substring
        var portText: Substring?
        let kind: HostKind
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw fail("unclosed '[' in an IPv6 reference") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected text after the IPv6 reference") }
                portText = after.dropFirst()
            }
            guard IPAddressBytes.parse(String(host))?.count == 16 else {
                throw fail("\"\(host)\" is not an IPv6 address")
            }
            kind = .ipv6
        } else {
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw fail("an IPv6 address must be in brackets: sip:[::1]:5060") }
            host = parts[0]
            if parts.count == 2 { portText = parts[1] }
            guard !host.isEmpty else { throw fail("the host is missing") }
            if host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
                guard IPAddressBytes.parse(String(host))?.count == 4, host.split(separator: ".").count == 4 else {
                    throw fail("\"\(host)\" is not an IPv4 address")
                }
                kind = .ipv4
            } else {
                if let reason = hostnameProblem(host) { throw fail(reason) }
                kind = .domainName
            }
        }

        var port = secure || transport == .tls ? Self.defaultTLSPort : Self.defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portText), (1...65535).contains(value)
            else {
                throw fail("the port \"\(portText)\" is not a number from 1 to 65535")
            }
            port = value
        }
        self.init(
            host: String(host), hostKind: kind, port: port, transport: transport, hasExplicitPort: portText != nil,
            secure: secure)
    }

    /// `host` as written in a URI: IPv6 addresses in brackets.
    public var hostReference: String {
        hostKind == .ipv6 ? "[\(host)]" : host
    }

    /// The port to write in a Request-URI or registrar URI: none for a host name given
    /// without one (its servers come from DNS, RFC 3263), else `port`.
    public var uriPort: Int? { hostKind == .domainName && !hasExplicitPort ? nil : port }

    /// The address as a SIP URI, with the port always written: `sip:10.0.0.1:5060;transport=udp`,
    /// `sips:sbc.example:5061`.
    public var uri: String {
        var out = "\(secure ? "sips" : "sip"):\(hostReference):\(port)"
        if let transport, !(secure && transport == .tls) { out += ";transport=\(transport.rawValue)" }
        return out
    }

    /// Same as `uri`.
    public var description: String { uri }
}

/// Why a text is not a proxy SIP URI.
public struct ProxyAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text that was refused.
    public var input: String
    /// What is wrong with it.
    public var reason: String

    /// `not a SIP URI: "<input>" (<reason>)`.
    public var description: String { "not a SIP URI: \"\(input)\" (\(reason))" }
}

/// RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens, each at
/// most 63 characters, 253 in all. Returns why `host` is not one, or nil.
func hostnameProblem(_ host: Substring) -> String? {
    guard host.count <= 253 else { return "the host name is longer than 253 characters" }
    for label in host.split(separator: ".", omittingEmptySubsequences: false) {
        guard !label.isEmpty else { return "the host name \"\(host)\" has an empty label" }
        guard label.count <= 63 else { return "a label of the host name is longer than 63 characters" }
        guard label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            return "\"\(host)\" is not a valid host name"
        }
        guard label.first != "-", label.last != "-" else { return "a host name label cannot start or end with '-'" }
    }
    return nil
}

/// inet_pton wrapped: the 4 or 16 bytes of a textual IPv4 or IPv6 address.
enum IPAddressBytes {
    /// The bytes of `text`, trying IPv4 first; nil when it is neither.
    static func parse(_ text: String) -> [UInt8]? {
        if let v4 = parse(text, family: AF_INET, length: 4) { return v4 }
        return parse(text, family: AF_INET6, length: 16)
    }

    private static func parse(_ text: String, family: Int32, length: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let ok = buffer.withUnsafeMutableBytes { raw in
            text.withCString { inet_pton(family, $0, raw.baseAddress) }
        }
        return ok == 1 ? Array(buffer.prefix(length)) : nil
    }

    /// The canonical text of 4 or 16 address bytes (inet_ntop).
    static func format(_ bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var out = [CChar](repeating: 0, count: 64)
        let ok = bytes.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer { inet_ntop(family, raw.baseAddress, $0.baseAddress, 64) }
        }
        guard ok != nil else { return "?" }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
