import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// A call as the gateway would start it.
private func outboundCall(_ roomId: String, startedAt: Double = 1_000) -> CallRecord {
    CallRecord(
        roomId: roomId, traceId: "trace-\(roomId)", direction: "outbound", sourceTN: "+15550100",
        targetTN: "+15550199", profile: "carrier-sim", startedAt: startedAt)
}

/// A store on `<dir>/cdr.sqlite` with no heartbeat and a clock that always says `now`.
private func openStore(_ dir: String, now: Double = 5_000) throws -> CallRecordStore {
    try CallRecordStore(path: dir + "/cdr.sqlite", heartbeatInterval: nil, clock: { now })
}

// MARK: Computed fields

@Test(
    arguments: [
        // (ringingAt, answeredAt, endedAt, post-dial delay ms, duration s); startedAt is 1000.
        (nil, nil, nil, nil, nil),  // still dialling
        (1_002.345, nil, nil, 2_345, nil),  // ringing
        (1_002.0, nil, 1_030.0, 2_000, 0),  // ended unanswered: duration 0
        (1_001.5, 1_005.0, nil, 1_500, nil),  // up
        (1_001.5, 1_005.0, 1_065.5, 1_500, 60.5),  // answered and ended
        (nil, 1_010.0, 1_005.0, nil, 0)  // clock stepped back: never negative
    ] as [(Double?, Double?, Double?, Int?, Double?)])
func postDialDelayAndDurationAreComputed(
    ringingAt: Double?, answeredAt: Double?, endedAt: Double?, delay: Int?, duration: Double?
) {
    var record = outboundCall("r")
    record.ringingAt = ringingAt
    record.answeredAt = answeredAt
    record.endedAt = endedAt
    #expect(record.postDialDelayMs == delay)
    #expect(record.durationSec == duration)
}

// MARK: Round trip

@Test(arguments: RecordsBackend.allCases)
func startedUpdatedAndFinishedRecordsRoundTrip(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        defer { store.close() }
        store.started(outboundCall("room-1"))
        store.update(roomId: "room-1") { $0.ringingAt = 1_001.25 }
        store.update(roomId: "room-1") {
            $0.answeredAt = 1_004
            $0.codec = "PCMU"
        }
        store.finished(roomId: "room-1") {
            $0.endedAt = 1_064
            $0.endReason = "completed"
            $0.sipCode = 200
            $0.sipReason = "OK"
            $0.q850Cause = 16
            $0.packetsLost = 3
            $0.jitterMs = 4.5
            $0.roundTripMs = 38.25
        }
        store.flush()

        var expected = outboundCall("room-1")
        expected.ringingAt = 1_001.25
        expected.answeredAt = 1_004
        expected.codec = "PCMU"
        expected.endedAt = 1_064
        expected.endReason = "completed"
        expected.sipCode = 200
        expected.sipReason = "OK"
        expected.q850Cause = 16
        expected.packetsLost = 3
        expected.jitterMs = 4.5
        expected.roundTripMs = 38.25
        let stored = try #require(store.record(roomId: "room-1"))
        #expect(stored == expected)
        #expect(stored.postDialDelayMs == 1_250)
        #expect(stored.durationSec == 60)
        #expect(store.all() == [expected])
        #expect(store.record(roomId: "room-2") == nil)
        #expect(store.writeFailures == 0)
    }
}

@Test(arguments: RecordsBackend.allCases)
func finishedWithoutAnEndTimeUsesTheWritersClock(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open(now: 1_030)
        defer { store.close() }
        store.started(outboundCall("room-1"))
        store.finished(roomId: "room-1") {
            $0.endReason = "no-answer"; $0.sipCode = 408
        }
        let stored = try #require(store.record(roomId: "room-1"))
        #expect(stored.endedAt == 1_030)
        #expect(stored.durationSec == 0)
    }
}

@Test(arguments: RecordsBackend.allCases)
func updatesCannotMoveARecordToAnotherRoom(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        defer { store.close() }
        store.started(outboundCall("room-1"))
        store.update(roomId: "room-1") {
            $0.roomId = "room-9"; $0.codec = "opus"
        }
        #expect(store.all().map(\.roomId) == ["room-1"])
        #expect(store.record(roomId: "room-1")?.codec == "opus")
    }
}

@Test(arguments: RecordsBackend.allCases)
func recordsAreListedInStartOrder(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        defer { store.close() }
        for (room, start) in [("c", 1_003.0), ("a", 1_001.0), ("b", 1_002.0)] {
            store.started(outboundCall(room, startedAt: start))
        }
        #expect(store.all().map(\.roomId) == ["a", "b", "c"])
    }
}

// MARK: Persistence and restarts

