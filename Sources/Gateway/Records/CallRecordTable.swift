/// The `call_records` table: SQL, schema migrations and row mapping for `CallRecordStore`.
///
/// Schema version 5 (`PRAGMA user_version = 5`):
///
/// ```sql
/// CREATE TABLE call_records (
///     room_id       TEXT PRIMARY KEY NOT NULL,
///     trace_id      TEXT NOT NULL,
///     direction     TEXT NOT NULL,     -- 'outbound' | 'inbound'
///     source_tn     TEXT NOT NULL,
///     target_tn     TEXT NOT NULL,
///     profile       TEXT NOT NULL,
///     started_at    REAL NOT NULL,     -- Unix seconds
///     ringing_at    REAL,              -- first 18x
///     answered_at   REAL,
///     ended_at      REAL,              -- NULL while the call is up
///     end_reason    TEXT,
///     sip_code      INTEGER,
///     sip_reason    TEXT,
///     q850_cause    INTEGER,
///     codec         TEXT,
///     packets_lost  INTEGER,
///     jitter_ms     REAL,
///     round_trip_ms REAL,
///     last_seen_at  REAL NOT NULL,     -- gateway clock at the row's last write
///     dialog        TEXT,              -- answered and up: the SIP dialog as JSON (DialogSnapshot)
///     node_id       TEXT NOT NULL DEFAULT '', -- the gateway node that wrote the row
///     transfer_target  TEXT,           -- the number the call was transferred to
///     transfer_outcome TEXT,           -- 'succeeded' | 'failed'
///     transferred_by   TEXT,           -- 'app' | 'carrier'
///     transfer_method  TEXT,           -- 'refer' | 'bridge' | 'dial' | 'replaces'
///     transfer_room_id TEXT,           -- the other session the transfer involved
///     recording_path   TEXT,           -- the call's recording file
///     recording_duration_sec REAL,     -- seconds in it, paused stretches included
///     recording_paused TEXT,           -- paused stretches: '12.40-31.02,40.00-41.50'
///     amd_result       TEXT,           -- 'human' | 'machine' | 'fax' | 'unknown'
///     amd_ms           INTEGER,        -- audio after the answer the verdict took
///     streams          INTEGER         -- media streams the call had (agent leg, forks)
/// );
/// CREATE TABLE gateway_alive (node_id TEXT PRIMARY KEY NOT NULL, at REAL NOT NULL);
/// CREATE INDEX call_records_by_start ON call_records (started_at);
/// CREATE INDEX call_records_open ON call_records (room_id) WHERE ended_at IS NULL;
/// CREATE INDEX call_records_open_by_node ON call_records (node_id) WHERE ended_at IS NULL;
/// ```
///
/// `last_seen_at`, `dialog` and `node_id` are not part of `CallRecord`. A row a crash left
/// open ends at the later of its `last_seen_at` and its node's `gateway_alive.at` (stamped
/// every second), and its `dialog` is handed to the next process, which sends the BYE the
/// crash never sent. `PostgresCallRecordTable` keeps the same columns in PostgreSQL.
/// No CHECK constraints on the text columns: a record with an unexpected value is kept
/// rather than lost.
///
/// Not thread-safe: `CallRecordStore` uses it from its writer queue only.
final class CallRecordTable: CallRecordBackend {
    /// `migrations[n]` takes the schema from `user_version` n to n + 1.
    static let migrations: [String] = [
        """
        CREATE TABLE call_records (
            room_id TEXT PRIMARY KEY NOT NULL, trace_id TEXT NOT NULL, direction TEXT NOT NULL,
            source_tn TEXT NOT NULL, target_tn TEXT NOT NULL, profile TEXT NOT NULL,
            started_at REAL NOT NULL, ringing_at REAL, answered_at REAL, ended_at REAL,
            end_reason TEXT, sip_code INTEGER, sip_reason TEXT, q850_cause INTEGER, codec TEXT,
            packets_lost INTEGER, jitter_ms REAL, round_trip_ms REAL, last_seen_at REAL NOT NULL
        );
        CREATE INDEX call_records_by_start ON call_records (started_at);
        CREATE INDEX call_records_open ON call_records (room_id) WHERE ended_at IS NULL;
        """,
        // 2: the dialog of an answered call, so the next process can BYE what a crash left
        // up; and one row the writer stamps every second while the gateway is alive.
        """
        ALTER TABLE call_records ADD COLUMN dialog TEXT;
        CREATE TABLE gateway_alive (id INTEGER PRIMARY KEY CHECK (id = 1), at REAL NOT NULL);
        """,
        // 3: several gateway nodes may share records (PostgreSQL): each row names its node, and
        // each node has its own alive stamp. Rows from before belong to the single node "".
        """
        ALTER TABLE call_records ADD COLUMN node_id TEXT NOT NULL DEFAULT '';
        CREATE TABLE gateway_alive_by_node (node_id TEXT PRIMARY KEY NOT NULL, at REAL NOT NULL);
        INSERT INTO gateway_alive_by_node (node_id, at) SELECT '', at FROM gateway_alive;
        DROP TABLE gateway_alive;
        ALTER TABLE gateway_alive_by_node RENAME TO gateway_alive;
        CREATE INDEX call_records_open_by_node ON call_records (node_id) WHERE ended_at IS NULL;
        """,
        // 4: call transfer (how, by whom, to what, how it ended). Rows from before had none.
        """
        ALTER TABLE call_records ADD COLUMN transfer_target TEXT;
        ALTER TABLE call_records ADD COLUMN transfer_outcome TEXT;
        ALTER TABLE call_records ADD COLUMN transferred_by TEXT;
        ALTER TABLE call_records ADD COLUMN transfer_method TEXT;
        ALTER TABLE call_records ADD COLUMN transfer_room_id TEXT;
        """,
        // 5: media services (recording, answering-machine detection, streams). Rows from
        // before had none.
        """
        ALTER TABLE call_records ADD COLUMN recording_path TEXT;
        ALTER TABLE call_records ADD COLUMN recording_duration_sec REAL;
        ALTER TABLE call_records ADD COLUMN recording_paused TEXT;
        ALTER TABLE call_records ADD COLUMN amd_result TEXT;
        ALTER TABLE call_records ADD COLUMN amd_ms INTEGER;
        ALTER TABLE call_records ADD COLUMN streams INTEGER;
        """
    ]

