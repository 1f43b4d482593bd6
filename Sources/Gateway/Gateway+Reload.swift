import SIP

// Live reload (SIGHUP, `POST /v1/admin/reload`; docs/operations.md, "Reloading"): the trunk
// profiles and the live settings read again off the SIP loop, checked whole, then put in
// force in one hop on the loop. Sessions hold the profile value they started with, so calls
// in progress go on as they began; new calls, registrations and keepalives take the new one.

extension GatewayConfiguration {
    /// These settings with those a reload may change taken from `next`: the session limits,
    /// the media budget, the room token lifetime, the WebRTC setup time, recordings' retention, the media streams'
    /// settings, the SIP defence, the edge proxies trusted and the inbound digest realm
    /// (`ServeConfiguration.liveKeys`). Everything else stays as it started.
    public func withLiveSettings(of next: GatewayConfiguration) -> GatewayConfiguration {
        var c = self
        c.maxSessions = next.maxSessions
        c.maxInboundSessions = next.maxInboundSessions
        c.mediaLoadBudget = next.mediaLoadBudget
        c.roomTokenLifetime = next.roomTokenLifetime
        c.webrtcSetupTimeout = next.webrtcSetupTimeout
        c.recordings.retentionDays = next.recordings.retentionDays
        c.mediaStreams = next.mediaStreams
        c.sip.defence = next.sip.defence
        c.trustedProxies = next.trustedProxies
        c.inboundAuthRealm = next.inboundAuthRealm
        return c
    }
}

extension Gateway {
    /// Puts `profiles` (a whole directory read again) and the live settings of `next` in
    /// force, and says how the profiles changed. Checks first what only a start would
    /// otherwise check (the trunks' TLS files): on an error nothing changes. From any thread
    /// but the SIP loop (it reads files, then hops to the loop); the caller serializes reloads.
    ///
    /// Changed and removed profiles' keepalives stop and their registrations end: handed
    /// over when the new profile registers the same address of record at the same registrar
    /// (its REGISTER refreshes the binding, which never lapses), unregistered otherwise.
    /// Changed and added profiles then start theirs. Unchanged profiles' go on untouched.
    public func reload(
        profiles new: [TrunkProfile], configuration next: GatewayConfiguration
    ) throws(ProfileError) -> ProfileChanges {
        do {
            try Self.checkTLS(new)
        } catch let error as ProfileError {
            throw error
        } catch {
            throw ProfileError(file: "", keyPath: "sip.tls", message: "\(error)")
        }
        let set = TrunkSet(new, defaultProfile: next.defaultProfile)
        let (changes, before, after) = ua.loop.sync { [self] in
            let before = configuration
            let after = before.withLiveSettings(of: next)
            let changes = ProfileChanges(from: Array(profiles.values), to: new)
            trunks.withLock { $0 = set }
            settings.withLock { $0 = after }
            applyLimits(set)
            applySIPPolicies(set, after)
            for name in changes.removed + changes.changed { retireUpkeep(name, next: set.profiles[name]) }
            for name in changes.removed { locatedByTrunk[name] = nil }
            locatedProxyHosts = locatedByTrunk.values.reduce(into: []) { $0.formUnion($1) }
            for name in changes.changed + changes.added { maintainTrunk(set.profiles[name]!) }
            return (changes, before, after)
        }
        if after.recordings.retentionDays != before.recordings.retentionDays {
            let replacement = after.recordings.retentionDays.map {
                RecordingRetention(directory: after.recordingsDirectory, days: $0)
            }
            recordingRetention.withLock { retention in
                retention?.stop()
                retention = replacement
            }
        }
        return changes
    }

