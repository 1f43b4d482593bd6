import Foundation
import Logging

/// The `call_records` table in PostgreSQL, for `CallRecordStore` (serve key `records:
/// "postgres://..."`): the columns of `CallRecordTable`, with PostgreSQL's types, so several
/// gateway nodes can write one table.
///
/// Schema version 3 (`call_records_schema.version`):
///
/// ```sql
/// CREATE TABLE call_records (
///     room_id text PRIMARY KEY NOT NULL, trace_id text NOT NULL, direction text NOT NULL,
///     source_tn text NOT NULL, target_tn text NOT NULL, profile text NOT NULL,
///     started_at double precision NOT NULL, ringing_at double precision, answered_at double precision,
///     ended_at double precision, end_reason text, sip_code integer, sip_reason text, q850_cause integer,
///     codec text, packets_lost bigint, jitter_ms double precision, round_trip_ms double precision,
///     last_seen_at double precision NOT NULL, dialog text, node_id text NOT NULL DEFAULT '',
///     transfer_target text, transfer_outcome text, transferred_by text, transfer_method text,
///     transfer_room_id text, recording_path text, recording_duration_sec double precision,
///     recording_paused text, amd_result text, amd_ms integer, streams integer
/// );
/// CREATE TABLE gateway_alive (node_id text PRIMARY KEY NOT NULL, at double precision NOT NULL);
/// CREATE INDEX call_records_by_start ON call_records (started_at);
/// CREATE INDEX call_records_open ON call_records (room_id) WHERE ended_at IS NULL;
/// CREATE INDEX call_records_open_by_node ON call_records (node_id) WHERE ended_at IS NULL;
/// ```
///
/// Every value is a parameter of `PQexecParams` (no statement is prepared on the server, so
/// a connection made again needs nothing re-prepared). A lost connection is made again with
/// back-off before each batch (`reconnectIfNeeded`); writes it refused meanwhile wait in the
/// store's retry queue.
///
/// Not thread-safe: `CallRecordStore` uses it from its writer queue only.
final class PostgresCallRecordTable: CallRecordBackend {
    /// `migrations[n]` takes the schema from version n to n + 1.
    static let migrations: [String] = [
        """
        CREATE TABLE call_records (
            room_id text PRIMARY KEY NOT NULL, trace_id text NOT NULL, direction text NOT NULL,
            source_tn text NOT NULL, target_tn text NOT NULL, profile text NOT NULL,
            started_at double precision NOT NULL, ringing_at double precision, answered_at double precision,
            ended_at double precision, end_reason text, sip_code integer, sip_reason text, q850_cause integer,
            codec text, packets_lost bigint, jitter_ms double precision, round_trip_ms double precision,
            last_seen_at double precision NOT NULL, dialog text, node_id text NOT NULL DEFAULT ''
        );
        CREATE TABLE gateway_alive (node_id text PRIMARY KEY NOT NULL, at double precision NOT NULL);
        CREATE INDEX call_records_by_start ON call_records (started_at);
        CREATE INDEX call_records_open ON call_records (room_id) WHERE ended_at IS NULL;
        CREATE INDEX call_records_open_by_node ON call_records (node_id) WHERE ended_at IS NULL
        """,
        // 2: call transfer, the columns of `CallRecordTable`'s migration 4. Rows from before had none.
        """
        ALTER TABLE call_records ADD COLUMN transfer_target text, ADD COLUMN transfer_outcome text,
            ADD COLUMN transferred_by text, ADD COLUMN transfer_method text, ADD COLUMN transfer_room_id text
        """,
        // 3: media services, the columns of `CallRecordTable`'s migration 5. Rows from before had none.
        """
        ALTER TABLE call_records ADD COLUMN recording_path text, ADD COLUMN recording_duration_sec double precision,
            ADD COLUMN recording_paused text, ADD COLUMN amd_result text, ADD COLUMN amd_ms integer,
            ADD COLUMN streams integer
        """
    ]

    /// The schema version this build writes.
    static var schemaVersion: Int { migrations.count }