    /// The schema version this build writes.
    static var schemaVersion: Int { migrations.count }

    /// `CallRecord.columns`, bound from `columnValues(now:)` as ?1...?29 and `last_seen_at` as ?30.
    private static let columns = CallRecord.columns

    let database: SQLiteDatabase
    private let insertStatement: SQLiteStatement
    private let selectStatement: SQLiteStatement
    private let updateStatement: SQLiteStatement
    private let touchStatement: SQLiteStatement
    private let dialogStatement: SQLiteStatement
    private let aliveStatement: SQLiteStatement
    private let pruneByAgeStatement: SQLiteStatement
    private let pruneByCountStatement: SQLiteStatement
    let nodeId: String
    var medium: String { "disk" }

    /// Opens (creating) the file, sets the journal, brings the schema up to date, then runs
    /// `pragmas`. Returns with no transaction open.
    init(path: String, nodeId: String = "", pragmas: [String] = []) throws(SQLiteError) {
        self.nodeId = nodeId
        database = try SQLiteDatabase(path: path)
        // An ops tool reading the file may hold a lock briefly; wait rather than fail.
        try database.execute("PRAGMA busy_timeout = 5000")
        try Self.enableWAL(database)
        // NORMAL in WAL mode: a commit is a write() into the WAL, fsync'd only at checkpoints.
        // Committed records survive a gateway crash; an OS crash or power cut may lose the last
        // commits since the previous checkpoint. FULL would fsync every batch.
        try database.execute("PRAGMA synchronous = NORMAL")
        try Self.migrate(database)

        insertStatement = try database.prepare(
            """
            INSERT INTO call_records (\(Self.columns), last_seen_at, node_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
                    ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31)
            """)
        selectStatement = try database.prepare("SELECT \(Self.columns) FROM call_records WHERE room_id = ?1")
        updateStatement = try database.prepare(
            """
            UPDATE call_records SET trace_id = ?2, direction = ?3, source_tn = ?4, target_tn = ?5,
                profile = ?6, started_at = ?7, ringing_at = ?8, answered_at = ?9, ended_at = ?10,
                end_reason = ?11, sip_code = ?12, sip_reason = ?13, q850_cause = ?14, codec = ?15,
                packets_lost = ?16, jitter_ms = ?17, round_trip_ms = ?18, transfer_target = ?19,
                transfer_outcome = ?20, transferred_by = ?21, transfer_method = ?22, transfer_room_id = ?23,
                recording_path = ?24, recording_duration_sec = ?25, recording_paused = ?26, amd_result = ?27,
                amd_ms = ?28, streams = ?29, last_seen_at = ?30, dialog = CASE WHEN ?10 IS NULL THEN dialog ELSE NULL END
            WHERE room_id = ?1
            """)
        touchStatement = try database.prepare(
            "UPDATE call_records SET last_seen_at = ?1 WHERE ended_at IS NULL AND node_id = ?2")
        aliveStatement = try database.prepare("INSERT OR REPLACE INTO gateway_alive (node_id, at) VALUES (?2, ?1)")
        dialogStatement = try database.prepare(
            "UPDATE call_records SET dialog = ?2 WHERE room_id = ?1 AND ended_at IS NULL")
        // By rowid through the started_at index, in bounded chunks (`CallRecordRetention`).
        pruneByAgeStatement = try database.prepare(
            """
            DELETE FROM call_records WHERE rowid IN (
                SELECT rowid FROM call_records WHERE ended_at IS NOT NULL AND started_at < ?1 ORDER BY started_at LIMIT ?2)
            """)
        pruneByCountStatement = try database.prepare(
            """
            DELETE FROM call_records WHERE rowid IN (
                SELECT rowid FROM call_records WHERE ended_at IS NOT NULL ORDER BY started_at DESC, room_id DESC LIMIT ?2 OFFSET ?1)
            """)
        for pragma in pragmas { try database.execute(pragma) }
    }

