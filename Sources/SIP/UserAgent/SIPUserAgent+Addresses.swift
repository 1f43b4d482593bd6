// What the agent calls itself toward a peer: the Via sent-by, the Contact, the host in a
// Call-ID. Behind a NAT the listener's address means nothing to the peer, so a configured
// advertised address (RFC 3261 §18.2.1 sent-by, §8.1.1.8 Contact) replaces it.

/// An address we name ourselves by instead of a listener's: a public host in front of a 1:1
/// NAT, with the port the NAT forwards (nil: the listener's port).
public struct SIPAdvertisedAddress: Sendable, Hashable, CustomStringConvertible {
    /// A numeric address or a host name; no brackets around IPv6.
    public var host: String
    public var port: Int?

    public init(host: String, port: Int? = nil) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`; nil for anything else (an empty
    /// host, a port outside 1-65535, a bare IPv6 address with a port, brackets around a name).
    public static func parse(_ text: String) -> SIPAdvertisedAddress? {
        // A bare IPv6 address (two colons or more) has no port.
        let text = !text.hasPrefix("[") && text.utf8.filter({ $0 == 0x3A }).count > 1 ? "[\(text)]" : text
        guard let a = SocketAddress.parse(text, defaultPort: -1), !a.host.isEmpty,
            a.port == -1 || (1...65535).contains(a.port)
        else { return nil }
        // Brackets hold an IPv6 address and nothing else; a name has no colon.
        if text.hasPrefix("[") != a.isIPv6 || (a.isIPv6 && !SocketAddress.isNumericHost(a.host)) { return nil }
        let host = a.host.lowercased()
        guard host.utf8.allSatisfy({ SIPScanner.isTokenChar($0) || $0 == 0x3A }) else { return nil }
        return SIPAdvertisedAddress(host: host, port: a.port == -1 ? nil : a.port)
    }

    public var isIPv6: Bool { host.utf8.contains(0x3A) }

    public var description: String {
        let h = isIPv6 ? "[\(host)]" : host
        return port.map { "\(h):\($0)" } ?? h
    }
}

extension SIPUserAgent {
    /// Our Via for a request toward `peer` (with rport, RFC 3581).
    func makeVia(toward peer: SIPPeer, branch: String = SIPIdentifiers.branch()) -> Via {
        let local = localAddress(toward: peer)
        return Via(transport: peer.transport.rawValue, host: local.host, port: local.port, branch: branch)
    }

    /// The address we name ourselves by toward `peer`: the advertised one when the gateway
    /// sets one for this peer, otherwise the listener that serves the peer's transport and
    /// family (for a wildcard listener, the source address the kernel routes toward it).
    public func localAddress(toward peer: SIPPeer) -> SocketAddress {
        let listener = listener(toward: peer)
        if let advertised = advertisedAddress?(peer) {
            return SocketAddress(host: advertised.host, port: advertised.port ?? listener.port)
        }
        if SocketAddress.isWildcard(listener.host), let source = transports.routeSource(toward: peer.address) {
            return SocketAddress(host: source, port: listener.port)
        }
        return listener
    }

    /// Our Contact URI for dialogs with `peer`: `;transport=tcp|tls` over a stream, or a
    /// `sips:` URI when the dialog is secure (RFC 5630 §3.1.3: a request for a sips: URI
    /// gets a sips: Contact).
    public func contactURI(toward peer: SIPPeer, secure: Bool = false) -> SIPURI {
        let local = localAddress(toward: peer)
        if secure && peer.transport == .tls {
            return SIPURI(scheme: "sips", user: configuration.contactUser, host: local.host, port: local.port)
        }
        var uri = SIPURI(user: configuration.contactUser, host: local.host, port: local.port)
        if peer.transport.isStream {
            uri.parameters.append(SIPParameter("transport", peer.transport.rawValue.lowercased()))
        }
        return uri
    }

    /// The bound address of the listener that serves `peer`: the same transport and address
    /// family, the one bound to the kernel's source address toward the peer first, then a
    /// wildcard one, then any.
    func listener(toward peer: SIPPeer) -> SocketAddress {
        let sameTransport = localAddresses.filter { $0.transport == peer.transport }.map(\.address)
        let candidates = sameTransport.filter { $0.isIPv6 == peer.address.isIPv6 }
        guard candidates.count > 1 else {
            return candidates.first ?? sameTransport.first ?? localAddresses.first?.address
                ?? SocketAddress(host: "127.0.0.1", port: 5060)
        }
        if let source = transports.routeSource(toward: peer.address),
            let bound = candidates.first(where: { $0.host == source })
        {
            return bound
        }
        return candidates.first { SocketAddress.isWildcard($0.host) } ?? candidates[0]
    }
}