@Test(arguments: RecordsBackend.allCases)
func rowsSurviveCloseAndReopen(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let first = try db.open()
        first.started(outboundCall("room-1"))
        first.finished(roomId: "room-1") {
            $0.endedAt = 1_020; $0.endReason = "busy"; $0.sipCode = 486
        }
        first.started(outboundCall("room-2", startedAt: 1_010))
        first.finished(roomId: "room-2") {
            $0.endedAt = 1_011; $0.endReason = "declined"; $0.sipCode = 603
        }
        first.close()

        let second = try db.open()
        defer { second.close() }
        let records = second.all()
        #expect(records.map(\.roomId) == ["room-1", "room-2"])
        #expect(records.map(\.endReason) == ["busy", "declined"])
        #expect(records.map(\.sipCode) == [486, 603])
    }
}

@Test(arguments: RecordsBackend.allCases)
func aCallLeftOpenByAStoreDroppedWithoutClosingEndsAsFailedAtTheNextOpen(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        // The "crash": the store goes away without close(), after its writer committed the
        // row (last seen at its clock, 1005) but with the call still up.
        do {
            let crashed = try db.open(now: 1_005)
            crashed.started(outboundCall("room-1"))
            crashed.update(roomId: "room-1") {
                $0.ringingAt = 1_001; $0.answeredAt = 1_003
            }
            crashed.flush()
        }
        let restarted = try db.open(now: 9_000)
        defer { restarted.close() }
        let record = try #require(restarted.record(roomId: "room-1"))
        #expect(record.endReason == "failed")
        #expect(record.sipReason == "gateway restarted")
        #expect(record.endedAt == 1_005)
        #expect(record.durationSec == 2)
        #expect(record.answeredAt == 1_003)
    }
}

@Test(arguments: RecordsBackend.allCases)
func aCallStillOpenAtCloseEndsAsFailedAtTheCloseTime(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let first = try db.open(now: 1_050)
        first.started(outboundCall("room-1"))
        first.update(roomId: "room-1") { $0.answeredAt = 1_010 }
        first.close()

        let second = try db.open(now: 9_000)
        defer { second.close() }
        let record = try #require(second.record(roomId: "room-1"))
        #expect(record.endReason == "failed")
        #expect(record.endedAt == 1_050)
        #expect(record.durationSec == 40)
    }
}

@Test func aRowWrittenOpenDirectlyIsClosedAtItsLastKnownTime() throws {
    try withTemporaryDirectory("cdr") { dir in
        let path = dir + "/cdr.sqlite"
        try openStore(dir).close()  // creates the schema
        let database = try SQLiteDatabase(path: path)
        let insert = try database.prepare(
            """
            INSERT INTO call_records (room_id, trace_id, direction, source_tn, target_tn, profile,
                started_at, ringing_at, answered_at, last_seen_at)
            VALUES (:room, 't', 'inbound', '+1', '+2', 'p', 1000, 1002, 1040, :seen)
            """)
        // Last seen before the answer (a clock step): the answer is the latest known time.
        for (room, seen) in [("seen-late", 1_090.0), ("seen-early", 1_001.0)] {
            try insert.bind(.text(room), named: ":room")
            try insert.bind(.real(seen), named: ":seen")
            try insert.step()
            insert.reset()
        }
        database.close()

        let store = try openStore(dir)
        defer { store.close() }
        #expect(store.record(roomId: "seen-late")?.endedAt == 1_090)
        #expect(store.record(roomId: "seen-early")?.endedAt == 1_040)
        #expect(store.all().allSatisfy { $0.endReason == "failed" && $0.sipReason == "gateway restarted" })
    }
}

@Test func theFileIsInWALModeAtTheCurrentSchemaVersion() throws {
    try withTemporaryDirectory("cdr") { dir in
        let store = try openStore(dir)
        defer { store.close() }
        let database = try SQLiteDatabase(path: store.path, flags: [.readOnly])
        let mode = try database.prepare("PRAGMA journal_mode")
        #expect(try mode.step())
        #expect(mode.string(0) == "wal")
        let version = try database.prepare("PRAGMA user_version")
        #expect(try version.step())
        #expect(version.int64(0) == Int64(CallRecordTable.schemaVersion))
    }
}

@Test func aFileFromANewerSchemaIsRefused() throws {
    try withTemporaryDirectory("cdr") { dir in
        let path = dir + "/cdr.sqlite"
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA user_version = 99")
        database.close()
        let error = #expect(throws: SQLiteError.self) {
            try CallRecordStore(path: path, heartbeatInterval: nil)
        }
        #expect(error?.message == "schema version 99 is newer than this gateway's \(CallRecordTable.schemaVersion)")
    }
}

@Test func aPathInAMissingDirectoryThrowsAnErrorNamingThePath() throws {
    try withTemporaryDirectory("cdr") { dir in
        let path = dir + "/no-such-dir/cdr.sqlite"
        let error = #expect(throws: SQLiteError.self) {
            try CallRecordStore(path: path, heartbeatInterval: nil)
        }
        #expect(error?.path == path)
        #expect(error?.primaryCode == 14)  // SQLITE_CANTOPEN
        #expect(error?.description.contains(path) == true)
    }
}