    /// Inserts a new row; a duplicate `roomId` throws `SQLITE_CONSTRAINT_PRIMARYKEY`.
    func insert(_ record: CallRecord, now: Double) throws(SQLiteError) {
        try run(insertStatement, record.columnValues(now: now) + [.text(nodeId)])
    }

    /// Overwrites the row of `record.roomId`; false when there is none.
    func replace(_ record: CallRecord, now: Double) throws(SQLiteError) -> Bool {
        try run(updateStatement, record.columnValues(now: now))
        return database.changes > 0
    }

    /// The row of `roomId`, if any.
    func record(roomId: String) throws(SQLiteError) -> CallRecord? {
        defer { selectStatement.reset() }
        try selectStatement.bind(.text(roomId), at: 1)
        return try selectStatement.step() ? CallRecord(row: selectStatement) : nil
    }

    /// Every row, oldest start first.
    func all() throws(SQLiteError) -> [CallRecord] {
        let statement = try database.prepare("SELECT \(Self.columns) FROM call_records ORDER BY started_at, room_id")
        var records: [CallRecord] = []
        while try statement.step() { records.append(CallRecord(row: statement)) }
        return records
    }

    /// Deletes at most `limit` ended rows, oldest start first, among those that started
    /// before `cutoff` and, after them, those beyond the newest `maxRecords` ended rows.
    /// Rows of calls still up (no `ended_at`) stay. Returns the rows deleted: fewer than
    /// `limit` means nothing more is due. Each statement commits on its own.
    func prune(startedBefore cutoff: Double?, keepingNewest maxRecords: Int?, limit: Int) throws(SQLiteError) -> Int {
        var deleted = 0
        if let cutoff {
            try run(pruneByAgeStatement, [.real(cutoff), .integer(Int64(limit))])
            deleted += database.changes
        }
        if let maxRecords, deleted < limit {
            try run(pruneByCountStatement, [.integer(Int64(max(0, maxRecords))), .integer(Int64(limit - deleted))])
            deleted += database.changes
        }
        return deleted
    }

    /// Records `now` as the last time every open row was seen alive (at a clean close).
    func touchOpenRows(now: Double) throws(SQLiteError) {
        try run(touchStatement, [.real(now), .text(nodeId)])
    }

    /// Records `now` as the last time the gateway, with its open calls, was alive: one row,
    /// whatever the number of calls (the heartbeat, every second).
    func stampAlive(now: Double) throws(SQLiteError) {
        try run(aliveStatement, [.real(now), .text(nodeId)])
    }