    /// Seconds between attempts to make a lost connection again, doubling up to this.
    static let maxReconnectDelay = 30.0

    let connection: PostgresConnection
    let nodeId: String
    var medium: String { "PostgreSQL server" }
    private var reconnectDelay = 0.0
    private var nextReconnect = ContinuousClock.now

    /// Connects and brings the schema up to date (one transaction, under an advisory lock so
    /// nodes starting together do not race).
    init(url: String, nodeId: String = "") throws(PostgresError) {
        self.nodeId = nodeId
        connection = try PostgresConnection(url: url)
        try migrate()
    }

    func begin() throws(PostgresError) { try connection.execute("BEGIN") }

    func commit() throws(PostgresError) { try connection.execute("COMMIT") }

    func rollback() {
        // Outside a transaction this only warns; with the connection gone there is nothing to undo.
        if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
    }

    func insert(_ record: CallRecord, now: Double) throws(PostgresError) {
        try connection.execute(
            """
            INSERT INTO call_records (\(CallRecord.columns), last_seen_at, node_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                    $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)
            """, record.columnValues(now: now) + [.text(nodeId)])
    }

    func replace(_ record: CallRecord, now: Double) throws(PostgresError) -> Bool {
        try connection.execute(
            """
            UPDATE call_records SET trace_id = $2, direction = $3, source_tn = $4, target_tn = $5,
                profile = $6, started_at = $7, ringing_at = $8, answered_at = $9, ended_at = $10,
                end_reason = $11, sip_code = $12, sip_reason = $13, q850_cause = $14, codec = $15,
                packets_lost = $16, jitter_ms = $17, round_trip_ms = $18, transfer_target = $19,
                transfer_outcome = $20, transferred_by = $21, transfer_method = $22, transfer_room_id = $23,
                recording_path = $24, recording_duration_sec = $25, recording_paused = $26, amd_result = $27,
                amd_ms = $28, streams = $29, last_seen_at = $30, dialog = CASE WHEN $10::double precision IS NULL THEN dialog ELSE NULL END
            WHERE room_id = $1
            """, record.columnValues(now: now)
        ).changed > 0
    }

    func record(roomId: String) throws(PostgresError) -> CallRecord? {
        let rows = try connection.execute(
            "SELECT \(CallRecord.columns) FROM call_records WHERE room_id = $1", [.text(roomId)]
        ).rows
        return rows.count > 0 ? CallRecord(row: rows.row(0)) : nil
    }

    func all() throws(PostgresError) -> [CallRecord] {
        let rows = try connection.execute(
            "SELECT \(CallRecord.columns) FROM call_records ORDER BY started_at, room_id"
        ).rows
        return (0..<rows.count).map { CallRecord(row: rows.row($0)) }
    }

    func prune(
        startedBefore cutoff: Double?, keepingNewest maxRecords: Int?, limit: Int
    ) throws(PostgresError)
        -> Int
    {
        var deleted = 0
        if let cutoff {
            deleted += try connection.execute(
                """
                DELETE FROM call_records WHERE room_id IN (
                    SELECT room_id FROM call_records WHERE ended_at IS NOT NULL AND started_at < $1
                    ORDER BY started_at LIMIT $2)
                """, [.real(cutoff), .integer(Int64(limit))]
            ).changed
        }
        if let maxRecords, deleted < limit {
            deleted += try connection.execute(
                """
                DELETE FROM call_records WHERE room_id IN (
                    SELECT room_id FROM call_records WHERE ended_at IS NOT NULL
                    ORDER BY started_at DESC, room_id DESC LIMIT $2 OFFSET $1)
                """, [.integer(Int64(max(0, maxRecords))), .integer(Int64(limit - deleted))]
            ).changed
        }
        return deleted
    }

    func touchOpenRows(now: Double) throws(PostgresError) {
        try connection.execute(
            "UPDATE call_records SET last_seen_at = $1 WHERE ended_at IS NULL AND node_id = $2",
            [.real(now), .text(nodeId)])
    }

