import SIP

/// Per-trunk upkeep: REGISTER where the profile asks, OPTIONS pings to the proxies. A proxy
/// named by DNS is located first, asynchronously, like a call's; one that cannot be located
/// is tried again after the negative-cache time.
extension Gateway {
    /// On the SIP loop, at start.
    func startTrunkMaintenance() {
        for profile in profiles.values.sorted(by: { $0.name < $1.name }) {
            guard let outbound = profile.outbound else { continue }
            for (i, proxy) in outbound.proxies.enumerated() {
                let register = outbound.register.enabled && i == 0
                guard register || profile.sip.optionsPingSec > 0 else { continue }
                maintain(profile, proxy, register: register)
            }
        }
    }

    /// The addresses of a located proxy join the trusted sources. On the SIP loop (its state checks it).
    func trustLocated(_ peers: [SIPPeer]) {
        for p in peers { locatedProxyHosts.insert(p.address.host) }
    }

    @discardableResult
    func startRegistration(_ name: String, _ configuration: RegistrationClient.Configuration) -> RegistrationClient {
        let client = ua.registration(configuration)
        client.onStateChange = { [weak self] state in self?.metrics.registration(profile: name, state: "\(state)") }
        client.start()
        registrations.append(client)
        return client
    }

    private func maintain(_ profile: TrunkProfile, _ proxy: ProxyAddress, register: Bool) {
        let transport = Self.transport(profile, proxy)
        let result = ua.locate(proxy.destination, preferred: transport) { [weak self] result in
            self?.located(result, profile, proxy, register: register)
        }
        if let result { located(result, profile, proxy, register: register) }
    }

    private func located(
        _ result: SIPUserAgent.LocateResult, _ profile: TrunkProfile, _ proxy: ProxyAddress, register: Bool
    ) {
        guard !draining else { return }
        guard let peers = try? result.get().compactMap({ self.peer(for: $0, profile: profile, proxy: proxy) }),
            let peer = peers.first
        else {
            ua.loop.schedule(after: max(1, ua.configuration.dns.negativeTTL)) { [weak self] in
                self?.maintain(profile, proxy, register: register)
            }
            return
        }
        trustLocated(peers)
        guard let outbound = profile.outbound else { return }
        let target = SIPURI(scheme: proxy.secure ? "sips" : "sip", host: proxy.hostReference, port: proxy.uriPort)
        if register {
            let user = outbound.auth?.username ?? ua.configuration.contactUser
            let aor = NameAddress(uri: SIPURI(user: user, host: outbound.fromDomain))
            let credentials = self.credentials(outbound)
            let registration = RegistrationClient.Configuration(
                registrar: target, peer: peer, addressOfRecord: aor, credentials: credentials,
                machine: .init(expires: outbound.register.expiresSec))
            if cluster != nil {
                registerWhileHolding(profile.name, registration)
            } else {
                startRegistration(profile.name, registration)
            }
        }
        if profile.sip.optionsPingSec > 0 {
            let k = ua.keepalive(
                target: target, peer: peer, configuration: .init(interval: Double(profile.sip.optionsPingSec)))
            k.start()
            keepalives.append(k)
        }
    }

    /// The trunk's digest credentials, its password read from the environment; nil when it
    /// has none (or the variable is unset).
    func credentials(_ outbound: TrunkProfile.Outbound) -> DigestCredentials? {
        outbound.auth.flatMap { auth in
            (try? auth.password(environment: configuration.environment)).map {
                DigestCredentials(username: auth.username, password: $0)
            }
        }
    }
}
