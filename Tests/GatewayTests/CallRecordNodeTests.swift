import Foundation
import TestSupport
import Testing

@testable import Gateway

/// Call records shared by several gateway nodes (a PostgreSQL table, or one SQLite file in
/// these tests), PostgreSQL outages, and the serve key `records`.
@Suite struct CallRecordNodeTests {
    static func call(_ roomId: String, startedAt: Double = 1_000) -> CallRecord {
        CallRecord(
            roomId: roomId, traceId: "trace-\(roomId)", direction: "outbound", sourceTN: "+15550100",
            targetTN: "+15550199", profile: "carrier-sim", startedAt: startedAt)
    }

    /// Node "a" dies mid-call (its store dropped without close); a store that opens as
    /// another node leaves a's rows alone, and b's `closeOpenRecords(ofNode: "a")` ends a's
    /// open rows only, at a's last-seen time, and hands back the dialogs of the answered ones.
    @Test(arguments: RecordsBackend.allCases)
    func aSurvivorClosesOnlyTheDeadNodesOpenRecords(_ backend: RecordsBackend) async throws {
        try await withRecordsDatabase(backend) { db in
            let b = try db.open(nodeId: "b", now: 1_200)
            defer { b.close() }
            do {
                let a = try db.open(nodeId: "a", now: 1_050)
                a.started(Self.call("a-up"))
                a.update(roomId: "a-up") { $0.answeredAt = 1_010 }
                a.keepDialog(roomId: "a-up", #"{"callId":"a-up"}"#)
                a.started(Self.call("a-ringing", startedAt: 1_020))
                a.update(roomId: "a-ringing") { $0.ringingAt = 1_021 }
                a.started(Self.call("a-done"))
                a.finished(roomId: "a-done") {
                    $0.endedAt = 1_030; $0.endReason = "completed"
                }
                a.flush()
                // Dropped without close(): node "a" is gone.
            }
            b.started(Self.call("b-up"))
            b.update(roomId: "b-up") { $0.answeredAt = 1_100 }
            b.keepDialog(roomId: "b-up", #"{"callId":"b-up"}"#)
            b.flush()

            // Another node starting finds nothing of its own to close and touches nobody else's.
            let c = try db.open(nodeId: "c", now: 1_300)
            #expect(c.abandonedDialogs.isEmpty)
            c.close()
            #expect(b.record(roomId: "a-up")?.endedAt == nil)

            let dialogs = try b.closeOpenRecords(ofNode: "a", reason: "nodeLost")
            #expect(dialogs == ["a-up": #"{"callId":"a-up"}"#])
            let up = try #require(b.record(roomId: "a-up"))
            #expect(up.endReason == "nodeLost" && up.endedAt == 1_050 && up.durationSec == 40)
            #expect(b.record(roomId: "a-ringing")?.endReason == "nodeLost")
            #expect(b.record(roomId: "a-ringing")?.answeredAt == nil)
            #expect(b.record(roomId: "a-done")?.endReason == "completed")
            #expect(b.record(roomId: "a-done")?.endedAt == 1_030)
            // b's own call goes on.
            #expect(b.record(roomId: "b-up")?.endedAt == nil)
            // Done once: a second survivor finds nothing left.
            #expect(try b.closeOpenRecords(ofNode: "a", reason: "nodeLost").isEmpty)
            // Node "a" restarting has nothing abandoned any more.
            let restarted = try db.open(nodeId: "a", now: 2_000)
            #expect(restarted.abandonedDialogs.isEmpty)
            restarted.close()
            #expect(b.writeFailures == 0)
        }
    }

    /// PostgreSQL goes down while calls are written and comes back: the writes it refused
    /// wait in the retry queue, the connection is made again, and every record arrives.
    @Test func aPostgresRestartDuringWritesLosesNoRecord() async throws {
        try await withRecordsDatabase(
            .postgres,
            waiting: { db in
                let server = try #require(db.server)
                let store = try db.open(heartbeatInterval: 0.05)
                defer { store.close() }
                func calls(_ range: Range<Int>) {
                    for n in range {
                        store.started(Self.call("room-\(n)", startedAt: 1_000 + Double(n)))
                        store.finished(roomId: "room-\(n)") {
                            $0.endedAt = 2_000; $0.endReason = "completed"
                        }
                    }
                }
                await offThePool {
                    calls(0..<20)
                    store.flush()
                }
                #expect(store.all().count == 20)

                await server.pause()
                await offThePool {
                    calls(20..<40)
                    store.flush()
                }
                #expect(store.pendingWrites == 40, "every write of the second half waits")
                #expect(store.writeFailures == 0)

                try await server.restart()
                #expect(await eventually(timeout: 60, pollInterval: 0.05) { store.pendingWrites == 0 })
                let records = await offThePool { store.all() }
                #expect(records.count == 40)
                #expect(records.allSatisfy { $0.endReason == "completed" && $0.endedAt == 2_000 })
                #expect(store.writeFailures == 0)
            })
    }

    /// A URL libpq cannot parse and a server that refuses the connection are errors that
    /// name the serve key and hide the password.
    @Test(arguments: [
        "postgres://irisgw:s3cret-pw@127.0.0.1:PORT/calls",
        "postgresql://irisgw:s3cret-pw@127.0.0.1:PORT/calls?connect_timeout=5",
        "postgres://irisgw:s3cret-pw@[::1/calls",
        "postgres://irisgw@127.0.0.1:PORT/calls?password=s3cret-pw",
        "postgres://irisgw:s3cret/pw@127.0.0.1:PORT/calls"
    ])
    func anUnusableDatabaseIsAnErrorNamingTheKeyWithoutThePassword(_ url: String) throws {
        // Nothing listens on a port the OS just handed out and took back.
        let url = url.replacingOccurrences(of: "PORT", with: String(try freePort()))
        let location = try #require(CallRecordLocation(records: url))
        let error = #expect(throws: CallRecordOpenError.self) {
            try CallRecordStore.open(location, nodeId: "", retention: .keepAll)
        }
        let text = try #require(error?.description)
        #expect(text.hasPrefix("records \""), "\(text)")
        #expect(text.contains("***"), "\(text)")
        #expect(!text.contains("s3cret"), "\(text)")
    }

    @Test(arguments: [
        ("\"/var/lib/irisgw/calls.sqlite\"", CallRecordLocation.sqlite(path: "/var/lib/irisgw/calls.sqlite")),
        ("\"postgres://gw:pw@db:5432/irisgw\"", .postgres(url: "postgres://gw:pw@db:5432/irisgw")),
        ("\"postgresql:///irisgw?host=/run/postgresql\"", .postgres(url: "postgresql:///irisgw?host=/run/postgresql"))
    ])
    func theRecordsKeyTakesAPathOrAPostgresURL(_ value: String, _ expected: CallRecordLocation) throws {
        let file = try ServeConfiguration.parse("{ records: \(value) }", file: "serve.json5")
        #expect(file.records == expected)
        let configuration = GatewayConfiguration(serve: file, cpus: .current())
        #expect(configuration.callRecords == expected)
        #expect(GatewayConfiguration().callRecords == .sqlite(path: ".irisgw/calls.sqlite"))
    }

    @Test(arguments: ["\"\"", "\"postgres://\"", "42"])
    func aBadRecordsValueNamesFileAndKey(_ value: String) {
        let error = #expect(throws: ProfileError.self) {
            try ServeConfiguration.parse("{ records: \(value) }", file: "serve.json5")
        }
        #expect(error?.file == "serve.json5")
        #expect(error?.keyPath == "records")
    }

