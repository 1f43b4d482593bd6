/// A node's membership in the cluster, as a plain machine: events in, actions out, no socket
/// and no clock (the driver, `ClusterNode`, feeds it Redis's answers and a tick).
///
/// ```
///  idle ──start──► joining ──joined──► member ◄──redisUp── disconnected
///   ▲                                   │ │                    ▲
///   └──── lostMembership (reaped) ──────┘ └────redisDown───────┘
/// ```
///
/// A member heartbeats every `heartbeatInterval` (its record, with a TTL of `nodeTTL`) and
/// checks for dead members every `reapInterval`; a dead member it claims is taken over
/// (its calls ended, its leases freed) and then finished. One request of each kind is in
/// flight at a time, so a slow Redis is never sent a pile of them.
///
/// The races, and what the machine does (tested as a table in `ClusterNodeMachineTests`):
///
/// | race | outcome |
/// |---|---|
/// | two survivors claim the same dead node | Redis's script gives it to one; the other's claim is empty |
/// | a survivor dies while taking over | the claim expires after `takeoverTTL` and another claims it again |
/// | this node was paused past its TTL and a survivor took it over | the next heartbeat answers `.reaped`: `.lostMembership` (end local calls, they were ended for us), then join again |
/// | this node's own reap claims itself (it was late) | the same as being reaped: lost, no takeover of itself |
/// | a heartbeat answer arrives after Redis went down | ignored: the outage already counts |
/// | Redis restarted empty | after `redisUp`: heartbeat and `.republish` (the node re-writes what it holds) |
/// | the node restarts under its id before its TTL ran out | `join` claims the old incarnation, which is taken over like a dead node |
/// | stop with calls still up | no `.leave`: the record expires and a survivor ends them as for a death |
public struct ClusterNodeMachine: Sendable {
    public enum Phase: Sendable, Equatable {
        case idle
        case joining
        case member
        /// Redis cannot be reached; the node keeps serving what it holds.
        case disconnected
        /// Left the cluster (stopped).
        case left
    }

    /// What Redis answered a heartbeat.
    public enum HeartbeatReply: Sendable, Equatable {
        case alive
        /// The node had been counted dead and taken over.
        case reaped
    }

    public enum Event: Sendable, Equatable {
        /// Join under a new incarnation.
        case start(incarnation: String, now: Double)
        /// Joined; `previous` are this id's older incarnations, claimed for takeover.
        case joined(previous: [NodeMember], now: Double)
        case joinFailed(now: Double)
        case tick(now: Double)
        case heartbeatDone(HeartbeatReply, now: Double)
        case heartbeatFailed(now: Double)
        /// Dead members this node claimed.
        case reapDone([NodeMember], now: Double)
        case reapFailed(now: Double)
        /// A takeover's calls were ended and its records closed.
        case takeoverDone(NodeMember)
        case redisUp(now: Double)
        case redisDown(now: Double)
        case drain
        /// Stopping, with this many calls still up.
        case stop(callsUp: Int)
    }

    public enum Action: Sendable, Equatable {
        /// Publish the node's record and claim its id's older incarnations (answer: `joined`).
        case join
        /// Renew the node's record and TTL (answer: `heartbeatDone` or `heartbeatFailed`).
        case heartbeat
        /// Claim members whose TTL ran out, and takeovers left unfinished (answer: `reapDone`).
        case reap
        /// End a dead member's calls and free what it held, then report `takeoverDone`.
        case takeOver(NodeMember)
        /// Delete what is left of a finished takeover.
        case finishTakeover(NodeMember)
        /// Write again what this node holds (sessions, dialogs, leases): Redis may have lost it.
        case republish
        /// The cluster counted this node dead and ended its calls: end them here too (no
        /// BYE needed), then join again.
        case lostMembership
        /// Remove the node's record (a clean stop with nothing up).
        case leave
    }