    /// Keeps the dialog of an answered call (nil clears it).
    func setDialog(roomId: String, _ dialog: String?) throws(SQLiteError) {
        try run(dialogStatement, [.text(roomId), SQLiteValue(dialog)])
    }

    /// Writes the WAL back into the database file, fsyncing both (with synchronous=NORMAL the
    /// WAL is synced before a checkpoint and the database after it).
    func checkpoint() throws(SQLiteError) {
        try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    func begin() throws(SQLiteError) { try database.execute("BEGIN IMMEDIATE") }

    func commit() throws(SQLiteError) { try database.execute("COMMIT") }

    func rollback() {
        if database.isInTransaction { try? database.execute("ROLLBACK") }
    }

    /// Rows of `node` with no `ended_at` were left by a process that stopped without
    /// finishing them (a crash, a kill): they end at the last moment the node was known alive.
    func closeOpenRecords(
        ofNode node: String, endReason: String, sipReason: String
    ) throws(SQLiteError) -> [String: String] {
        try begin()
        do throws(SQLiteError) {
            let open = try database.prepare(
                "SELECT room_id, dialog FROM call_records WHERE ended_at IS NULL AND dialog IS NOT NULL AND node_id = ?1"
            )
            try open.bind(.text(node), at: 1)
            var dialogs: [String: String] = [:]
            while try open.step() {
                if let room = open.string(0), let dialog = open.string(1) { dialogs[room] = dialog }
            }
            let close = try database.prepare(
                """
                UPDATE call_records SET
                    ended_at = max(started_at, coalesce(ringing_at, started_at), coalesce(answered_at, started_at),
                                   last_seen_at, coalesce((SELECT at FROM gateway_alive WHERE node_id = ?1), 0)),
                    end_reason = ?2, sip_reason = ?3, dialog = NULL
                WHERE ended_at IS NULL AND node_id = ?1
                """)
            try run(close, [.text(node), .text(endReason), .text(sipReason)])
            // The stamp belonged to the process that left those rows; a new one starts its own.
            try run(try database.prepare("DELETE FROM gateway_alive WHERE node_id = ?1"), [.text(node)])
            try commit()
            return dialogs
        } catch {
            rollback()
            throw error
        }
    }

    /// A full disk or an I/O error: the write itself was fine.
    func isWorthRetrying(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.primaryCode == 13 /* SQLITE_FULL */ || error.primaryCode == 10 /* SQLITE_IOERR */
    }

    func reconnectIfNeeded() {}

    private func run(_ statement: SQLiteStatement, _ values: [SQLiteValue]) throws(SQLiteError) {
        defer { statement.reset() }
        try statement.bind(values)
        try statement.step()
    }

    private static func enableWAL(_ database: SQLiteDatabase) throws(SQLiteError) {
        // The pragma answers with the mode now in force; a file system without shared
        // memory support keeps the old one, which still works, only slower.
        let statement = try database.prepare("PRAGMA journal_mode = WAL")
        if try statement.step(), let mode = statement.string(0), mode.lowercased() != "wal" {
            CallRecordStore.log(.warning, database.path, "journal_mode is \(mode), not wal")
        }
    }

    /// Applies the migrations from the file's `user_version` up, in one transaction. A
    /// version newer than this build's is refused: it would not understand the rows.
    private static func migrate(_ database: SQLiteDatabase) throws(SQLiteError) {
        let version = try userVersion(database)
        guard version <= schemaVersion else {
            throw SQLiteError(
                code: 1 /* SQLITE_ERROR */,
                message: "schema version \(version) is newer than this gateway's \(schemaVersion)",
                path: database.path, sql: "PRAGMA user_version")
        }
        guard version < schemaVersion else { return }
        try database.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            for step in migrations[version...] { try database.execute(step) }
            try database.execute("PRAGMA user_version = \(schemaVersion)")
            try database.execute("COMMIT")
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    private static func userVersion(_ database: SQLiteDatabase) throws(SQLiteError) -> Int {
        let statement = try database.prepare("PRAGMA user_version")
        return try statement.step() ? Int(statement.int64(0) ?? 0) : 0
    }
}