    /// The trunks' admission budgets follow their profiles' limits; the counts of calls in
    /// progress stay (they are released as those calls end). A removed trunk's budget stays
    /// until then too. On the SIP loop.
    private func applyLimits(_ set: TrunkSet) {
        for p in set.profiles.values {
            if let o = p.outbound {
                var a =
                    admissions[p.name] ?? Admission(maxConcurrent: o.maxConcurrentCalls, perSecond: o.callsPerSecond)
                a.maxConcurrent = o.maxConcurrentCalls
                a.perSecond = o.callsPerSecond
                admissions[p.name] = a
            }
            if let i = p.inbound {
                var a =
                    inboundAdmissions[p.name]
                    ?? Admission(maxConcurrent: i.maxConcurrentCalls, perSecond: i.callsPerSecond)
                a.maxConcurrent = i.maxConcurrentCalls
                a.perSecond = i.callsPerSecond
                inboundAdmissions[p.name] = a
            }
        }
    }

    /// Who the SIP agent trusts (the profiles' sources and proxies, and the proxies located by
    /// DNS), the inbound digest challenge and the addresses it advertises, from `profiles` and
    /// `c`: at start (`init`) and on every reload.
    func installTrustAndAddresses(_ profiles: [TrunkProfile], _ c: GatewayConfiguration) {
        let configured = Self.trustedSources(profiles)
        // Called on the SIP loop, where `locatedProxyHosts` lives.
        ua.isTrustedSource = { [unowned self] address in
            configured(address) || locatedProxyHosts.contains(address.host)
        }
        ua.isTrustedProxy = Self.trustedProxies(c)
        ua.inboundDigest = Self.inboundDigestPolicy(profiles, realm: c.inboundAuthRealm, environment: c.environment)
        ua.advertisedAddress = Self.advertisedAddresses(profiles, global: c.sipAdvertise)
    }

    /// What the SIP agent decides from the profiles and the live settings: trusted sources,
    /// digest challenges, advertised addresses, incoming calls' policy, the defence. On the SIP loop.
    private func applySIPPolicies(_ set: TrunkSet, _ c: GatewayConfiguration) {
        installTrustAndAddresses(set.sorted, c)
        if let p = set.inboundPolicyProfile {
            let policy = Self.callPolicy(p)
            ua.inboundCallPolicy = SIPCallPolicy(
                prack: policy.prack, sessionTimer: policy.sessionTimer, replaces: ua.configuration.handlesReplaces)
        }
        ua.updateDefence(c.sip.defence)
    }

    /// Ends the upkeep of profile `name`, changed (`next`) or removed (nil). On the SIP loop.
    private func retireUpkeep(_ name: String, next: TrunkProfile?) {
        trunkGenerations[name, default: 0] += 1
        for k in keepalives where k.trunk == name { k.client.stop() }
        keepalives.removeAll { $0.trunk == name }
        let mine = registrations.filter { $0.trunk == name }.map(\.client)
        registrations.removeAll { $0.trunk == name }
        for client in mine {
            // Its last states are no longer the trunk's: the new registration reports.
            client.onStateChange = nil
            if let next, sameBinding(client.configuration, next) {
                client.handOver()
                continue
            }
            retiredRegistrations.append(client)
            client.onStateChange = { [weak self, unowned client] state in
                guard state == .unregistered else { return }
                self?.retiredRegistrations.removeAll { $0 === client }
            }
            client.stop()
        }
        let registers = next?.outbound?.register.enabled == true
        if !registers { metrics.forgetRegistration(profile: name) }
        // In a cluster the lock goes with the registration: a trunk that still registers keeps
        // it, and its new loop (a new generation) registers again under it; one that no
        // longer does lets it go (if this node holds it), for a node that still registers it.
        clusterRegistrations[name] = nil
        if !registers { cluster?.drop(lock: name) }
    }

    /// Whether `profile` would register the same address of record at the same registrar.
    private func sameBinding(_ old: RegistrationClient.Configuration, _ profile: TrunkProfile) -> Bool {
        guard let o = profile.outbound, o.register.enabled, let proxy = o.proxies.first else { return false }
        let registrar = SIPURI(scheme: proxy.secure ? "sips" : "sip", host: proxy.hostReference, port: proxy.uriPort)
        let new = registrationConfiguration(o, registrar: registrar, peer: old.peer)
        return new.registrar == old.registrar && new.addressOfRecord == old.addressOfRecord
    }
}
