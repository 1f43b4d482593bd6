import IOCore
import Redis

/// The session directory (room id → the member holding it) and what survivors need: the
/// held sessions and the answered dialogs of each member.
extension ClusterNode {
    /// A session this node now holds.
    public func sessionStarted(_ session: HeldSession) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            writeHeld(session, member: member)
        }
    }

    /// What the cluster keeps of a session this node already holds changed (its INVITE
    /// rings, or it was answered): only the held entry is written again, not the directory.
    public func sessionChanged(_ session: HeldSession) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            redis.send(["HSET", .init(keys.held(member)), .init(session.roomId), .init(Self.json(session))]) { _ in }
        }
    }

    /// The session's dialog was answered: kept so a survivor can BYE it.
    public func dialogAnswered(roomId: String, dialog: String) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            redis.send(["HSET", .init(keys.dialogs(member)), .init(roomId), .init(dialog)]) { _ in }
        }
    }

    /// The session ended here: out of the directory, and its call no longer counted. For
    /// `keptFor` seconds (the node's history of ended sessions) the cluster still names this
    /// node for it, so other nodes send its requests here for the same answers.
    public func sessionEnded(_ session: HeldSession, keptFor: Double = 0) {
        loop.execute { [self] in
            guard let member = state.value.machine.member else { return }
            redis.send(["HDEL", .init(keys.sessions), .init(session.roomId)]) { _ in }
            if keptFor >= 0.001 {
                redis.send([
                    "SET", .init(keys.ended(session.roomId)), .init(member.name), "PX", .init(Int(keptFor * 1000))
                ]) { _ in }
            }
            redis.send(["HDEL", .init(keys.held(member)), .init(session.roomId)]) { _ in }
            redis.send(["HDEL", .init(keys.dialogs(member)), .init(session.roomId)]) { _ in }
            if let direction = session.countedIn {
                releaseCall(trunk: session.profile, direction: direction, roomId: session.roomId, member: member)
            }
        }
    }

    func writeHeld(_ session: HeldSession, member: NodeMember) {
        redis.send(["HSET", .init(keys.sessions), .init(session.roomId), .init(member.name)]) { _ in }
        redis.send(["HSET", .init(keys.held(member)), .init(session.roomId), .init(Self.json(session))]) { _ in }
    }

    /// Where a session is held.
    public enum Holder: Sendable, Equatable {
        /// This node.
        case here
        /// Another live node, reached at its API.
        case node(NodeRecord)
        /// No node holds it (ended, or never was).
        case none
        /// Redis cannot be asked now.
        case unavailable
    }

    /// Finds the node holding `roomId` (or that held it, while it keeps the ended session);
    /// `then` runs on the cluster's loop.
    public func holder(of roomId: String, then: @escaping @Sendable (Holder) -> Void) {
        loop.execute { [self] in
            // Learned from the event stream, and the member live as of the last heartbeat: no
            // round trip. Anything else (a room never seen, a member gone) asks Redis.
            if let member = state.value.holders[roomId],
                let record = state.value.peers.first(where: { $0.member == member.name })
            {
                return then(.node(record))
            }
            redis.send(["HGET", .init(keys.sessions), .init(roomId)]) { [unowned self] result in
                guard case .success(let value) = result else { return then(.unavailable) }
                guard let name = value.string else {
                    return redis.send(["GET", .init(keys.ended(roomId))]) { [unowned self] result in
                        guard case .success(let value) = result else { return then(.unavailable) }
                        holder(named: value.string, then: then)
                    }
                }
                holder(named: name, then: then)
            }
        }
    }

    /// The holder that `name` (a member name from the directory) is. On the loop.
    private func holder(named name: String?, then: @escaping @Sendable (Holder) -> Void) {
        guard let name, let member = NodeMember(name: name) else { return then(.none) }
        if member == state.value.machine.member { return then(.here) }
        if let record = state.value.peers.first(where: { $0.member == name }) { return then(.node(record)) }
        redis.send(["GET", .init(keys.node(member))]) { result in
            guard case .success(let value) = result else { return then(.unavailable) }
            guard let bytes = value.bytes, let record: NodeRecord = Self.decode(bytes) else { return then(.none) }
            then(.node(record))
        }
    }

    /// `holder(of:)` for a thread that is not an event loop (the API's workers).
    public func holderWaiting(of roomId: String) -> Holder {
        waiting { done in holder(of: roomId, then: done) } ?? .unavailable
    }

    /// Every session the cluster holds: room id → member name.
    public func allSessions(then: @escaping @Sendable ([String: String]?) -> Void) {
        loop.execute { [self] in
            redis.send(["HGETALL", .init(keys.sessions)]) { result in
                guard case .success(let value) = result else { return then(nil) }
                then(Dictionary(Self.pairs(value).map { ($0.0, String(decoding: $0.1, as: UTF8.self)) }) { a, _ in a })
            }
        }
    }

    /// This node's record and the other live members', as of the last heartbeat.
    public func members(then: @escaping @Sendable (_ me: NodeRecord?, _ peers: [NodeRecord]) -> Void) {
        loop.execute { [self] in then(record(), state.value.peers) }
    }

    /// `members` for a thread that is not an event loop.
    public func membersWaiting() -> (me: NodeRecord?, peers: [NodeRecord]) {
        waiting { done in members { me, peers in done((me, peers)) } } ?? (nil, [])
    }

    /// Runs `start` on the loop and waits (a thread that is not a loop) for what it hands
    /// back, at most the Redis command deadline and a second.
    func waiting<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) -> T? {
        precondition(!EventLoop.isOnAnyLoop, "a loop never waits on another loop")
        let box = WaitBox<T>()
        start { box.put($0) }
        return box.take(within: redis.settings.commandTimeout + 1)
    }
}
