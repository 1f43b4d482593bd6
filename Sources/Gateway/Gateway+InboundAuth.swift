import IOCore
import SIP
import Synchronization

/// Authenticated inbound trunks (`inbound.auth`, docs/sip-profiles.md): which sources the
/// SIP agent challenges, and whose credentials it accepts from where.
extension Gateway {
    /// The digest policy for the SIP agent, nil when no trunk has `inbound.auth`.
    ///
    /// A source in the `allowFrom` of a trunk without `inbound.auth` is matched by its
    /// address and never challenged (source first). Any other source in the `allowFrom` of a
    /// trunk with `inbound.auth` is challenged with the algorithms of those trunks, and a
    /// username is accepted only from a source its trunk allows. Passwords are read from the
    /// environment when an INVITE's credentials are checked; an unset variable is written to
    /// stderr once (its name, never a value) and the trunk cannot authenticate meanwhile.
    static func inboundDigestPolicy(
        _ profiles: [TrunkProfile], realm: String, environment: [String: String]
    ) -> InboundDigestPolicy? {
        let authenticating = profiles.compactMap { p in p.inbound.flatMap { i in i.auth.map { (i, $0) } } }
        guard !authenticating.isEmpty else { return nil }
        let byAddress = profiles.compactMap { p in p.inbound.flatMap { $0.auth == nil ? $0 : nil } }
        let warned = Mutex(Set<String>())
        return InboundDigestPolicy(
            realm: realm,
            algorithms: { address in
                if byAddress.contains(where: { $0.allows(source: address.host) }) { return [] }
                let offered = Set(
                    authenticating.filter { $0.0.allows(source: address.host) }.flatMap { $0.1.algorithms })
                return [DigestAlgorithm.sha256, .md5].filter(offered.contains)
            },
            credentials: { user, address in
                guard
                    let (_, auth) = authenticating.first(where: {
                        $0.1.username == user && $0.0.allows(source: address.host)
                    })
                else {
                    return nil
                }
                do {
                    return (try auth.password(environment: environment), auth.algorithms)
                } catch {
                    if warned.withLock({ $0.insert(auth.passwordEnv).inserted }) {
                        Log.sip.error(
                            "\(error); INVITEs of username \(auth.username) cannot authenticate",
                            ["passwordEnv": "\(auth.passwordEnv)", "username": "\(auth.username)"])
                    }
                    return nil
                }
            })
    }
}
