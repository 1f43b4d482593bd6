import Foundation
import Gateway
import IrisAPI
import Synchronization
import Testing

@Suite struct EventHubTests {
    final class Collector: Sendable {
        let events = Mutex<[SessionEvent]>([])
        func add(_ e: SessionEvent) { events.withLock { $0.append(e) } }
        var names: [String] { events.withLock { $0.map { "\($0.roomId):\($0.seq)" } } }
    }

    static func event(_ room: String, _ name: SessionEvent.Name = .onSessionSIPStatus) -> SessionEvent {
        SessionEvent(event: name, roomId: room, traceId: "t")
    }

    @Test func sequenceNumbersArePerSessionFromOne() {
        let hub = EventHub()
        hub.open(roomId: "a", routingId: nil)
        hub.open(roomId: "b", routingId: nil)
        let seqs = [
            hub.publish(Self.event("a")).seq, hub.publish(Self.event("b")).seq, hub.publish(Self.event("a")).seq
        ]
        #expect(seqs == [1, 1, 2])
    }

    /// A cluster: one node's stamped events go out through the outlet, another node ingests
    /// them with their own seq, replays them with `since`, and ignores one it already holds;
    /// ingested events never go back out.
    @Test func eventsOfAnotherNodeAreIngestedAsStamped() {
        let holder = EventHub(), mirror = EventHub()
        let sent = Mutex<[(SessionEvent, String?)]>([])
        holder.setOutlet { e, r in sent.withLock { $0.append((e, r)) } }
        mirror.setOutlet { _, _ in Issue.record("an ingested event went out again") }
        holder.open(roomId: "a", routingId: "alice")
        for _ in 0..<3 { holder.publish(Self.event("a")) }
        let live = Collector()
        _ = mirror.subscribe(.init(routingId: "alice"), since: nil, sink: live.add)
        for (e, r) in sent.withLock({ $0 }) { #expect(mirror.ingest(e, routingId: r)) }
        #expect(live.names == ["a:1", "a:2", "a:3"])
        #expect(!mirror.ingest(sent.withLock { $0[1].0 }, routingId: "alice"), "a duplicate is ignored")
        let replay = Collector()
        _ = mirror.subscribe(.init(roomId: "a"), since: 2, sink: replay.add)
        #expect(replay.names == ["a:2", "a:3"])
        #expect(mirror.routingId(roomId: "a") == "alice")
        #expect(mirror.history(roomId: "a").map(\.at) == holder.history(roomId: "a").map(\.at))
    }

    @Test func roomSubscriberReplaysFromSinceThenGoesLive() {
        let hub = EventHub()
        hub.open(roomId: "a", routingId: "alice")
        for _ in 0..<3 { hub.publish(Self.event("a")) }
        let c = Collector()
        _ = hub.subscribe(.init(roomId: "a"), since: 2, sink: c.add)
        hub.publish(Self.event("a"))
        #expect(c.names == ["a:2", "a:3", "a:4"])
    }

    @Test func routingSubscriberSeesOnlyItsSessions() {
        let hub = EventHub()
        hub.open(roomId: "a", routingId: "alice")
        hub.open(roomId: "b", routingId: "bob")
        let c = Collector()
        _ = hub.subscribe(.init(routingId: "alice"), since: nil, sink: c.add)
        hub.publish(Self.event("a"))
        hub.publish(Self.event("b"))
        #expect(c.names == ["a:1"])
    }

    @Test func unsubscribedSinkHearsNothing() {
        let hub = EventHub()
        let c = Collector()
        let sub = hub.subscribe(.init(roomId: "a"), since: nil, sink: c.add)
        hub.unsubscribe(sub)
        hub.publish(Self.event("a"))
        #expect(c.names.isEmpty)
        #expect(hub.subscriberCount == 0)
    }

    /// Publishing from one thread while another subscribes with `since=1`: the subscriber
    /// gets every event exactly once, in order, whatever the interleaving.
    @Test func noEventLostOrDuplicatedAcrossSubscribeRace() async {
        for _ in 0..<20 {
            let hub = EventHub()
            hub.open(roomId: "a", routingId: nil)
            let c = Collector()
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for _ in 0..<200 { hub.publish(Self.event("a")) } }
                group.addTask { _ = hub.subscribe(.init(roomId: "a"), since: 1, sink: c.add) }
            }
            let seqs = c.events.withLock { $0.map(\.seq) }
            #expect(seqs == Array(1...200))
        }
    }

    @Test func endedHistoriesArePrunedAfterRetention() {
        let hub = EventHub(retention: 10)
        hub.open(roomId: "a", routingId: nil)
        hub.publish(Self.event("a", .onSessionEnded), now: Date(timeIntervalSince1970: 100))
        hub.prune(now: 105)
        #expect(hub.history(roomId: "a").count == 1)
        hub.prune(now: 111)
        #expect(hub.history(roomId: "a").isEmpty)
    }

    /// A live session's history stays within its bound however many events it has: the
    /// first 16 and the latest are kept, and a replay names what was left out where it was.
    @Test(arguments: [1, 10, 4000, 4990])
    func liveHistoryIsBoundedAndTheReplaySaysWhatWasDropped(since: Int) {
        let published = 5000
        let hub = EventHub(maxEventsPerSession: 100)
        hub.open(roomId: "a", routingId: nil)
        for _ in 0..<published { hub.publish(Self.event("a", .onSessionDTMF)) }
        let history = hub.history(roomId: "a")
        #expect(history.count <= 101, "\(history.count) events kept")
        #expect(hub.lastSeq(roomId: "a") == published)
        let c = Collector()
        _ = hub.subscribe(.init(roomId: "a"), since: since, sink: c.add)
        let replay = c.events.withLock { $0 }
        let notices = replay.filter { $0.event == .onSessionEventsDropped }
        let kept = replay.filter { $0.event != .onSessionEventsDropped }
        // The head, the notice (when the replay reaches back into what was dropped), the tail.
        #expect(kept.prefix(while: { $0.seq <= 16 }).count == max(0, 16 - (since - 1)))
        if let last = kept.last { #expect(last.seq == published) }
        let firstTail = kept.first { $0.seq > 16 }?.seq ?? 0
        if since < firstTail {
            #expect(notices.count == 1)
            #expect(notices.first?.fromSeq == max(since, 17) && notices.first?.toSeq == firstTail - 1)
            #expect(notices.first?.seq == firstTail - 1, "the notice sits where the dropped events were")
        } else {
            #expect(notices.isEmpty)
        }
        #expect(replay.map(\.seq) == replay.map(\.seq).sorted(), "in seq order")
    }
}
