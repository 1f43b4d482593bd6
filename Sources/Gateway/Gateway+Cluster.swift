import Cluster
import Foundation
import IOCore
import IrisAPI
import SIP

extension Gateway: ClusterNodeDelegate {
    /// The `Reason` of the BYE a survivor sends for a dead node's call (RFC 3326; Q.850 41,
    /// temporary failure).
    static let nodeLostReason = SIPHeader(.reason, "Q.850;cause=41;text=\"gateway node lost\"")

    /// What the cluster keeps of a session.
    func held(_ s: GatewaySession) -> HeldSession {
        HeldSession(
            roomId: s.roomId, traceId: s.traceId, routingId: s.routingId, direction: s.machine.direction.rawValue,
            profile: s.profile.name, startedAt: s.startedAt,
            countedIn: clusterCounts(s.profile, s.machine.direction) ? s.machine.direction.rawValue : nil)
    }

    /// Whether a trunk direction's calls are counted in the cluster's limits.
    func clusterCounts(_ profile: TrunkProfile, _ direction: SessionMachine.Direction) -> Bool {
        cluster != nil && (direction == .outbound ? profile.outbound != nil : profile.inbound != nil)
    }

    /// Counts a new outbound call against its trunk's limits for the whole cluster (before
    /// the node's own admission); a refusal is a 503 naming the limit. When Redis cannot be
    /// asked, the node admits by its share: the trunk's limit over the nodes it last saw.
    /// Returns whether the call was counted (to be released if it never becomes a session).
    /// From a thread that is not an event loop (the API's workers).
    func admitInCluster(_ profile: TrunkProfile, roomId: String) throws(GatewayError) -> Bool {
        guard let cluster, let o = profile.outbound else { return false }
        switch cluster.acquireWaiting(
            trunk: profile.name, direction: SessionMachine.Direction.outbound.rawValue, roomId: roomId,
            maxConcurrent: o.maxConcurrentCalls, perSecond: o.callsPerSecond)
        {
        case .counted:
            return true
        case .atConcurrentLimit:
            throw .unavailable("trunk \(profile.name) is at its limit of \(o.maxConcurrentCalls) calls in the cluster")
        case .atRateLimit:
            throw .unavailable(
                "trunk \(profile.name) is at its limit of \(o.callsPerSecond) new calls per second in the cluster")
        case .unavailable:
            let share = ua.loop.sync { [self] in shareReached(profile, .outbound, limit: o.maxConcurrentCalls, cluster)
            }
            if let share {
                throw .unavailable(
                    "trunk \(profile.name) is at this node's share (\(share)) of its \(o.maxConcurrentCalls) calls while the cluster's Redis cannot be reached"
                )
            }
            return false
        }
    }

    /// While Redis cannot count a trunk's calls, this node takes its share: the limit over the
    /// live nodes it last saw (at least 1). Returns the share when this node's calls of the
    /// trunk direction have reached it (refuse), nil while there is room. On the SIP loop.
    func shareReached(
        _ profile: TrunkProfile, _ direction: SessionMachine.Direction, limit: Int, _ cluster: ClusterNode
    ) -> Int? {
        let share = max(1, limit / cluster.liveNodesSeen)
        let up = sessions.values.filter { $0.profile.name == profile.name && $0.machine.direction == direction }.count
        return up >= share ? share : nil
    }

    /// Frees a cluster count taken by `admitInCluster` for a call that never became a session.
    func releaseInCluster(_ profile: TrunkProfile, roomId: String, counted: Bool) {
        guard counted else { return }
        cluster?.release(trunk: profile.name, direction: SessionMachine.Direction.outbound.rawValue, roomId: roomId)
    }

    /// Counts a new inbound call against its trunk's limits for the whole cluster, after the
    /// node's own admission; `then` runs on the SIP loop with why it is refused (nil:
    /// admitted). Without a cluster it runs at once. When Redis cannot answer, the node's
    /// share decides, as for outbound calls. On the SIP loop.
    func admitInboundInCluster(
        _ profile: TrunkProfile, roomId: String, then: @escaping (String?) -> Void
    ) {
        guard let cluster, let i = profile.inbound else { return then(nil) }
        let deliver = LoopBound(then, loop: ua.loop)
        cluster.acquire(
            trunk: profile.name, direction: SessionMachine.Direction.inbound.rawValue, roomId: roomId,
            maxConcurrent: i.maxConcurrentCalls, perSecond: i.callsPerSecond
        ) { [weak self] decision in
            guard let self else { return }
            ua.loop.execute { [self] in
                let refusal: String?
                switch decision {
                case .counted:
                    refusal = nil
                case .atConcurrentLimit:
                    metrics.refused("inbound_trunk_concurrency")
                    refusal = "trunk at its inbound call limit in the cluster"
                case .atRateLimit:
                    metrics.refused("inbound_trunk_rate")
                    refusal = "trunk over its inbound call rate in the cluster"
                case .unavailable:
                    refusal =
                        shareReached(profile, .inbound, limit: i.maxConcurrentCalls, cluster) != nil
                        ? "trunk at this node's share of its inbound calls (the cluster's Redis is away)" : nil
                }
                deliver.value(refusal)
            }
        }
    }