    func stampAlive(now: Double) throws(PostgresError) {
        try connection.execute(
            """
            INSERT INTO gateway_alive (node_id, at) VALUES ($2, $1)
            ON CONFLICT (node_id) DO UPDATE SET at = excluded.at
            """, [.real(now), .text(nodeId)])
    }

    func setDialog(roomId: String, _ dialog: String?) throws(PostgresError) {
        try connection.execute(
            "UPDATE call_records SET dialog = $2 WHERE room_id = $1 AND ended_at IS NULL",
            [.text(roomId), SQLiteValue(dialog)])
    }

    /// A commit is durable on the server already.
    func checkpoint() {}

    func closeOpenRecords(
        ofNode node: String, endReason: String, sipReason: String
    ) throws(PostgresError) -> [String: String] {
        try begin()
        do throws(PostgresError) {
            // The CTE reads each row's dialog as it was before the update clears it.
            let rows = try connection.execute(
                """
                WITH open AS (
                    SELECT room_id, dialog FROM call_records WHERE ended_at IS NULL AND node_id = $1 FOR UPDATE)
                UPDATE call_records SET
                    ended_at = GREATEST(started_at, coalesce(ringing_at, started_at),
                        coalesce(answered_at, started_at), last_seen_at,
                        coalesce((SELECT at FROM gateway_alive WHERE node_id = $1), 0)),
                    end_reason = $2, sip_reason = $3, dialog = NULL
                FROM open WHERE call_records.room_id = open.room_id
                RETURNING open.room_id, open.dialog
                """, [.text(node), .text(endReason), .text(sipReason)]
            ).rows
            try connection.execute("DELETE FROM gateway_alive WHERE node_id = $1", [.text(node)])
            try commit()
            var dialogs: [String: String] = [:]
            for i in 0..<rows.count {
                let row = rows.row(i)
                if let room = row.string(0), let dialog = row.string(1) { dialogs[room] = dialog }
            }
            return dialogs
        } catch {
            rollback()
            throw error
        }
    }

    func isWorthRetrying(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isConnectionProblem == true || !connection.isConnected
    }

    /// With the connection lost, tries `PQreset` when the back-off allows (0.5 s, doubling
    /// to `maxReconnectDelay`); says on fd 2 when it is back.
    func reconnectIfNeeded() {
        guard !connection.isConnected, ContinuousClock.now >= nextReconnect else { return }
        if connection.reset() {
            reconnectDelay = 0
            CallRecordStore.log(.notice, connection.target, "connection made again")
        } else {
            reconnectDelay = min(Self.maxReconnectDelay, max(0.5, reconnectDelay * 2))
            nextReconnect = ContinuousClock.now + .milliseconds(Int(reconnectDelay * 1000))
        }
    }

    /// Applies the migrations from the stored version up, in one transaction. A version newer
    /// than this build's is refused: it would not understand the rows.
    private func migrate() throws(PostgresError) {
        try begin()
        do throws(PostgresError) {
            // Transaction-scoped: released by the COMMIT or ROLLBACK.
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext('irisgw call_records'))")
            try connection.execute("CREATE TABLE IF NOT EXISTS call_records_schema (version integer NOT NULL)")
            let rows = try connection.execute("SELECT version FROM call_records_schema").rows
            let version = rows.count > 0 ? Int(rows.row(0).int64(0) ?? 0) : 0
            guard version <= Self.schemaVersion else {
                throw PostgresError(
                    sqlState: "XX000",
                    message: "schema version \(version) is newer than this gateway's \(Self.schemaVersion)",
                    target: connection.target, sql: "SELECT version FROM call_records_schema",
                    isConnectionProblem: false)
            }
            if version < Self.schemaVersion {
                for step in Self.migrations[version...] {
                    for statement in step.split(separator: ";") { try connection.execute(String(statement)) }
                }
                try connection.execute("DELETE FROM call_records_schema")
                try connection.execute(
                    "INSERT INTO call_records_schema (version) VALUES ($1)", [.integer(Int64(Self.schemaVersion))])
            }
            try commit()
        } catch {
            rollback()
            throw error
        }
    }
}
