/// What `CallRecordStore` needs of the database under it: the `call_records` table and the
/// `gateway_alive` stamps, in SQLite (`CallRecordTable`, the embedded default) or PostgreSQL
/// (`PostgresCallRecordTable`, several gateway nodes on one table). The store's queue,
/// batching, retry, heartbeat and retention are the same for both.
///
/// Every row carries the `node_id` of the gateway that wrote it, and each node has its own
/// `gateway_alive` row, so nodes sharing a table close only their own abandoned calls.
///
/// Not thread-safe: the store calls it from its writer queue only.
protocol CallRecordBackend: AnyObject {
    /// The node whose rows `insert` writes and `touchOpenRows`/`stampAlive` mark.
    var nodeId: String { get }
    /// What refuses writes when it is full or gone, for the log: "disk", "PostgreSQL server".
    var medium: String { get }

    /// Opens a transaction for a batch of writes.
    func begin() throws
    /// Commits the batch's transaction.
    func commit() throws
    /// Undoes the batch's transaction if one is still open.
    func rollback()

    /// Inserts a new row for this node; a duplicate `roomId` throws.
    func insert(_ record: CallRecord, now: Double) throws
    /// Overwrites the row of `record.roomId` (not its node); false when there is none.
    func replace(_ record: CallRecord, now: Double) throws -> Bool
    /// The row of `roomId`, if any.
    func record(roomId: String) throws -> CallRecord?
    /// Every row, oldest start first (then by room id).
    func all() throws -> [CallRecord]
    /// Deletes at most `limit` ended rows, oldest start first, among those that started
    /// before `cutoff` and, after them, those beyond the newest `maxRecords` ended rows;
    /// returns how many went.
    func prune(startedBefore cutoff: Double?, keepingNewest maxRecords: Int?, limit: Int) throws -> Int
    /// Records `now` as the last time this node's open rows were seen alive (a clean close).
    func touchOpenRows(now: Double) throws
    /// Records `now` as the last time this node, with its open calls, was alive.
    func stampAlive(now: Double) throws
    /// Keeps the dialog of an answered call (nil clears it).
    func setDialog(roomId: String, _ dialog: String?) throws
    /// Makes what is committed durable where the database defers it (SQLite's WAL).
    func checkpoint() throws
    /// Ends `node`'s open rows with `endReason` and `sipReason` at the later of each row's
    /// last known time and the node's `gateway_alive` stamp, drops that stamp, and returns
    /// the room id to dialog JSON of the answered ones. One transaction.
    func closeOpenRecords(ofNode node: String, endReason: String, sipReason: String) throws -> [String: String]

    /// True when `error` is the database's trouble (full disk, I/O error, server gone) rather
    /// than the write's: the write is kept and tried again with a later batch.
    func isWorthRetrying(_ error: any Error) -> Bool
    /// Before a batch: makes a lost connection again, with back-off on the monotonic clock
    /// (PostgreSQL); nothing for a file.
    func reconnectIfNeeded()
}

/// Column access shared by SQLite statements and PostgreSQL rows, so one mapping reads a
/// `CallRecord` from either.
protocol CallRecordRow {
    func string(_ index: Int32) -> String?
    func int64(_ index: Int32) -> Int64?
    func double(_ index: Int32) -> Double?
}

extension SQLiteStatement: CallRecordRow {}
extension PostgresRow: CallRecordRow {}

extension CallRecord {
    /// `CallRecord`'s fields in column order: `columnValues(now:)` gives them in this order
    /// (then `last_seen_at`), `init(row:)` reads them back as columns 0...28.
    static let columns = """
        room_id, trace_id, direction, source_tn, target_tn, profile, started_at, ringing_at, \
        answered_at, ended_at, end_reason, sip_code, sip_reason, q850_cause, codec, packets_lost, \
        jitter_ms, round_trip_ms, transfer_target, transfer_outcome, transferred_by, transfer_method, \
        transfer_room_id, recording_path, recording_duration_sec, recording_paused, amd_result, amd_ms, \
        streams
        """

    /// The 29 fields in `columns` order, then `now` as `last_seen_at` (parameter 30).
    func columnValues(now: Double) -> [SQLiteValue] {
        [
            .text(roomId), .text(traceId), .text(direction), .text(sourceTN), .text(targetTN),
            .text(profile), .real(startedAt), SQLiteValue(ringingAt), SQLiteValue(answeredAt),
            SQLiteValue(endedAt), SQLiteValue(endReason), SQLiteValue(sipCode), SQLiteValue(sipReason),
            SQLiteValue(q850Cause), SQLiteValue(codec), SQLiteValue(packetsLost), SQLiteValue(jitterMs),
            SQLiteValue(roundTripMs), SQLiteValue(transferTarget), SQLiteValue(transferOutcome),
            SQLiteValue(transferredBy), SQLiteValue(transferMethod), SQLiteValue(transferRoomId),
            SQLiteValue(recordingPath), SQLiteValue(recordingDurationSec), SQLiteValue(recordingPaused),
            SQLiteValue(amdResult), SQLiteValue(amdMs), SQLiteValue(streams), .real(now)
        ]
    }

    /// A record from a row selected as `columns`.
    init(row: some CallRecordRow) {
        self.init(
            roomId: row.string(0) ?? "", traceId: row.string(1) ?? "", direction: row.string(2) ?? "",
            sourceTN: row.string(3) ?? "", targetTN: row.string(4) ?? "", profile: row.string(5) ?? "",
            startedAt: row.double(6) ?? 0, ringingAt: row.double(7), answeredAt: row.double(8),
            endedAt: row.double(9), endReason: row.string(10), sipCode: row.int64(11).map { Int($0) },
            sipReason: row.string(12), q850Cause: row.int64(13).map { Int($0) }, codec: row.string(14),
            packetsLost: row.int64(15), jitterMs: row.double(16), roundTripMs: row.double(17))
        transferTarget = row.string(18)
        transferOutcome = row.string(19)
        transferredBy = row.string(20)
        transferMethod = row.string(21)
        transferRoomId = row.string(22)
        recordingPath = row.string(23)
        recordingDurationSec = row.double(24)
        recordingPaused = row.string(25)
        amdResult = row.string(26)
        amdMs = row.int64(27).map { Int($0) }
        streams = row.int64(28).map { Int($0) }
    }
}
