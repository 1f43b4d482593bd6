import IOCore
import SIP

extension Gateway {
    /// The sources the SIP agent answers out of dialog: the `allowFrom` networks of every
    /// trunk without `inbound.auth`, and every numeric proxy address (a carrier's OPTIONS ping
    /// comes from its proxy). Requests inside a call of ours pass whatever their source
    /// (SIPUserAgent+Defence). The networks of trunks with `inbound.auth` do not make a
    /// source trusted: there it may only authenticate, challenged statelessly at the
    /// untrusted rate (`inboundDigestPolicy`), so an unauthenticated flood stays cheap.
    static func trustedSources(_ profiles: [TrunkProfile]) -> @Sendable (SocketAddress) -> Bool {
        let networks = profiles.flatMap { p in p.inbound.flatMap { $0.auth == nil ? $0.allowFrom : nil } ?? [] }
        let proxies = Set(
            profiles.flatMap { $0.outbound?.proxies ?? [] }.filter { $0.hostKind != .domainName }.map(\.host))
        return { address in proxies.contains(address.host) || networks.contains { $0.contains(address.host) } }
    }

    /// The edge proxies whose `X-Irisgw-Source` is believed: `sip.trustedProxies` and the
    /// host of `sip.edgeProxy`.
    static func trustedProxies(_ configuration: GatewayConfiguration) -> @Sendable (SocketAddress) -> Bool {
        let networks = configuration.trustedProxies
        let edge = configuration.sip.edgeProxy.flatMap { try? CIDR(parsing: $0.host) }
        return { address in networks.contains { $0.contains(address.host) } || edge?.contains(address.host) == true }
    }

    /// The inbound budget for a new call from `profile`: nil admits it (and counts it),
    /// otherwise what the 503 should say.
    func admitInbound(_ profile: TrunkProfile) -> String? {
        if inboundSessionCount >= configuration.inboundSessionLimit {
            metrics.refused("inbound_sessions_full")
            return "inbound sessions at their limit"
        }
        // The media opens only when the app joins: calls still ringing count as placed.
        let ringing = sessions.values.reduce(0) {
            $0 + ($1.media == nil && $1.machine.direction == .inbound && !$1.machine.isEnded ? 1 : 0)
        }
        do {
            try media.admit(budget: configuration.mediaLoadBudget, pending: ringing)
        } catch {
            metrics.mediaRefused(.inbound)
            return "media load at its budget"
        }
        switch inboundAdmissions[profile.name]?.admit(now: EventLoop.now()) {
        case .concurrency?:
            metrics.refused("inbound_trunk_concurrency")
            return "trunk at its inbound call limit"
        case .rate?:
            metrics.refused("inbound_trunk_rate")
            return "trunk over its inbound call rate"
        case nil:
            return nil
        }
    }

    /// Every refusal of the SIP agent and its transports, read on the SIP loop.
    public func sipRefusalCounts() -> [String: Int] { ua.loop.sync { [self] in ua.refusalCounts } }
}
