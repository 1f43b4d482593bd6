import IOCore
import Redis

/// Locks held by one member at a time, renewed with each check and taken over when their
/// holder stops renewing them (the registration of a trunk: one node registers it).
extension ClusterNode {
    /// Takes or renews `name` for `ttl` seconds; `then` gets whether this node holds it
    /// (nil: Redis did not answer). On the cluster's loop.
    public func hold(lock name: String, ttl: Double, then: @escaping @Sendable (Bool?) -> Void) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return then(nil) }
            redis.eval(
                Self.lockScript, keys: [.init(keys.registrationLock(name))],
                args: [.init(member.name), .init(Int(ttl * 1000))]
            ) { result in
                guard case .success(let value) = result else { return then(nil) }
                then(value.int == 1)
            }
        }
    }

    /// Lets go of `name` if this node holds it.
    public func drop(lock name: String) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            redis.eval(Self.unlockScript, keys: [.init(keys.registrationLock(name))], args: [.init(member.name)]) {
                _ in
            }
        }
    }

    /// Whether something keyed `key` is done for the first time in the cluster within `ttl`
    /// seconds (an inbound call's webhook); true also when Redis cannot say (better twice
    /// than never).
    public func once(_ key: String, ttl: Double, then: @escaping @Sendable (Bool) -> Void) {
        loop.execute { [self] in
            redis.send(["SET", .init(keys.once(key)), "1", "NX", "PX", .init(Int(ttl * 1000))]) { result in
                switch result {
                case .success(let value): then(!value.isNull)
                case .failure: then(true)
                }
            }
        }
    }
}
