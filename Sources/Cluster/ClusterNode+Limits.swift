import Redis

/// A trunk's `maxConcurrentCalls` and `callsPerSecond` for the whole cluster: each call is
/// a lease in Redis, counted and checked in one script, freed when the call ends or when
/// its node is taken over.
extension ClusterNode {
    /// Counts a new call (`roomId`) on `trunk`'s `direction` (`outbound`/`inbound`), or
    /// says which limit refuses it; `then` runs on the cluster's loop.
    public func acquire(
        trunk: String, direction: String, roomId: String, maxConcurrent: Int, perSecond: Int,
        then: @escaping @Sendable (TrunkLimitDecision) -> Void
    ) {
        loop.execute { [self] in
            guard let member = state.value.machine.member, state.value.machine.phase == .member else {
                state.value.statistics.limitChecksUnanswered += 1
                return then(.unavailable)
            }
            redis.eval(
                Self.acquireScript,
                keys: [
                    .init(keys.trunkCalls(trunk, direction)), .init(keys.trunkRate(trunk, direction)),
                    .init(keys.leases(member))
                ],
                args: [.init(roomId), .init(member.name), .init(maxConcurrent), .init(perSecond)]
            ) { [unowned self] result in
                switch result.map(\.int) {
                case .success(1): then(.counted)
                case .success(-1): then(.atConcurrentLimit)
                case .success(-2): then(.atRateLimit)
                default:
                    state.value.statistics.limitChecksUnanswered += 1
                    then(.unavailable)
                }
            }
        }
    }

    /// `acquire` for a thread that is not an event loop (the API's workers).
    public func acquireWaiting(
        trunk: String, direction: String, roomId: String, maxConcurrent: Int, perSecond: Int
    ) -> TrunkLimitDecision {
        waiting { done in
            acquire(
                trunk: trunk, direction: direction, roomId: roomId, maxConcurrent: maxConcurrent,
                perSecond: perSecond, then: done)
        } ?? .unavailable
    }

    /// Frees a call counted with `acquire` that never became a session (refused later).
    public func release(trunk: String, direction: String, roomId: String) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            releaseCall(trunk: trunk, direction: direction, roomId: roomId, member: member)
        }
    }

    func releaseCall(trunk: String, direction: String, roomId: String, member: NodeMember) {
        redis.eval(
            Self.releaseCallScript, keys: [.init(keys.trunkCalls(trunk, direction)), .init(keys.leases(member))],
            args: [.init(roomId)]
        ) { _ in }
    }

    /// The calls counted on a trunk direction across the cluster (tests, `/metrics`).
    public func countedCalls(trunk: String, direction: String, then: @escaping @Sendable (Int?) -> Void) {
        loop.execute { [self] in
            redis.send(["HLEN", .init(keys.trunkCalls(trunk, direction))]) { then(try? $0.get().int) }
        }
    }
}