    /// The inbound notification to the webhook, once in the cluster for a Call-ID (a carrier
    /// INVITE a proxy failed over to a second node is not posted twice). On the SIP loop.
    func notifyOnce(_ n: SessionEvent, callID: String) {
        guard let notifier else { return }
        guard let cluster else { return notifier(n) }
        cluster.once("webhook:" + callID, ttl: 600) { first in
            if first { notifier(n) }
        }
    }

    /// In a cluster one node registers a trunk at a time: the holder of the trunk's lock,
    /// renewed every heartbeat interval with the node's TTL, so when the holder dies another
    /// node registers within about a TTL. A node that loses the lock hands the registration
    /// over without unregistering (the binding, Kamailio's contact, is the new holder's).
    /// While Redis cannot answer, nothing changes. On the SIP loop.
    /// A reload that changes or removes the profile ends the loop of its old `generation`
    /// (Gateway+Reload.swift stops the registration it ran).
    func registerWhileHolding(_ name: String, _ configuration: RegistrationClient.Configuration, generation: Int) {
        guard let cluster, !draining, isCurrent(name, generation) else { return }
        cluster.hold(lock: name, ttl: cluster.settings.nodeTTL) { [weak self] held in
            guard let self else { return }
            ua.loop.execute { [self] in
                guard !draining, isCurrent(name, generation) else { return }
                let mine = clusterRegistrations[name]
                if held == true, mine == nil {
                    clusterRegistrations[name] = startRegistration(name, configuration)
                } else if held == false, let mine {
                    mine.handOver()
                    registrations.removeAll { $0.client === mine }
                    clusterRegistrations[name] = nil
                }
                ua.loop.schedule(after: cluster.settings.heartbeatInterval) { [weak self] in
                    self?.registerWhileHolding(name, configuration, generation: generation)
                }
            }
        }
    }

    /// At shutdown: the trunks this node registers are handed over, and their locks let go,
    /// so another node registers at once and the carrier's binding never lapses. On the SIP loop.
    func handOverRegistrations() {
        guard let cluster else { return }
        for (name, client) in clusterRegistrations {
            client.handOver()
            registrations.removeAll { $0.client === client }
            cluster.drop(lock: name)
        }
        clusterRegistrations = [:]
    }

    /// A session now held here. On the SIP loop.
    func clusterSessionStarted(_ s: GatewaySession) {
        guard let cluster else { return }
        let h = held(s)
        clusterHeld.withLock { $0.sessions[s.roomId] = h }
        cluster.sessionStarted(h)
    }

    /// Our INVITE rings: kept for a survivor to CANCEL if this node dies before the answer.
    /// On the SIP loop.
    func clusterRinging(_ s: GatewaySession, _ call: SIPCall) {
        guard let cluster, let pending = call.pendingInviteSnapshot else { return }
        var h = held(s)
        h.pendingInvite = Self.json(pending)
        clusterHeld.withLock { $0.sessions[s.roomId] = h }
        cluster.sessionChanged(h)
    }

    /// The answered dialog, kept where the next process (records) and a survivor (the
    /// cluster) find it to send the BYE a death never sent; the ringing INVITE is no longer
    /// one to CANCEL. On the SIP loop.
    func keepDialog(_ s: GatewaySession, _ snapshot: DialogSnapshot) {
        let json = snapshot.json
        records.keepDialog(roomId: s.roomId, json)
        guard let cluster else { return }
        let h = held(s)
        clusterHeld.withLock {
            $0.dialogs[s.roomId] = json
            $0.sessions[s.roomId] = h
        }
        cluster.sessionChanged(h)
        cluster.dialogAnswered(roomId: s.roomId, dialog: json)
    }

    static func json<T: Encodable>(_ value: T) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// A session held here ended. On the SIP loop.
    func clusterSessionEnded(_ s: GatewaySession) {
        guard let cluster else { return }
        clusterHeld.withLock {
            $0.sessions[s.roomId] = nil
            $0.dialogs[s.roomId] = nil
        }
        cluster.sessionEnded(held(s), keptFor: configuration.eventRetention)
    }

