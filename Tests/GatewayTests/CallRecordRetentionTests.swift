import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// Call-record retention on a real SQLite file: ended records past the age or the count go,
/// recent ones and calls still up stay; at open and then periodically, on the writer queue.
@Suite struct CallRecordRetentionTests {
    static let day = 86_400.0
    static let now = 1_800_000_000.0

    static func record(_ roomId: String, startedDaysAgo days: Double) -> CallRecord {
        CallRecord(
            roomId: roomId, traceId: "t-\(roomId)", direction: "inbound", sourceTN: "+15550100", targetTN: "+15550199",
            profile: "trunk", startedAt: now - days * day)
    }

    /// Writes `ended` records (finished a minute after their start) and `open` ones with a
    /// store that keeps everything, and closes it. Open rows stay open: no heartbeat ends them.
    static func seed(_ path: String, ended: [(String, Double)], open: [(String, Double)] = []) throws {
        try seed(RecordsDatabase(backend: .sqlite, location: path, server: nil), ended: ended, open: open)
    }

    /// `seed` on a database of either backend.
    static func seed(_ database: RecordsDatabase, ended: [(String, Double)], open: [(String, Double)] = []) throws {
        let store = try database.open(clock: { now })
        for (room, days) in ended {
            store.started(record(room, startedDaysAgo: days))
            store.finished(roomId: room) {
                $0.endedAt = $0.startedAt + 60
                $0.endReason = "completed"
            }
        }
        for (room, days) in open { store.started(record(room, startedDaysAgo: days)) }
        store.flush()
        store.close()
    }

    @Test(arguments: RecordsBackend.allCases)
    func recordsOlderThanTheRetentionGoAtOpenRecentOnesStay(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(backend) { db in
            try Self.seed(db, ended: [("old-1", 400), ("old-2", 91), ("edge", 89.9), ("new", 1)])
            let store = try db.open(retention: CallRecordRetention(days: 90), clock: { Self.now })
            defer { store.close() }
            #expect(Set(store.all().map(\.roomId)) == ["edge", "new"])
            #expect(store.prunedRecords == 2)
        }
    }

    /// A call still up is never pruned, however old its start: its end is still to come.
    @Test func callsStillUpAreKept() async throws {
        try await withTemporaryDirectory(
            "retention",
            waiting: { dir in
                let clock = Atomic<Int64>(Int64(Self.now))
                let store = try CallRecordStore(
                    path: dir + "/calls.sqlite", heartbeatInterval: nil,
                    retention: CallRecordRetention(days: 1, interval: 0.05),
                    clock: { Double(clock.load(ordering: .relaxed)) })
                defer { store.close() }
                store.started(Self.record("up", startedDaysAgo: 0.5))
                store.started(Self.record("done", startedDaysAgo: 0.5))
                store.finished(roomId: "done") { $0.endReason = "completed" }
                store.flush()
                clock.store(Int64(Self.now + 2 * Self.day), ordering: .relaxed)
                #expect(await eventually(timeout: 10) { store.prunedRecords == 1 }, "pruned \(store.prunedRecords)")
                #expect(store.all().map(\.roomId) == ["up"])
            })
    }

    @Test(arguments: RecordsBackend.allCases)
    func beyondTheCountTheOldestEndedRecordsGo(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(
            backend,
            waiting: { db in
                try Self.seed(db, ended: (0..<10).map { ("r\($0)", Double($0)) })
                let store = try db.open(
                    retention: CallRecordRetention(days: 0, maxRecords: 4, chunk: 3), clock: { Self.now })
                defer { store.close() }
                // Three rows a commit, the next chunk queued behind whatever else is waiting.
                #expect(await eventually(timeout: 10) { store.prunedRecords == 6 }, "pruned \(store.prunedRecords)")
                // r0 started today, r9 nine days ago: the four newest stay.
                #expect(store.all().map(\.roomId) == ["r3", "r2", "r1", "r0"])
            })
    }

    /// Pruning goes on while the gateway runs: records that age past the retention go at the
    /// next prune, in chunks, and writes queued meanwhile are all kept.
    @Test func recordsThatAgeWhileRunningGoAtTheNextPrune() async throws {
        try await withTemporaryDirectory(
            "retention",
            waiting: { dir in
                let path = dir + "/calls.sqlite"
                let clock = Atomic<Int64>(Int64(Self.now))
                let store = try CallRecordStore(
                    path: path, heartbeatInterval: nil,
                    retention: CallRecordRetention(days: 1, interval: 0.05, chunk: 2),
                    clock: { Double(clock.load(ordering: .relaxed)) })
                defer { store.close() }
                for i in 0..<5 {
                    store.started(Self.record("early-\(i)", startedDaysAgo: 0.5))
                    store.finished(roomId: "early-\(i)") { $0.endReason = "completed" }
                }
                store.flush()
                #expect(store.all().count == 5 && store.prunedRecords == 0)
                clock.store(Int64(Self.now + Self.day), ordering: .relaxed)  // half a day past the retention
                store.started(Self.record("late", startedDaysAgo: -0.9))
                #expect(await eventually(timeout: 10) { store.prunedRecords == 5 }, "pruned \(store.prunedRecords)")
                #expect(store.all().map(\.roomId) == ["late"])
            })
    }

    @Test func theDefaultKeepsNinetyDaysAndAStoreOpenedToReadPrunesNothing() throws {
        #expect(
            GatewayConfiguration().callRecordRetention == CallRecordRetention(days: 90, maxRecords: nil, interval: 3600)
        )
        try withTemporaryDirectory("retention") { dir in
            let path = dir + "/calls.sqlite"
            try Self.seed(path, ended: [("ancient", 10_000)])
            let reader = try CallRecordStore(path: path, heartbeatInterval: nil, clock: { Self.now })
            defer { reader.close() }
            #expect(reader.all().map(\.roomId) == ["ancient"] && reader.prunedRecords == 0)
        }
    }

    @Test func theServeKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            "{ callRecordRetentionDays: 30, maxCallRecords: 250000 }", file: "serve.json5")
        #expect(c.callRecordRetentionDays == 30 && c.maxCallRecords == 250_000)
        let keep = try ServeConfiguration.parse("{ callRecordRetentionDays: 0 }", file: "serve.json5")
        #expect(keep.callRecordRetentionDays == 0 && keep.maxCallRecords == nil)
    }

    @Test(arguments: [
        ("{ callRecordRetentionDays: -1 }", "callRecordRetentionDays", "must be from 0 to 36500"),
        ("{ callRecordRetentionDays: \"90d\" }", "callRecordRetentionDays", "an integer"),
        ("{ callRecordRetentionDays: 1.5 }", "callRecordRetentionDays", "an integer"),
        ("{ maxCallRecords: 10 }", "maxCallRecords", "must be from 1000"),
        ("{ callRecordRetention: 90 }", "callRecordRetention", "unknown key")
    ])
    func badRetentionValuesNameTheKey(_ text: String, _ key: String, _ message: String) {
        do {
            _ = try ServeConfiguration.parse(text, file: "serve.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "serve.json5" && error.keyPath == key, "\(error)")
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