    /// A file from before node ids (schema 2) keeps its rows: they belong to node "", and
    /// a call it left open still ends at the old alive stamp.
    @Test func aSchemaTwoFileIsMigratedWithItsRowsOnNodeEmpty() throws {
        try withTemporaryDirectory("cdr") { dir in
            let path = dir + "/cdr.sqlite"
            let database = try SQLiteDatabase(path: path)
            for step in CallRecordTable.migrations.prefix(2) { try database.execute(step) }
            try database.execute(
                """
                PRAGMA user_version = 2;
                INSERT INTO call_records (room_id, trace_id, direction, source_tn, target_tn, profile,
                    started_at, answered_at, last_seen_at, dialog)
                VALUES ('old', 't', 'inbound', '+1', '+2', 'p', 1000, 1010, 1020, '{"callId":"old"}');
                INSERT INTO gateway_alive (id, at) VALUES (1, 1090);
                """)
            database.close()

            let store = try CallRecordStore(path: path, heartbeatInterval: nil, clock: { 5_000 })
            defer { store.close() }
            #expect(store.abandonedDialogs == ["old": #"{"callId":"old"}"#])
            #expect(store.record(roomId: "old")?.endedAt == 1_090)
            #expect(store.record(roomId: "old")?.endReason == "failed")
        }
    }
}
