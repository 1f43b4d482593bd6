/// A transport as RFC 3263 names them: what a NAPTR service or an SRV name selects.
public enum SIPTargetTransport: String, Sendable, Hashable, CaseIterable {
    case udp
    case tcp
    /// TLS over TCP (`sips:`, `transport=tls`, NAPTR `SIPS+D2T`, `_sips._tcp`).
    case tls

    /// The transport of ours that carries it.
    public var sipTransport: SIPTransportProtocol? {
        switch self {
        case .udp: .udp
        case .tcp: .tcp
        case .tls: .tls
        }
    }

    init(_ t: SIPTransportProtocol) {
        switch t {
        case .udp: self = .udp
        case .tcp: self = .tcp
        case .tls: self = .tls
        }
    }

    /// The SRV owner prefix (RFC 3263 §4.1): `_sip._udp`, `_sip._tcp`, `_sips._tcp`.
    var srvPrefix: String {
        switch self {
        case .udp: "_sip._udp"
        case .tcp: "_sip._tcp"
        case .tls: "_sips._tcp"
        }
    }

    /// The NAPTR service field that selects it (RFC 3263 §4.1).
    var naptrService: String {
        switch self {
        case .udp: "SIP+D2U"
        case .tcp: "SIP+D2T"
        case .tls: "SIPS+D2T"
        }
    }

    /// The port when neither the URI nor SRV gives one (RFC 3261 §19.1.2).
    var defaultPort: Int { self == .tls ? 5061 : 5060 }
}

/// What to locate: the host part of a proxy's or a Request-URI's SIP URI, with what the URI
/// says of the port and transport (RFC 3263 §4).
public struct SIPDestination: Sendable, Hashable, CustomStringConvertible {
    /// A domain name, or a numeric IPv4 or IPv6 address (without brackets).
    public var host: String
    /// The URI's port, if it has one (then no NAPTR or SRV is asked).
    public var port: Int?
    /// The URI's `transport=` parameter, if it has one (then no NAPTR is asked).
    public var transport: SIPTargetTransport?
    /// A `sips:` URI: only TLS will do.
    public var secure: Bool

    public init(host: String, port: Int? = nil, transport: SIPTargetTransport? = nil, secure: Bool = false) {
        var h = host
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        self.host = h
        self.port = port
        self.transport = transport
        self.secure = secure
    }

    /// The destination a SIP URI names (`sip:` or `sips:`; `transport=udp|tcp|tls`).
    public init(_ uri: SIPURI) {
        let transport: SIPTargetTransport? =
            switch uri.transport?.lowercased() {
            case "udp"?: .udp
            case "tcp"?: .tcp
            case "tls"?: .tls
            default: nil
            }
        self.init(host: uri.host, port: uri.port, transport: transport, secure: uri.scheme.lowercased() == "sips")
    }

    /// True for an IPv4 or IPv6 literal: no DNS at all.
    public var isNumeric: Bool { SIPDestination.isNumeric(host) }

    static func isNumeric(_ host: String) -> Bool {
        SocketAddress(host: host, port: 0).withSockAddr { _, _ in true } != nil
    }

    public var description: String {
        var s = (secure ? "sips:" : "sip:") + (host.contains(":") ? "[\(host)]" : host)
        if let port { s += ":\(port)" }
        if let transport { s += ";transport=\(transport.rawValue)" }
        return s
    }
}

/// One place to send requests: a transport and a numeric address, with the name it came from.
public struct SIPTarget: Sendable, Hashable, CustomStringConvertible {
    public var transport: SIPTargetTransport
    public var address: SocketAddress
    /// The host name that led here (an SRV target or the URI's host).
    public var name: String

    public init(transport: SIPTargetTransport, address: SocketAddress, name: String) {
        self.transport = transport
        self.address = address
        self.name = name
    }

    /// The peer to send to (a TLS one without its target: the caller adds the name to check,
    /// the URI's host, RFC 5922 §4); nil when the transport is one we do not have.
    public var peer: SIPPeer? { transport.sipTransport.map { SIPPeer(transport: $0, address: address) } }

    public var description: String { "\(transport.rawValue):\(address) (\(name))" }
}

/// Why a destination has no usable target. Each case names the host and says what DNS said.
public enum SIPLocateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The host does not exist (NXDOMAIN).
    case noSuchDomain(String)
    /// The host (or every SRV target) has no A or AAAA record.
    case noAddress(String)
    /// SRV says the service is decidedly not offered (a "." target).
    case serviceNotOffered(String)
    /// Every target needs a transport this agent does not offer.
    case unsupportedTransport(String, SIPTargetTransport)
    /// No answer could be had (timeout, unreachable server, SERVFAIL ...).
    case lookupFailed(String, DNSFailure)

    /// The host the error is about.
    public var host: String {
        switch self {
        case .noSuchDomain(let h), .noAddress(let h), .serviceNotOffered(let h), .unsupportedTransport(let h, _),
            .lookupFailed(let h, _):
            h
        }
    }

    /// Short text for a SIP reason phrase and logs: "DNS: carrier.example: no such domain".
    public var reason: String {
        switch self {
        case .noSuchDomain(let h): "DNS: \(h): no such domain"
        case .noAddress(let h): "DNS: \(h): no address"
        case .serviceNotOffered(let h): "DNS: \(h): SIP service not offered"
        case .unsupportedTransport(let h, let t): "\(h): every target needs \(t.rawValue.uppercased()), not offered"
        case .lookupFailed(let h, let f): "DNS: \(h): " + (f == .timeout ? "timeout" : "\(f)")
        }
    }

    public var description: String {
        switch self {
        case .noSuchDomain(let h): "\(h): no such domain (NXDOMAIN)"
        case .noAddress(let h): "\(h): no A or AAAA record"
        case .serviceNotOffered(let h): "\(h): SRV says SIP is not offered there"
        case .unsupportedTransport(let h, let t):
            "\(h): every target needs \(t.rawValue.uppercased()), which this agent does not offer"
        case .lookupFailed(let h, let f): "\(h): \(f)"
        }
    }
}
