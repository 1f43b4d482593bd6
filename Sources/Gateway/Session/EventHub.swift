import Foundation
import IrisAPI
import Synchronization

/// Publishes session events to subscribers, and keeps each session's history so a client
/// that subscribes late (or reconnects) replays what it missed with `since=N`: no event is
/// lost to the race between `createWithTN` and subscribing.
///
/// A subscriber matches by routing id or room id. Delivery goes through its `sink`, which
/// must not block (the control API queues per connection, with a bound). Thread-safe.
public final class EventHub: Sendable {
    /// Who wants which events.
    public struct Filter: Sendable, Equatable {
        public var routingId: String?
        public var roomId: String?
        public init(routingId: String? = nil, roomId: String? = nil) {
            self.routingId = routingId
            self.roomId = roomId
        }
        func matches(roomId: String, routingId: String?) -> Bool {
            if let r = self.roomId, r != roomId { return false }
            if let r = self.routingId, r != routingId { return false }
            return true
        }
    }

    public final class Subscription: Sendable {
        public let id: Int
        let filter: Filter
        let sink: @Sendable (SessionEvent) -> Void
        init(id: Int, filter: Filter, sink: @escaping @Sendable (SessionEvent) -> Void) {
            self.id = id
            self.filter = filter
            self.sink = sink
        }
    }

    private struct History {
        var routingId: String?
        /// The first `keptHead` events, then the latest; what was between is `dropped`.
        var events: [SessionEvent] = []
        var endedAt: Double?
        /// The `seq`s dropped to keep the history within `maxEventsPerSession`.
        var dropped: ClosedRange<Int>?
        var lastSeq: Int { events.last?.seq ?? 0 }

        /// Drops a tenth of the bound's events after the head at once (a tenth, so the
        /// shifting is paid once per many events, not per event).
        mutating func bound(_ max: Int, keptHead: Int) {
            guard events.count > max, events.count > keptHead else { return }
            let chunk = min(Swift.max(max / 10, 1), events.count - keptHead)
            let first = events[keptHead].seq, last = events[keptHead + chunk - 1].seq
            dropped = (dropped?.lowerBound ?? first)...last
            events.removeSubrange(keptHead..<(keptHead + chunk))
        }

        /// The events with `seq >= from`, with an `onSessionEventsDropped` where the
        /// dropped ones were.
        func replay(from: Int, _ deliver: (SessionEvent) -> Void) {
            var told = false
            for e in events where e.seq >= from {
                if !told, let dropped, e.seq > dropped.upperBound {
                    told = true
                    if dropped.upperBound >= from {
                        var notice = SessionEvent(
                            event: .onSessionEventsDropped, roomId: e.roomId, traceId: e.traceId,
                            seq: dropped.upperBound, at: e.at)
                        notice.fromSeq = Swift.max(dropped.lowerBound, from)
                        notice.toSeq = dropped.upperBound
                        deliver(notice)
                    }
                }
                deliver(e)
            }
        }
    }

    private struct State {
        var histories: [String: History] = [:]
        var order: [String] = []
        var subscribers: [Int: Subscription] = [:]
        var nextID = 1
        var lastPrune = 0.0
        /// Where this node's own events go besides its subscribers (the cluster's stream).
        var outlet: (@Sendable (SessionEvent, String?) -> Void)?

        /// Appends `e` to its session's history (bounded; an end notes when) and returns the
        /// subscribers it goes to and the session's routing id (`routingId` when the history
        /// has none). The history exists already.
        mutating func record(
            _ e: SessionEvent, at now: Double, maxEvents: Int, routingId: String? = nil
        ) -> (subscribers: [Subscription], routingId: String?) {
            // Mutated in place: taking the history out and writing it back would copy its events.
            histories[e.roomId]!.events.append(e)
            histories[e.roomId]!.bound(maxEvents, keptHead: EventHub.keptHead)
            if e.event == .onSessionEnded { histories[e.roomId]!.endedAt = now }
            let routing = histories[e.roomId]!.routingId ?? routingId
            return (subscribers.values.filter { $0.filter.matches(roomId: e.roomId, routingId: routing) }, routing)
        }
    }

    private let state = Mutex(State())

    /// Who gets a published event, taken under the lock and called outside it.
    private struct Delivery: Sendable {
        var subscribers: [Subscription]
        var outlet: (@Sendable (SessionEvent, String?) -> Void)?
        var routingId: String?
    }
    /// Seconds an ended session's history stays for replay. Default 300.
    public let retention: Double
    /// At most this many sessions' histories are kept (oldest ended ones go first).
    public let maxHistories: Int
    /// At most this many events are kept per session, live or ended: the first
    /// `keptHead` (creation, the first statuses) and the latest. Default 1000.
    public let maxEventsPerSession: Int
    /// Events at the start of a session that are never dropped. 16.
    public static let keptHead = 16

