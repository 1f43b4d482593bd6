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
        let seqs = [hub.publish(Self.event("a")).seq, hub.publish(Self.event("b")).seq, hub.publish(Self.event("a")).seq]
        #expect(seqs == [1, 1, 2])
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
}
