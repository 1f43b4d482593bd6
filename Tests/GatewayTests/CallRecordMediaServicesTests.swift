import Foundation
import TestSupport
import Testing

@testable import Gateway

/// The media-service fields of a call record (`recordingPath` ... `streams`) in SQLite and
/// PostgreSQL: written on insert and on update, also by an update that comes after the call
/// was finished (a recording's summary), read back after a reopen, and added to a database
/// made before them without losing its rows.
@Suite struct CallRecordMediaServicesTests {
    static func call(_ roomId: String, startedAt: Double = 1_000) -> CallRecord {
        CallRecordNodeTests.call(roomId, startedAt: startedAt)
    }

    /// Sets the recording's three fields, as the gateway does when its file is complete.
    static func recorded(_ record: inout CallRecord, path: String, duration: Double, paused: String?) {
        record.recordingPath = path
        record.recordingDurationSec = duration
        record.recordingPaused = paused
    }

    /// Sets the detection's verdict and the streams, as the gateway does when a call stops.
    static func detected(_ record: inout CallRecord, amd: String, ms: Int, streams: Int) {
        record.amdResult = amd
        record.amdMs = ms
        record.streams = streams
    }

    /// A record with all six set when it starts (insert); one that gets the detection and
    /// streams before its end and the recording after it, first in the same batch as the end,
    /// then in a batch of its own once the ended row is committed; and one with none. Each
    /// reads back as written, its end untouched by the late update, before and after a reopen.
    @Test(arguments: RecordsBackend.allCases)
    func mediaFieldsRoundTripAndAnUpdateAfterTheEndLands(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(backend) { db in
            var inserted = Self.call("inserted", startedAt: 1_000)
            inserted.endedAt = 1_003
            inserted.endReason = "completed"
            Self.recorded(&inserted, path: "/rec/inserted.wav", duration: 2.5, paused: "0.50-1.25")
            Self.detected(&inserted, amd: "fax", ms: 1_250, streams: 1)

            var late = Self.call("late", startedAt: 1_001)
            late.answeredAt = 1_005
            late.endedAt = 1_065
            late.endReason = "completed"
            Self.detected(&late, amd: "machine", ms: 2_340, streams: 3)
            Self.recorded(&late, path: "/rec/late.ogg", duration: 60.17, paused: "12.40-31.02,40.00-41.50")

            var plain = Self.call("plain", startedAt: 1_002)
            plain.endedAt = 1_030
            plain.endReason = "completed"

            let store = try db.open(now: 2_000)
            store.started(inserted)
            store.started(Self.call("late", startedAt: 1_001))
            store.update(roomId: "late") { $0.answeredAt = 1_005 }
            store.update(roomId: "late") { Self.detected(&$0, amd: "machine", ms: 2_340, streams: 3) }
            store.finished(roomId: "late") {
                $0.endedAt = 1_065
                $0.endReason = "completed"
            }
            // Same batch as the end: only the path so far.
            store.update(roomId: "late") { $0.recordingPath = "/rec/late.ogg" }
            store.started(Self.call("plain", startedAt: 1_002))
            store.finished(roomId: "plain") {
                $0.endedAt = 1_030
                $0.endReason = "completed"
            }
            store.flush()
            #expect(store.record(roomId: "late")?.endedAt == 1_065)
            #expect(store.record(roomId: "late")?.recordingPath == "/rec/late.ogg")
            // A batch of its own, on the ended row already committed.
            store.update(roomId: "late") {
                Self.recorded(&$0, path: "/rec/late.ogg", duration: 60.17, paused: "12.40-31.02,40.00-41.50")
            }
            store.flush()
            #expect(store.record(roomId: "late") == late)
            #expect(store.all() == [inserted, late, plain])
            #expect(store.writeFailures == 0)
            store.close()

            let reopened = try db.open(now: 2_001)
            defer { reopened.close() }
            let records = reopened.all()
            #expect(records == [inserted, late, plain])
            let none = try #require(records.last)
            #expect(none.recordingPath == nil && none.recordingDurationSec == nil && none.recordingPaused == nil)
            #expect(none.amdResult == nil && none.amdMs == nil && none.streams == nil)
        }
    }

    /// A database made by the schema before the media columns (SQLite 4, PostgreSQL 2) with
    /// an ended, transferred call and a call still up: it is brought up to date in place,
    /// both rows stay with their transfer and no media fields, the open one is closed as
    /// usual, and an old row takes the new fields.
    @Test(arguments: RecordsBackend.allCases)
    func aDatabaseFromBeforeMediaServicesKeepsItsRowsAndTakesTheNewFields(
        _ backend: RecordsBackend
    )
        async throws
    {
        try await withRecordsDatabase(backend) { db in
            try CallRecordTransferTests.makeSchema(
                db, sqliteVersion: 4, postgresVersion: 2,
                then: [
                    """
                    UPDATE call_records SET transfer_target = '+15550142', transfer_outcome = 'succeeded',
                        transferred_by = 'app', transfer_method = 'refer' WHERE room_id = 'old-ended'
                    """
                ])
            var ended = CallRecordTransferTests.previousEnded
            ended.transferTarget = "+15550142"
            ended.transferOutcome = "succeeded"
            ended.transferredBy = "app"
            ended.transferMethod = "refer"

            let store = try db.open(now: 9_000)
            #expect(store.record(roomId: "old-ended") == ended)
            let open = try #require(store.record(roomId: "old-open"))
            #expect(open.endReason == "failed")
            #expect(open.endedAt == 1_050)
            #expect(open.recordingPath == nil && open.amdResult == nil && open.streams == nil)
            store.update(roomId: "old-ended") {
                Self.recorded(&$0, path: "/rec/old.wav", duration: 59.5, paused: nil)
                Self.detected(&$0, amd: "human", ms: 900, streams: 2)
            }
            store.flush()
            #expect(store.writeFailures == 0)
            store.close()

            let reopened = try db.open(now: 9_001)
            defer { reopened.close() }
            Self.recorded(&ended, path: "/rec/old.wav", duration: 59.5, paused: nil)
            Self.detected(&ended, amd: "human", ms: 900, streams: 2)
            #expect(reopened.record(roomId: "old-ended") == ended)
            #expect(reopened.all().map(\.roomId) == ["old-ended", "old-open"])
            let expected = backend == .sqlite ? 5 : 3
            #expect(try CallRecordTransferTests.schemaVersion(db) == expected)
            #expect(CallRecordTransferTests.currentSchemaVersion(backend) == expected)
        }
    }
}
