import Foundation
import IOCore
import IrisAPI
import Redis

/// Every node's session events in one Redis stream (`P:events`), so a WebSocket on any node
/// sees every event its filter matches: a node appends the events it stamps and reads the
/// others', which the gateway ingests as stamped (in order per session: one session's
/// events come from one node, over one connection).
extension ClusterNode {
    /// Entries the stream keeps at most (about: trimmed in whole nodes by Redis).
    public static let streamLength = 100_000
    /// Entries read at start, so `since` replays sessions older than the node.
    public static let backfill = 5_000

    /// Appends one of this node's events.
    public func publish(_ event: SessionEvent, routingId: String?) {
        let body = Self.json(event)
        loop.execute { [self] in
            guard let member = state.value.machine.member else {
                state.value.statistics.eventsLost += 1
                return
            }
            redis.send([
                "XADD", .init(keys.events), "MAXLEN", "~", .init(Self.streamLength), "*", "m", .init(member.name), "r",
                .init(routingId ?? ""), "e", .init(body)
            ]) { [unowned self] result in
                if case .success = result {
                    state.value.statistics.eventsPublished += 1
                } else {
                    state.value.statistics.eventsLost += 1
                }
            }
        }
    }

    /// Reads the stream for as long as the node runs: first the last `backfill` entries,
    /// then blocking reads of what follows. On the loop.
    func readEvents() {
        guard !state.value.stopped else { return }
        if state.value.lastEventID == "$" {
            reader.send(["XREVRANGE", .init(keys.events), "+", "-", "COUNT", .init(Self.backfill)]) {
                [unowned self] result in
                guard case .success(let value) = result else { return retryRead() }
                let entries = (value.array ?? []).reversed()
                deliver(Array(entries))
                state.value.lastEventID = entries.last?.array?.first?.string ?? "0-0"
                readEvents()
            }
            return
        }
        reader.send(
            [
                "XREAD", "COUNT", 500, "BLOCK", 1000, "STREAMS", .init(keys.events),
                .init(state.value.lastEventID)
            ], timeout: 1
        ) { [unowned self] result in
            guard case .success(let value) = result else { return retryRead() }
            // [[stream, [[id, [field, value, ...]], ...]]], or null when nothing came.
            let entries = value.array?.first?.array?.dropFirst().first?.array ?? []
            deliver(entries)
            if let last = entries.last?.array?.first?.string { state.value.lastEventID = last }
            readEvents()
        }
    }

    private func retryRead() {
        _ = loop.schedule(after: 0.5) { [weak self] in self?.readEvents() }
    }

    private func deliver(_ entries: [RedisValue]) {
        let me = state.value.machine.member?.name
        for entry in entries {
            guard let parts = entry.array, parts.count == 2 else { continue }
            let fields = Dictionary(Self.pairs(parts[1]).map { ($0.0, $0.1) }) { a, _ in a }
            guard let body = fields["e"], let event: SessionEvent = Self.decode(body) else { continue }
            let from = fields["m"].map { String(decoding: $0, as: UTF8.self) }
            if from == me { continue }
            if let member = from.flatMap(NodeMember.init(name:)) {
                state.value.holders.learn(room: event.roomId, member: member, ended: event.event == .onSessionEnded)
            }
            let routing = fields["r"].map { String(decoding: $0, as: UTF8.self) }.flatMap { $0.isEmpty ? nil : $0 }
            state.value.statistics.eventsRead += 1
            state.value.delegate?.remoteEvent(event, routingId: routing)
        }
    }
}
