import Foundation
import TestSupport
import Testing

@testable import Gateway

/// The transfer fields of a call record (`transferTarget` ... `transferRoomId`) in SQLite and
/// PostgreSQL: written on insert and on update, read back after a reopen, and added to a
/// database made before them without losing its rows.
@Suite struct CallRecordTransferTests {
    static func call(_ roomId: String, startedAt: Double = 1_000) -> CallRecord {
        CallRecordNodeTests.call(roomId, startedAt: startedAt)
    }

    /// Sets all five transfer fields, each to a value no other field has.
    static func transferred(
        _ record: inout CallRecord, to target: String, by: String, method: String, outcome: String, room: String
    ) {
        record.transferTarget = target
        record.transferredBy = by
        record.transferMethod = method
        record.transferOutcome = outcome
        record.transferRoomId = room
    }

    /// A record with all five set when it starts (insert), one that gets them from updates
    /// (the gateway's way), and one with none: each reads back as it was written, before and
    /// after the store is closed and opened again.
    @Test(arguments: RecordsBackend.allCases)
    func transferFieldsRoundTripSetOrNot(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(backend) { db in
            // Ended already, so the reopen has no open row to close.
            var inserted = Self.call("inserted", startedAt: 1_000)
            inserted.endedAt = 1_003
            inserted.endReason = "completed"
            Self.transferred(
                &inserted, to: "+15550142", by: "carrier", method: "replaces", outcome: "failed", room: "room-other")

            var updated = Self.call("updated", startedAt: 1_001)
            updated.answeredAt = 1_005
            updated.endedAt = 1_065
            updated.endReason = "transferred"
            Self.transferred(
                &updated, to: "+15550177", by: "app", method: "bridge", outcome: "succeeded", room: "room-leg")

            var plain = Self.call("plain", startedAt: 1_002)
            plain.endedAt = 1_030
            plain.endReason = "completed"
            plain.roundTripMs = 38.25

            let store = try db.open()
            store.started(inserted)
            store.started(Self.call("updated", startedAt: 1_001))
            store.update(roomId: "updated") { $0.answeredAt = 1_005 }
            store.update(roomId: "updated") {
                $0.transferTarget = "+15550177"
                $0.transferredBy = "app"
                $0.transferMethod = "bridge"
            }
            store.finished(roomId: "updated") {
                $0.transferOutcome = "succeeded"
                $0.transferRoomId = "room-leg"
                $0.endedAt = 1_065
                $0.endReason = "transferred"
            }
            store.started(Self.call("plain", startedAt: 1_002))
            store.finished(roomId: "plain") {
                $0.endedAt = 1_030
                $0.endReason = "completed"
                $0.roundTripMs = 38.25
            }
            store.flush()
            #expect(store.record(roomId: "updated") == updated)
            #expect(store.all() == [inserted, updated, plain])
            #expect(store.writeFailures == 0)
            store.close()

            let reopened = try db.open()
            defer { reopened.close() }
            let records = reopened.all()
            #expect(records == [inserted, updated, plain])
            let none = try #require(records.last)
            #expect(none.transferTarget == nil && none.transferOutcome == nil && none.transferredBy == nil)
            #expect(none.transferMethod == nil && none.transferRoomId == nil)
        }
    }

    /// A database made by the schema before the transfer columns (SQLite 3, PostgreSQL 1)
    /// with an ended call and a call still up: it is brought up to date in place, both rows
    /// stay with no transfer, the open one is closed as usual, and an old row takes the new
    /// fields.
    @Test(arguments: RecordsBackend.allCases)
    func aDatabaseFromBeforeTransfersKeepsItsRowsAndTakesTheNewFields(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(backend) { db in
            try Self.makePreviousSchema(db)
            var ended = Self.previousEnded

            let store = try db.open(now: 9_000)
            #expect(store.record(roomId: "old-ended") == ended)
            let open = try #require(store.record(roomId: "old-open"))
            #expect(open.endReason == "failed")
            #expect(open.endedAt == 1_050)
            #expect(open.transferTarget == nil && open.transferOutcome == nil && open.transferRoomId == nil)
            store.update(roomId: "old-ended") {
                Self.transferred(&$0, to: "+15550142", by: "carrier", method: "refer", outcome: "succeeded", room: "r2")
            }
            store.flush()
            #expect(store.writeFailures == 0)
            store.close()

            let reopened = try db.open(now: 9_001)
            defer { reopened.close() }
            Self.transferred(&ended, to: "+15550142", by: "carrier", method: "refer", outcome: "succeeded", room: "r2")
            #expect(reopened.record(roomId: "old-ended") == ended)
            #expect(reopened.all().map(\.roomId) == ["old-ended", "old-open"])
            #expect(try Self.schemaVersion(db) == Self.currentSchemaVersion(db.backend))
        }
    }