// MARK: Failures and concurrency

@Test(arguments: RecordsBackend.allCases)
func aDuplicateRoomCostsOnlyItselfAndIsCounted(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        defer { store.close() }
        store.started(outboundCall("room-1"))
        store.started(outboundCall("room-1", startedAt: 2_000))
        store.started(outboundCall("room-2"))
        store.update(roomId: "no-such-room") { $0.codec = "PCMA" }
        store.flush()
        #expect(store.all().map(\.roomId) == ["room-1", "room-2"])
        #expect(store.record(roomId: "room-1")?.startedAt == 1_000)
        #expect(store.writeFailures == 2)
    }
}

@Test func aFullDiskKeepsTheWritesThatDoNotFitUntilThereIsRoom() throws {
    try withTemporaryDirectory("cdr") { dir in
        // max_page_count makes SQLite answer SQLITE_FULL as a full disk would.
        let store = try CallRecordStore(
            path: dir + "/cdr.sqlite", heartbeatInterval: nil, clock: { 5_000 },
            pragmas: ["PRAGMA max_page_count = 12"])
        defer { store.close() }
        let big = String(repeating: "x", count: 3_000)
        for call in 0..<40 {
            var record = outboundCall("room-\(call)", startedAt: 1_000 + Double(call))
            record.traceId = big
            store.started(record)
        }
        store.flush()
        let stored = store.all().count
        #expect(stored > 0 && stored < 40)
        // Nothing is lost: what did not fit waits, in order, for room.
        #expect(store.writeFailures == 0)
        #expect(store.pendingWrites == 40 - stored)
        for call in 0..<40 { store.finished(roomId: "room-\(call)") { $0.endReason = "completed" } }
        store.flush()
        #expect(store.pendingWrites > 40 - stored)
        // Room again (the disk was cleaned up): the next batch writes everything kept.
        try store.executeForTesting("PRAGMA max_page_count = 100000")
        store.flush()
        #expect(store.pendingWrites == 0)
        let records = store.all()
        #expect(records.count == 40)
        #expect(records.allSatisfy { $0.endReason == "completed" })
        #expect(store.writeFailures == 0)
    }
}

@Test(arguments: RecordsBackend.allCases)
func writesAfterCloseAreDroppedAndCounted(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        store.close()
        store.started(outboundCall("room-1"))
        store.close()  // a second close is harmless
        #expect(store.writeFailures == 1)
        #expect(store.all().isEmpty)
    }
}

@Test(arguments: RecordsBackend.allCases)
func aThousandCallsFromSeveralThreadsAreAllStored(_ backend: RecordsBackend) async throws {
    try await withRecordsDatabase(backend) { db in
        let store = try db.open()
        let threads = 8
        let callsPerThread = 125
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for call in 0..<callsPerThread {
                let room = "t\(thread)-c\(call)"
                store.started(outboundCall(room, startedAt: 1_000 + Double(call)))
                store.update(roomId: room) { $0.ringingAt = 1_000.5 + Double(call) }
                store.finished(roomId: room) {
                    $0.endedAt = 1_010 + Double(call); $0.endReason = "completed"
                }
            }
        }
        store.flush()
        store.close()

        let reopened = try db.open()
        defer { reopened.close() }
        let records = reopened.all()
        #expect(records.count == threads * callsPerThread)
        #expect(Set(records.map(\.roomId)).count == threads * callsPerThread)
        #expect(records.allSatisfy { $0.endReason == "completed" && $0.postDialDelayMs == 500 })
        #expect(store.writeFailures == 0)
    }
}

@Test func theHeartbeatMarksOpenCallsAsSeen() async throws {
    try await withTemporaryDirectory(
        "cdr",
        waiting: { dir in
            let clock = ManualClock(1_000)
            do {
                let store = try CallRecordStore(
                    path: dir + "/cdr.sqlite", heartbeatInterval: 0.02, clock: { clock.now })
                store.started(outboundCall("room-1"))
                store.flush()
                clock.now = 1_600
                // Wait (up to 10 s on a loaded machine) for a heartbeat to note the new time.
                let reader = try SQLiteDatabase(path: store.path, flags: [.readOnly])
                let seen = try reader.prepare("SELECT at FROM gateway_alive")
                _ = try await eventually(timeout: 10, pollInterval: 0.02) {
                    defer { seen.reset() }
                    return try seen.step() && seen.double(0) == 1_600
                }
                // Dropped without close: only a heartbeat can have recorded 1600.
            }
            let restarted = try openStore(dir)
            defer { restarted.close() }
            #expect(restarted.record(roomId: "room-1")?.endedAt == 1_600)
        })
}

/// A clock the test moves by hand.
private final class ManualClock: Sendable {
    private let value: Mutex<Double>
    init(_ start: Double) { value = Mutex(start) }
    var now: Double {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