    public init(retention: Double = 300, maxHistories: Int = 10_000, maxEventsPerSession: Int = 1000) {
        self.retention = retention
        self.maxHistories = maxHistories
        self.maxEventsPerSession = max(maxEventsPerSession, Self.keptHead + 1)
    }

    /// Registers a session's routing id before its first event.
    public func open(roomId: String, routingId: String?) {
        state.withLock { s in
            if s.histories[roomId] == nil {
                s.histories[roomId] = History(routingId: routingId)
                s.order.append(roomId)
            }
        }
    }

    /// Stamps `seq` (per session, from 1) and `at` (Unix ms), records and delivers the event.
    @discardableResult
    public func publish(_ event: SessionEvent, now: Date = Date()) -> SessionEvent {
        var e = event
        let targets = state.withLock { s in
            if s.histories[e.roomId] == nil {
                s.histories[e.roomId] = History()
                s.order.append(e.roomId)
            }
            e.seq = s.histories[e.roomId]!.lastSeq + 1
            e.at = Int64((now.timeIntervalSince1970 * 1000).rounded())
            let (subscribers, routing) = s.record(e, at: now.timeIntervalSince1970, maxEvents: maxEventsPerSession)
            return Delivery(subscribers: subscribers, outlet: s.outlet, routingId: routing)
        }
        // Sinks are called outside the lock; they only enqueue.
        for t in targets.subscribers { t.sink(e) }
        targets.outlet?(e, targets.routingId)
        return e
    }

    /// Sends every event this hub stamps (not those it ingests) to `outlet` too, with the
    /// session's routing id: the cluster publishes them for the other nodes.
    public func setOutlet(_ outlet: (@Sendable (SessionEvent, String?) -> Void)?) {
        state.withLock { $0.outlet = outlet }
    }

    /// Records and delivers an event another node stamped, as it is (its `seq` and `at`
    /// kept). One already held (a `seq` not past the session's last) is ignored, so a replay
    /// of the cluster's stream after a reconnect delivers nothing twice. Returns whether it
    /// was new.
    @discardableResult
    public func ingest(_ event: SessionEvent, routingId: String?, now: Double = Date().timeIntervalSince1970) -> Bool {
        let targets: [Subscription]? = state.withLock { s in
            if s.histories[event.roomId] == nil {
                s.histories[event.roomId] = History(routingId: routingId)
                s.order.append(event.roomId)
            }
            guard event.seq > s.histories[event.roomId]!.lastSeq else { return nil }
            return s.record(event, at: now, maxEvents: maxEventsPerSession, routingId: routingId).subscribers
        }
        guard let targets else { return false }
        for t in targets { t.sink(event) }
        return true
    }

    /// The routing id a session was opened with (nil when none, or unknown here).
    public func routingId(roomId: String) -> String? {
        state.withLock { $0.histories[roomId]?.routingId }
    }

    /// Subscribes; first replays history matching the filter (events with `seq >= since`
    /// for a room filter; every retained event of matching sessions when `since` is nil and
    /// a room is named; none for a routing filter without `since`), then delivers live
    /// events. Replay and registration happen under one lock, so nothing falls between.
    public func subscribe(
        _ filter: Filter, since: Int?, sink: @escaping @Sendable (SessionEvent) -> Void
    ) -> Subscription {
        state.withLock { s in
            let sub = Subscription(id: s.nextID, filter: filter, sink: sink)
            s.nextID += 1
            if since != nil || filter.roomId != nil {
                let from = since ?? 1
                for room in s.order {
                    guard let h = s.histories[room], filter.matches(roomId: room, routingId: h.routingId) else {
                        continue
                    }
                    h.replay(from: from, sink)
                }
            }
            s.subscribers[sub.id] = sub
            return sub
        }
    }

    public func unsubscribe(_ subscription: Subscription) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: subscription.id) }
    }

    /// A session's events as a replay from the first gives them (tests, `GET` snapshots).
    public func history(roomId: String) -> [SessionEvent] {
        state.withLock { s in
            var out: [SessionEvent] = []
            s.histories[roomId]?.replay(from: 1) { out.append($0) }
            return out
        }
    }

    /// The `seq` of a session's last event (0 before the first), without copying its history.
    public func lastSeq(roomId: String) -> Int {
        state.withLock { $0.histories[roomId]?.lastSeq ?? 0 }
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Drops histories of sessions ended more than `retention` seconds ago. Called as
    /// sessions end; the walk over every history runs at most once a second.
    public func prune(now: Double = Date().timeIntervalSince1970) {
        state.withLock { s in
            guard now - s.lastPrune >= 1 else { return }
            s.lastPrune = now
            s.order.removeAll { room in
                guard let h = s.histories[room] else { return true }
                let expired = h.endedAt.map { now - $0 > retention } ?? false
                let overflow = s.histories.count > maxHistories && h.endedAt != nil
                if expired || overflow {
                    s.histories[room] = nil
                    return true
                }
                return false
            }
        }
    }
}