    /// The rows the previous schema held, in SQL both databases take.
    static let previousRows = """
        INSERT INTO call_records (room_id, trace_id, direction, source_tn, target_tn, profile, started_at,
            ringing_at, answered_at, ended_at, end_reason, sip_code, round_trip_ms, last_seen_at)
        VALUES ('old-ended', 'trace-old-ended', 'outbound', '+15550100', '+15550199', 'carrier-sim', 1000,
            1001.5, 1004, 1064, 'completed', 200, 38.25, 1064)
        """
    /// The record of `previousRows`' ended call.
    static var previousEnded: CallRecord {
        var ended = call("old-ended")
        ended.ringingAt = 1_001.5
        ended.answeredAt = 1_004
        ended.endedAt = 1_064
        ended.endReason = "completed"
        ended.sipCode = 200
        ended.roundTripMs = 38.25
        return ended
    }
    static let previousOpenRow = """
        INSERT INTO call_records (room_id, trace_id, direction, source_tn, target_tn, profile, started_at,
            answered_at, last_seen_at)
        VALUES ('old-open', 'trace-old-open', 'outbound', '+15550100', '+15550199', 'carrier-sim', 1010, 1020, 1050)
        """

    /// Builds, with the migrations before the transfer columns (pinned, not "the last but
    /// one", so the test keeps testing this step), the schema and rows an older gateway left.
    static func makePreviousSchema(_ db: RecordsDatabase) throws {
        try makeSchema(db, sqliteVersion: 3, postgresVersion: 1)
    }

    /// The schema at the given version of `db`'s backend, as a gateway of then made it, with
    /// `previousRows`, `previousOpenRow` and then `more` in it.
    static func makeSchema(
        _ db: RecordsDatabase, sqliteVersion: Int, postgresVersion: Int, then more: [String] = []
    ) throws {
        switch db.backend {
        case .sqlite:
            let database = try SQLiteDatabase(path: db.location)
            defer { database.close() }
            for step in CallRecordTable.migrations.prefix(sqliteVersion) { try database.execute(step) }
            try database.execute("PRAGMA user_version = \(sqliteVersion)")
            for sql in [previousRows, previousOpenRow] + more { try database.execute(sql) }
        case .postgres:
            let connection = try PostgresConnection(url: db.location)
            defer { connection.close() }
            for step in PostgresCallRecordTable.migrations.prefix(postgresVersion) {
                for statement in step.split(separator: ";") { try connection.execute(String(statement)) }
            }
            try connection.execute("CREATE TABLE call_records_schema (version integer NOT NULL)")
            try connection.execute(
                "INSERT INTO call_records_schema (version) VALUES ($1)", [.integer(Int64(postgresVersion))])
            for sql in [previousRows, previousOpenRow] + more { try connection.execute(sql) }
        }
    }

    static func schemaVersion(_ db: RecordsDatabase) throws -> Int? {
        switch db.backend {
        case .sqlite:
            let database = try SQLiteDatabase(path: db.location, flags: [.readOnly])
            defer { database.close() }
            let statement = try database.prepare("PRAGMA user_version")
            return try statement.step() ? statement.int64(0).map { Int($0) } : nil
        case .postgres:
            let connection = try PostgresConnection(url: db.location)
            defer { connection.close() }
            let rows = try connection.execute("SELECT version FROM call_records_schema").rows
            return rows.count == 1 ? rows.row(0).int64(0).map { Int($0) } : nil
        }
    }

    static func currentSchemaVersion(_ backend: RecordsBackend) -> Int {
        switch backend {
        case .sqlite: CallRecordTable.schemaVersion
        case .postgres: PostgresCallRecordTable.schemaVersion
        }
    }
}