    public let settings: ClusterSettings
    public private(set) var phase: Phase = .idle
    public private(set) var incarnation: String?
    public private(set) var draining = false
    /// Takeovers under way.
    public private(set) var takingOver: Set<NodeMember> = []
    private var heartbeatInFlight = false
    private var reapInFlight = false
    private var lastHeartbeat = -Double.infinity
    private var lastReap = -Double.infinity
    private var lastJoinAttempt = -Double.infinity
    /// When Redis last confirmed this node alive.
    public private(set) var confirmedAt: Double?

    public init(settings: ClusterSettings) {
        self.settings = settings
    }

    /// This incarnation's member name (nil before `start`).
    public var member: NodeMember? { incarnation.map { NodeMember(id: settings.nodeId, incarnation: $0) } }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let incarnation, let now):
            self.incarnation = incarnation
            phase = .joining
            lastJoinAttempt = now
            heartbeatInFlight = false
            reapInFlight = false
            return [.join]
        case .joined(let previous, let now):
            guard phase == .joining else { return [] }
            phase = .member
            confirmedAt = now
            lastHeartbeat = now
            let claims = previous.filter { $0 != member && !takingOver.contains($0) }
            takingOver.formUnion(claims)
            return claims.map { .takeOver($0) }
        case .joinFailed(let now):
            lastJoinAttempt = now
            return []
        case .tick(let now):
            return tick(now: now)
        case .heartbeatDone(let reply, let now):
            guard heartbeatInFlight else { return [] }
            heartbeatInFlight = false
            guard phase == .member else { return [] }
            switch reply {
            case .alive:
                confirmedAt = now
                return []
            case .reaped:
                return lost(now: now)
            }
        case .heartbeatFailed:
            heartbeatInFlight = false
            return []
        case .reapDone(let claimed, let now):
            guard reapInFlight else { return [] }
            reapInFlight = false
            if let me = member, claimed.contains(me) { return lost(now: now) }
            let fresh = claimed.filter { !takingOver.contains($0) }
            takingOver.formUnion(fresh)
            return fresh.map { .takeOver($0) }
        case .reapFailed:
            reapInFlight = false
            return []
        case .takeoverDone(let dead):
            guard takingOver.remove(dead) != nil else { return [] }
            return [.finishTakeover(dead)]
        case .redisDown:
            heartbeatInFlight = false
            reapInFlight = false
            if phase == .member { phase = .disconnected }
            return []
        case .redisUp(let now):
            switch phase {
            case .disconnected:
                phase = .member
                heartbeatInFlight = true
                lastHeartbeat = now
                return [.heartbeat, .republish]
            case .joining:
                lastJoinAttempt = now
                return [.join]
            default:
                return []
            }
        case .drain:
            draining = true
            // An answer still to come carried the old record: the next tick sends the new one.
            lastHeartbeat = -Double.infinity
            guard phase == .member, !heartbeatInFlight else { return [] }
            heartbeatInFlight = true
            return [.heartbeat]
        case .stop(let callsUp):
            let wasIn = phase == .member || phase == .disconnected
            phase = .left
            return wasIn && callsUp == 0 ? [.leave] : []
        }
    }

    private mutating func tick(now: Double) -> [Action] {
        switch phase {
        case .joining:
            guard now - lastJoinAttempt >= settings.heartbeatInterval else { return [] }
            lastJoinAttempt = now
            return [.join]
        case .member:
            var actions: [Action] = []
            if !heartbeatInFlight, now - lastHeartbeat >= settings.heartbeatInterval {
                heartbeatInFlight = true
                lastHeartbeat = now
                actions.append(.heartbeat)
            }
            if !reapInFlight, now - lastReap >= settings.reapInterval {
                reapInFlight = true
                lastReap = now
                actions.append(.reap)
            }
            return actions
        case .idle, .disconnected, .left:
            return []
        }
    }

    /// Counted dead by the cluster: the calls were ended for us; join again as a new member.
    /// The owner then `start`s again under a new incarnation.
    private mutating func lost(now: Double) -> [Action] {
        phase = .idle
        incarnation = nil
        confirmedAt = nil
        heartbeatInFlight = false
        reapInFlight = false
        return [.lostMembership]
    }
}
