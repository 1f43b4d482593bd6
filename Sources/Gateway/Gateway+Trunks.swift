import SIP

/// Per-trunk upkeep: REGISTER where the profile asks, OPTIONS pings to the proxies.
extension Gateway {
    /// On the SIP loop, at start.
    func startTrunkMaintenance() {
        for profile in profiles.values.sorted(by: { $0.name < $1.name }) {
            guard let outbound = profile.outbound else { continue }
            let peers: [(ProxyAddress, SIPURI, SIPPeer)] = outbound.proxies.compactMap { proxy in
                let transport: SIPTransportProtocol = (proxy.transport ?? profile.sip.transport) == .tcp ? .tcp : .udp
                guard let uri = try? SIPURI.parse(proxy.uri), let peer = SIPUserAgent.resolve(uri, defaultTransport: transport) else { return nil }
                return (proxy, uri, peer)
            }
            if outbound.register.enabled, let (proxy, uri, peer) = peers.first {
                let user = outbound.auth?.username ?? ua.configuration.contactUser
                let aor = NameAddress(uri: SIPURI(user: user, host: outbound.fromDomain))
                let credentials: DigestCredentials? = outbound.auth.flatMap { auth in
                    (try? auth.password(environment: configuration.environment)).map { DigestCredentials(username: auth.username, password: $0) }
                }
                let registrar = SIPURI(host: proxy.hostReference, port: uri.port)
                let client = ua.registration(.init(registrar: registrar, peer: peer, addressOfRecord: aor, credentials: credentials,
                                                   machine: .init(expires: outbound.register.expiresSec)))
                let name = profile.name
                client.onStateChange = { [weak self] state in self?.metrics.registration(profile: name, state: "\(state)") }
                client.start()
                registrations.append(client)
            }
            if profile.sip.optionsPingSec > 0 {
                for (_, uri, peer) in peers {
                    let k = ua.keepalive(target: uri, peer: peer, configuration: .init(interval: Double(profile.sip.optionsPingSec)))
                    k.start()
                    keepalives.append(k)
                }
            }
        }
    }
}
