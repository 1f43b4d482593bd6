import IrisAPI
import SIP

/// Where the INVITE goes: each proxy of the profile expands to its targets (RFC 3263: NAPTR,
/// SRV, A/AAAA; a numeric proxy is its own single target), and failover walks the targets
/// of a proxy before the next proxy. DNS never blocks the SIP loop: a proxy whose answers
/// are not cached is looked up while this session waits, and only this session.
extension GatewaySession {
    /// The current target's peer; nil while it is being located (`sendInvite` runs again when
    /// the answer comes) or when the proxy has none (the machine was told, and moved on or ended).
    func currentTarget() -> SIPPeer? {
        if let targets, targetIndex < targets.count { return targets[targetIndex] }
        let proxy = proxies[proxyIndex]
        let transport = Gateway.transport(profile, proxy)
        // The previous proxy's call has ended; with none out, a close ends the session at once.
        call = nil
        locating = true
        let now = gateway.ua.locate(proxy.destination, preferred: transport) { [weak self] result in
            guard let self else { return }
            locating = false
            guard !machine.isEnded, keep(result) else { return }
            sendInvite()
        }
        guard let now else { return nil }
        locating = false
        return keep(now) ? targets?.first : nil
    }

    /// Keeps located targets (true), or tells the machine the proxy is unusable (false).
    private func keep(_ result: SIPUserAgent.LocateResult) -> Bool {
        let error: SIPLocateError
        switch result {
        case .success(let found):
            let proxy = proxies[proxyIndex]
            let peers = found.compactMap { gateway.peer(for: $0, profile: profile, proxy: proxy) }
            if !peers.isEmpty {
                targets = peers
                targetIndex = 0
                gateway.trustLocated(peers, trunk: profile.name)
                return true
            }
            error = .noAddress(proxies[proxyIndex].host)
        case .failure(let e):
            error = e
        }
        targets = nil
        // A locally made 503, as RFC 3261 §8.1.3.1 treats a server that cannot be reached;
        // the reason says what DNS said.
        handle(
            .proxyUnresolvable(SIPDetails(code: 503, reason: error.reason), proxiesLeft: proxyIndex + 1 < proxies.count)
        )
        return false
    }

    /// The next target of this proxy, or the first of the next proxy.
    func advanceTarget() {
        if let targets, targetIndex + 1 < targets.count {
            targetIndex += 1
        } else {
            proxyIndex += 1
            targets = nil
            targetIndex = 0
        }
    }
}

extension ProxyAddress {
    /// What RFC 3263 locates for this proxy: a host name without a port goes through NAPTR
    /// and SRV, one with a port through A/AAAA, a numeric host through nothing.
    var destination: SIPDestination {
        SIPDestination(
            host: host, port: uriPort,
            transport: transport.map { t -> SIPTargetTransport in
                switch t {
                case .udp: .udp
                case .tcp: .tcp
                case .tls: .tls
                }
            }, secure: secure)
    }
}
