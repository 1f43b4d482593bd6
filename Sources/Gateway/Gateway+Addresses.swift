import SIP

// What the gateway names itself by on each network: behind a NAT, the carrier must see the
// public address in Via, Contact and SDP, while the platform (often on another network)
// keeps seeing the address it can reach (docs/operations.md, "Addresses behind NAT").

extension Gateway {
    /// The SIP agent's advertised address toward a peer: the trunk's `sip.advertise` when the
    /// peer is one of that trunk's numeric proxies or inside its `allowFrom`, otherwise the
    /// serve setting `sipAdvertise` toward peers of its address family (a name applies to all).
    static func advertisedAddresses(
        _ profiles: [TrunkProfile], global: SIPAdvertisedAddress?
    ) -> @Sendable (SIPPeer) -> SIPAdvertisedAddress? {
        let perTrunk: [(proxies: Set<String>, networks: [CIDR], address: SIPAdvertisedAddress)] = profiles.compactMap {
            p in
            guard let address = p.sip.advertise else { return nil }
            let proxies = Set((p.outbound?.proxies ?? []).filter { $0.hostKind != .domainName }.map(\.host))
            return (proxies, p.inbound?.allowFrom ?? [], address)
        }
        return { peer in
            let host = peer.address.host
            if let trunk = perTrunk.first(where: {
                $0.proxies.contains(host) || $0.networks.contains { $0.contains(host) }
            }) {
                return trunk.address
            }
            guard let global else { return nil }
            let numeric = SocketAddress.isNumericHost(global.host)
            return !numeric || global.isIPv6 == peer.address.isIPv6 ? global : nil
        }
    }

    /// The address written into a trunk leg's SDP for `profile`: its `media.advertise`, the
    /// serve setting `rtpAdvertise`, or the bind address; the port is the leg's own.
    func trunkSDPAddress(_ bound: SocketAddress, profile: TrunkProfile) -> SocketAddress {
        SocketAddress(host: profile.media.advertise ?? configuration.rtpAdvertise ?? bound.host, port: bound.port)
    }

    /// The address written into a platform leg's SDP: `platformRtpAdvertise` or the bind address.
    func platformSDPAddress(_ bound: SocketAddress) -> SocketAddress {
        SocketAddress(host: configuration.platformRtpAdvertise ?? bound.host, port: bound.port)
    }
}
