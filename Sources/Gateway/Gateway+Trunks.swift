import SIP

/// Per-trunk upkeep: REGISTER where the profile asks, OPTIONS pings to the proxies. A proxy
/// named by DNS is located first, asynchronously, like a call's; one that cannot be located
/// is tried again after the negative-cache time. A reload that changes or removes a profile
/// makes its upkeep under way stale (`trunkGenerations`): it stops at its next step.
extension Gateway {
    /// On the SIP loop, at start.
    func startTrunkMaintenance() {
        for profile in profiles.values.sorted(by: { $0.name < $1.name }) { maintainTrunk(profile) }
    }

    /// Starts the registration and keepalives `profile` asks for. On the SIP loop.
    func maintainTrunk(_ profile: TrunkProfile) {
        guard let outbound = profile.outbound else { return }
        let generation = trunkGenerations[profile.name, default: 0]
        for (i, proxy) in outbound.proxies.enumerated() {
            let register = outbound.register.enabled && i == 0
            guard register || profile.sip.optionsPingSec > 0 else { continue }
            maintain(profile, proxy, register: register, generation: generation)
        }
    }

    /// Whether upkeep started for `generation` of profile `name` is still the profile's. On the SIP loop.
    func isCurrent(_ name: String, _ generation: Int) -> Bool {
        trunkGenerations[name, default: 0] == generation
    }

    /// The addresses of a located proxy of `trunk` join the trusted sources. On the SIP loop
    /// (its state checks it).
    func trustLocated(_ peers: [SIPPeer], trunk: String) {
        for p in peers {
            locatedByTrunk[trunk, default: []].insert(p.address.host)
            locatedProxyHosts.insert(p.address.host)
        }
    }

    @discardableResult
    func startRegistration(_ name: String, _ configuration: RegistrationClient.Configuration) -> RegistrationClient {
        let client = ua.registration(configuration)
        client.onStateChange = { [weak self] state in self?.metrics.registration(profile: name, state: "\(state)") }
        client.start()
        registrations.append((name, client))
        return client
    }

    private func maintain(_ profile: TrunkProfile, _ proxy: ProxyAddress, register: Bool, generation: Int) {
        guard isCurrent(profile.name, generation) else { return }
        let transport = Self.transport(profile, proxy)
        let result = ua.locate(proxy.destination, preferred: transport) { [weak self] result in
            self?.located(result, profile, proxy, register: register, generation: generation)
        }
        if let result { located(result, profile, proxy, register: register, generation: generation) }
    }

    private func located(
        _ result: SIPUserAgent.LocateResult, _ profile: TrunkProfile, _ proxy: ProxyAddress, register: Bool,
        generation: Int
    ) {
        guard !draining, isCurrent(profile.name, generation) else { return }
        guard let peers = try? result.get().compactMap({ self.peer(for: $0, profile: profile, proxy: proxy) }),
            let peer = peers.first
        else {
            ua.loop.schedule(after: max(1, ua.configuration.dns.negativeTTL)) { [weak self] in
                self?.maintain(profile, proxy, register: register, generation: generation)
            }
            return
        }
        trustLocated(peers, trunk: profile.name)
        guard let outbound = profile.outbound else { return }
        let target = SIPURI(scheme: proxy.secure ? "sips" : "sip", host: proxy.hostReference, port: proxy.uriPort)
        if register {
            let registration = registrationConfiguration(outbound, registrar: target, peer: peer)
            if cluster != nil {
                registerWhileHolding(profile.name, registration, generation: generation)
            } else {
                startRegistration(profile.name, registration)
            }
        }
        if profile.sip.optionsPingSec > 0 {
            let k = ua.keepalive(
                target: target, peer: peer, configuration: .init(interval: Double(profile.sip.optionsPingSec)))
            k.start()
            keepalives.append((profile.name, k))
        }
    }

    /// The REGISTER a trunk sends to `registrar` at `peer`.
    func registrationConfiguration(
        _ outbound: TrunkProfile.Outbound, registrar: SIPURI, peer: SIPPeer
    ) -> RegistrationClient.Configuration {
        let user = outbound.auth?.username ?? ua.configuration.contactUser
        let aor = NameAddress(uri: SIPURI(user: user, host: outbound.fromDomain))
        return RegistrationClient.Configuration(
            registrar: registrar, peer: peer, addressOfRecord: aor, credentials: credentials(outbound),
            machine: .init(expires: outbound.register.expiresSec))
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
