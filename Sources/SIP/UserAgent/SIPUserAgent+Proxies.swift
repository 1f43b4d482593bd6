// An agent behind a SIP edge proxy (Kamailio's dispatcher in front of several gateways):
// the proxy names the carrier's real source in `X-Irisgw-Source`, which only a trusted
// proxy may set; what the agent originates outside a dialog leaves through the proxy, so
// a carrier sees one SIP address (RFC 3261 §8.1.2, a preloaded Route).

extension SIPHeaderName {
    /// `X-Irisgw-Source: ip:port;transport=udp|tcp|tls`: where a trusted proxy received the request.
    public static let irisgwSource = SIPHeaderName("X-Irisgw-Source")
}

extension SIPPeer {
    /// Parses an `X-Irisgw-Source` value: `ip:port;transport=udp|tcp|tls` (`[v6]:port` for
    /// IPv6, transport UDP when left out). nil for anything else, host names included: the
    /// proxy saw a packet's address, never a name.
    public init?(irisgwSource text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false).map {
            String($0).trimmingSIPWhitespace()
        }
        guard let address = SocketAddress.parse(parts[0], defaultPort: -1), (1...65535).contains(address.port),
            SocketAddress.isNumericHost(address.host)
        else { return nil }
        var transport = SIPTransportProtocol.udp
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "transport",
                let t = SIPTransportProtocol(rawValue: pair[1].uppercased())
            else { return nil }
            transport = t
        }
        self.init(transport: transport, address: address)
    }
}

extension SIPUserAgent {
    /// Sources whose `X-Irisgw-Source` header is believed (edge proxies). A request from one
    /// of them carrying the header is judged by the header's address, its *source*: trust,
    /// bans and rate limits, digest checks and `SIPCall.source`; its responses still go to the
    /// proxy (Via). A proxy's own requests (OPTIONS probes) are trusted. From anyone else the
    /// header is removed before anything reads the request. nil (the default): no proxy.
    /// Set before `start`.
    public var isTrustedProxy: ((SocketAddress) -> Bool)? {
        get { loopState.value.isTrustedProxy }
        set { loopState.value.isTrustedProxy = newValue }
    }

    func isProxy(_ address: SocketAddress) -> Bool { isTrustedProxy?(address) ?? false }

    /// Leaves `X-Irisgw-Source` on a request from a trusted proxy only (one value, the last
    /// the proxy added) and returns the request's source: the header's address when it is
    /// there and well-formed, otherwise `peer`.
    func claimSource(_ request: inout SIPMessage, from peer: SIPPeer) -> SIPPeer {
        let values = request.values(.irisgwSource)
        guard !values.isEmpty else { return peer }
        request.removeHeaders(.irisgwSource)
        guard isProxy(peer.address), let last = values.last, let source = SIPPeer(irisgwSource: last) else {
            return peer
        }
        request.addHeader(.irisgwSource, last)
        return source
    }

    /// The source of a request that passed `receive` (only a trusted proxy's keep the header).
    func source(of request: SIPMessage, from peer: SIPPeer) -> SIPPeer {
        request[.irisgwSource].flatMap { SIPPeer(irisgwSource: $0) } ?? peer
    }

    /// The edge proxy every request we originate outside a dialog goes through, with its
    /// address (nil: none, or a name not in the DNS cache yet).
    var edgeProxy: (uri: SIPURI, peer: SIPPeer)? {
        guard let uri = configuration.edgeProxy,
            let peer = peerWithoutWaiting(for: uri, defaultTransport: .udp)
        else { return nil }
        return (uri, peer)
    }

    /// `request` and where to send it: through the edge proxy (a `Route: <proxy;lr>` on
    /// top, the Request-URI untouched) when it starts no dialog of ours yet, is not already
    /// routed, and the agent has one; otherwise as it was.
    func viaEdgeProxy(_ request: SIPMessage, to peer: SIPPeer) -> (SIPMessage, SIPPeer) {
        guard request.to?.tag == nil, request[.route] == nil, let edge = edgeProxy else { return (request, peer) }
        var r = request
        var route = edge.uri
        if !route.isLooseRouter { route.parameters.append(SIPParameter("lr")) }
        r.prependHeader(.route, "<\(route)>")
        return (r, edge.peer)
    }

    /// The Contact of our registrations: the edge proxy's address when there is one (a
    /// carrier's calls to it reach whichever gateway the proxy picks), else ours.
    func registrationContact(toward peer: SIPPeer) -> SIPURI {
        guard let edge = configuration.edgeProxy else { return contactURI(toward: peer) }
        var uri = SIPURI(user: configuration.contactUser, host: edge.host, port: edge.port)
        uri.parameters = edge.parameters.filter { $0.name.lowercased() == "transport" }
        return uri
    }
}