    // MARK: ClusterNodeDelegate (on the cluster's loop: nothing blocks)

    public func clusterLoad() -> (sessions: Int, mediaLoad: Double) {
        let busiest = media.loads().map(\.busy).max() ?? 0
        let budget = max(configuration.mediaLoadBudget, 0.01)
        return (clusterHeld.withLock { $0.sessions.count }, min(busiest / budget, 1))
    }

    public func takeOver(_ dead: DeadMemberSessions, done: @escaping @Sendable () -> Void) {
        ua.loop.execute { [self] in
            let sent = byeDialogs(dead.dialogs, reason: Self.nodeLostReason, by: "cluster")
            // Ringing outbound calls: CANCEL their INVITEs (the callee stops ringing).
            var cancelled = 0
            for session in dead.sessions where dead.dialogs[session.roomId] == nil {
                guard let text = session.pendingInvite,
                    let pending = try? JSONDecoder().decode(PendingInviteSnapshot.self, from: Data(text.utf8))
                else { continue }
                if ua.sendCancel(for: pending, headers: [Self.nodeLostReason]) { cancelled += 1 }
            }
            let at = Date()
            for session in dead.sessions where sessions[session.roomId] == nil {
                endForDeadNode(session, at: at)
            }
            if case .postgres = configuration.callRecords {
                // Off the loop: the store's writer answers when its queue reaches it. A dialog
                // the records have and Redis had not yet (answered just before the death)
                // gets its BYE from there.
                let records = records, name = dead.member.name, known = Set(dead.dialogs.keys)
                DispatchQueue.global().async { [weak self] in
                    do {
                        let closed = try records.closeOpenRecords(ofNode: name, reason: EndReason.nodeLost.rawValue)
                        Log.cluster.notice(
                            "closed \(closed.count) record(s) of \(name)",
                            ["node": "\(name)", "records": .int(closed.count)])
                        let late = closed.filter { !known.contains($0.key) }
                        guard let self, !late.isEmpty else { return }
                        ua.loop.execute { [self] in _ = byeDialogs(late, reason: Self.nodeLostReason, by: "cluster") }
                    } catch {
                        Log.cluster.error("the records of \(name) could not be closed: \(error)", ["node": "\(name)"])
                    }
                }
            }
            Log.cluster.warning(
                "node \(dead.member.id) lost: sent BYE for \(sent) call(s) and CANCEL for \(cancelled), ended \(dead.sessions.count) session(s)",
                [
                    "node": "\(dead.member.id)", "byes": .int(sent), "cancels": .int(cancelled),
                    "sessions": .int(dead.sessions.count)
                ])
            done()
        }
    }

    /// The app's last events for a session a dead node held: `Disconnected` and ended
    /// `node-lost`, stamped after the last event this node saw of it.
    private func endForDeadNode(_ session: HeldSession, at: Date) {
        var status = SessionEvent(event: .onSessionSIPStatus, roomId: session.roomId, traceId: session.traceId)
        status.status = .disconnected
        status.sip = SIPDetails(code: 503, reason: "node lost")
        var ended = SessionEvent(event: .onSessionEnded, roomId: session.roomId, traceId: session.traceId)
        ended.reason = .nodeLost
        ended.code = IrisCode.remoteUnreachable
        ended.sip = status.sip
        var seq = events.lastSeq(roomId: session.roomId)
        for var e in [status, ended] {
            seq += 1
            e.seq = seq
            e.at = Int64((at.timeIntervalSince1970 * 1000).rounded())
            events.ingest(e, routingId: session.routingId)
            cluster?.publish(e, routingId: session.routingId)
        }
        metrics.ended(.nodeLost)
    }

    public func lostMembership() {
        ua.loop.execute { [self] in
            for s in sessions.values { s.handle(.nodeLost) }
        }
    }

    public func heldNow() -> (sessions: [HeldSession], dialogs: [String: String]) {
        clusterHeld.withLock { (Array($0.sessions.values), $0.dialogs) }
    }

    public func remoteEvent(_ event: SessionEvent, routingId: String?) {
        events.ingest(event, routingId: routingId)
    }
}

/// What this node holds, as the cluster knows it: read from the cluster's loop (load,
/// write-back after a Redis outage), written on the SIP loop.
struct ClusterHeld: Sendable {
    var sessions: [String: HeldSession] = [:]
    var dialogs: [String: String] = [:]
}
