import Dispatch
import Foundation
import IOCore
import Logging
import Synchronization

/// Call detail records kept in an SQLite file (schema: `CallRecordTable`), the embedded
/// default, or in a PostgreSQL table several gateway nodes share (`PostgresCallRecordTable`,
/// `init(postgres:)`). Everything below holds for both; the durability paragraph is SQLite's
/// (a PostgreSQL commit is durable on the server).
///
/// Writes never block the caller, which is usually the SIP event loop: `started`, `update`
/// and `finished` append to an in-memory queue and return. One serial writer queue takes
/// everything queued so far and commits it as one transaction, so a burst of calls costs one
/// commit, not one per call. A batch is scheduled as soon as its first write arrives: a
/// `started` record is in the database within the writer's next batch, and a gateway crash
/// after that loses nothing of it.
///
/// Durability (`PRAGMA journal_mode = WAL`, `synchronous = NORMAL`): a committed batch is in
/// the WAL file and survives the process dying; an OS crash or power cut can lose the batches
/// committed since the last checkpoint. `flush()` and `close()` checkpoint, which fsyncs.
/// `synchronous = FULL` would fsync every batch: at thousands of calls per second the writer
/// would then be bound by the disk's flush latency rather than by SQLite.
///
/// A write that fails (full disk, I/O error, duplicate room id) is logged to fd 2 and counted
/// in `writeFailures`; it never crashes the gateway and never stops later writes. Writes the
/// database refused for its own trouble (full disk, I/O error, PostgreSQL down or restarting)
/// are kept, in order, and tried again with each later batch; a lost PostgreSQL connection is
/// made again before a batch, with back-off.
///
/// While running, the writer notes every `heartbeatInterval` seconds (default 1) that the
/// gateway, and so its open calls, are still up (one row, `gateway_alive`); the rows a crash
/// leaves open end, at the next start, as failed at that moment, so their duration is short
/// by at most one interval.
///
/// Ended calls' records are pruned on the writer queue as `retention` says (default: kept),
/// once at open and then periodically, a chunk per commit (`CallRecordRetention`).
///
/// Each row names the node that wrote it (`nodeId`, default ""): at open a store closes
/// only its own node's abandoned rows, and `closeOpenRecords(ofNode:reason:)` lets a
/// surviving node close a dead one's. One gateway process per node id: a second store with
/// the same node id would close the first one's open calls as abandoned.
public final class CallRecordStore: Sendable {
    /// The database file, or the PostgreSQL URL with its password replaced by `***`.
    public let path: String
    /// The gateway node whose rows this store writes; "" for a single node.
    public let nodeId: String

    private let queue = DispatchQueue(label: "irisgw.call-records")
    private let inbox = Mutex(Inbox())
    // Only touched on `queue`, so never contended; the mutex is what lets a Sendable class own
    // a non-Sendable connection without @unchecked.
    private let table: Mutex<(any CallRecordBackend)?>
    private let failures = Atomic<Int>(0)
    private let pruned = Atomic<Int>(0)
    /// Which ended records are deleted, and how often.
    public let retention: CallRecordRetention
    /// Writes a full disk, an I/O error or a PostgreSQL outage refused, kept in order to be
    /// tried again with the next batch (each heartbeat makes one). Only touched on `queue`.
    private let retrying = Mutex<[Operation]>([])
    /// Writes kept for retry at most; beyond it the oldest are lost (and counted).
    static let maxRetrying = 10_000
    private let clock: @Sendable () -> Double

    private struct Inbox {
        var operations: [Operation] = []
        var drainScheduled = false
        var closed = false
    }

    private enum Operation: Sendable {
        case start(CallRecord)
        case dialog(roomId: String, String)
        case change(roomId: String, finishing: Bool, @Sendable (inout CallRecord) -> Void)
        case heartbeat
    }

    /// Opens (creating) the database at `path`, creates or migrates the schema
    /// (`PRAGMA user_version`), and closes the rows a previous process of node `nodeId` left
    /// open (no `endedAt`: it crashed or was killed) with endReason "failed", sipReason
    /// "gateway restarted" and endedAt the last time the row was known to be up.
    ///
    /// - Parameters:
    ///   - nodeId: the gateway node whose rows this store writes and closes. Default "".
    ///   - heartbeatInterval: seconds between "still up" marks; nil for none. Default 1.
    ///   - retention: which ended records to delete, at open and then periodically.
    ///     Default `.keepAll` (tools that open the file to read it prune nothing).
    ///   - clock: Unix seconds, for `last_seen_at`, a `finished` call with no `endedAt`, and
    ///     the age of records.
    /// - Throws: `SQLiteError` naming the path when the file cannot be opened or migrated.
    public convenience init(
        path: String, nodeId: String = "", heartbeatInterval: Double? = 1, retention: CallRecordRetention = .keepAll,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) throws(SQLiteError) {
        try self.init(
            path: path, nodeId: nodeId, heartbeatInterval: heartbeatInterval, retention: retention, clock: clock,
            pragmas: [])
    }

    /// `pragmas` run after the schema is ready; tests use them to limit the file's size.
    convenience init(
        path: String, nodeId: String = "", heartbeatInterval: Double?, retention: CallRecordRetention = .keepAll,
        clock: @escaping @Sendable () -> Double, pragmas: [String]
    ) throws(SQLiteError) {
        let opened = try CallRecordTable(path: path, nodeId: nodeId, pragmas: pragmas)
        let abandoned = try opened.closeOpenRecords(
            ofNode: nodeId, endReason: "failed", sipReason: Self.restartedReason)
        self.init(
            opened, path: path, abandoned: abandoned, heartbeatInterval: heartbeatInterval, retention: retention,
            clock: clock)
    }

    /// Like `init(path:)` on a PostgreSQL database: `url` is a libpq URL
    /// (`postgres://user:password@host:port/db`, `postgresql://...`, `?host=/socket/dir`).
    /// Connects (10 s timeout unless the URL sets `connect_timeout`), creates or migrates the
    /// schema and closes node `nodeId`'s abandoned rows.
    ///
    /// - Throws: `PostgresError` (without the password) when the server cannot be reached,
    ///   refuses the login, or the schema cannot be made.
    public convenience init(
        postgres url: String, nodeId: String = "", heartbeatInterval: Double? = 1,
        retention: CallRecordRetention = .keepAll,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) throws(PostgresError) {
        let opened = try PostgresCallRecordTable(url: url, nodeId: nodeId)
        let abandoned = try opened.closeOpenRecords(
            ofNode: nodeId, endReason: "failed", sipReason: Self.restartedReason)
        self.init(
            opened, path: opened.connection.target, abandoned: abandoned, heartbeatInterval: heartbeatInterval,
            retention: retention, clock: clock)
    }

    /// sipReason of the rows a restart finds open.
    static let restartedReason = "gateway restarted"

    private init(
        _ opened: sending any CallRecordBackend, path: String, abandoned: [String: String], heartbeatInterval: Double?,
        retention: CallRecordRetention, clock: @escaping @Sendable () -> Double
    ) {
        self.path = path
        self.nodeId = opened.nodeId
        self.clock = clock
        self.retention = retention
        abandonedDialogs = abandoned
        table = Mutex(opened)
        if let heartbeatInterval, heartbeatInterval > 0 { scheduleHeartbeat(every: heartbeatInterval) }
        if !retention.keepsEverything {
            queue.async { [weak self] in self?.prune(sofar: 0) }
            if retention.interval > 0 { schedulePrune(every: retention.interval) }
        }
    }

    /// Writes that could not be made durable so far (each lost write counts once).
    public var writeFailures: Int { failures.load(ordering: .relaxed) }

    /// Records deleted by `retention` since the store opened.
    public var prunedRecords: Int { pruned.load(ordering: .relaxed) }

    /// Writes the database refused (full disk, I/O error, PostgreSQL unreachable), kept to be
    /// tried again each second.
    public var pendingWrites: Int { retrying.withLock { $0.count } }

    /// Runs `sql` on the writer queue (SQLite): tests use it to give a "full" database room again.
    func executeForTesting(_ sql: String) throws(SQLiteError) {
        let result: SQLiteError? = queue.sync {
            table.withLock { table in
                do throws(SQLiteError) {
                    try (table as? CallRecordTable)?.database.execute(sql)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let result { throw result }
    }

    /// Ends the open records another node left (it died: a cluster's survivor calls this)
    /// with endReason `reason` (a cluster passes "nodeLost") and sipReason "gateway node
    /// lost", at the later of each row's last known time and the node's last heartbeat, and
    /// returns their room id to dialog JSON (the answered ones), for the survivor to send
    /// the BYEs. Runs on the writer queue after what is queued; blocks: not for an event loop.
    ///
    /// - Throws: `SQLiteError` or `PostgresError` when the database cannot do it (nothing changed).
    public func closeOpenRecords(ofNode node: String, reason: String) throws -> [String: String] {
        let outcome: Result<[String: String], any Error> = queue.sync {
            drain()
            return table.withLock { table in
                guard let table else { return .success([:]) }
                return Result {
                    try table.closeOpenRecords(ofNode: node, endReason: reason, sipReason: "gateway node lost")
                }
            }
        }
        return try outcome.get()
    }

    /// Queues the insertion of a new call's record; returns at once. A second record with
    /// the same `roomId` is refused (logged and counted).
    public func started(_ record: CallRecord) {
        submit(.start(record))
    }

    /// Queues a change to the record of `roomId` (ringing, answer, codec, RTCP figures);
    /// returns at once. `change` runs later on the writer queue with the stored record and
    /// must not call back into the store. It cannot change `roomId`.
    public func update(roomId: String, _ change: @escaping @Sendable (inout CallRecord) -> Void) {
        submit(.change(roomId: roomId, finishing: false, change))
    }

    /// Keeps the SIP dialog of an answered call (`DialogSnapshot` as JSON) until the call's
    /// record is finished, so a process that crashes leaves enough for the next one to send
    /// the BYE. Returns at once.
    public func keepDialog(roomId: String, _ dialog: String) {
        submit(.dialog(roomId: roomId, dialog))
    }

    /// Room id to dialog of the answered calls a previous process left up (crashed or
    /// killed), read when the store opened; their records are already closed as failed.
    public let abandonedDialogs: [String: String]

    /// Like `update`, for the end of the call: `change` sets endReason, sipCode and the
    /// rest; an `endedAt` it leaves nil becomes the writer's clock.
    public func finished(roomId: String, _ change: @escaping @Sendable (inout CallRecord) -> Void) {
        submit(.change(roomId: roomId, finishing: true, change))
    }

    /// Waits until every write queued before the call is committed, then checkpoints the
    /// WAL (fsync; SQLite). Blocks: not for the SIP event loop.
    public func flush() {
        queue.sync {
            drain()
            table.withLock { table in
                do { try table?.checkpoint() } catch { log(.warning, "checkpoint: \(error)") }
            }
        }
    }

    /// True when the writer queue runs a no-op within `timeout` seconds (a health check: a
    /// writer stuck on the disk shows here). Writes that failed show in `lostWrites` instead.
    public func responds(within timeout: Double) -> Bool {
        let answered = DispatchSemaphore(value: 0)
        queue.async { answered.signal() }
        return answered.wait(timeout: .now() + timeout) == .success
    }

    /// Every record, in `startedAt` order, including writes still queued. Blocks until the
    /// writer gets to it: for tests and operations tools.
    public func all() -> [CallRecord] {
        read([]) { table in try table.all() }
    }

    /// The record of `roomId`, including writes still queued; blocks like `all()`.
    public func record(roomId: String) -> CallRecord? {
        read(nil) { table in try table.record(roomId: roomId) }
    }

    /// Commits what is queued, marks open calls as seen now, checkpoints and closes the file.
    /// Calls still open stay open in the file and end as "gateway restarted" at the next
    /// start. Later writes are dropped (logged and counted); later reads find nothing.
    public func close() {
        let wasOpen = inbox.withLock { inbox in
            defer { inbox.closed = true }
            return !inbox.closed
        }
        guard wasOpen else { return }
        queue.sync {
            drain()
            let now = clock()
            table.withLock { table in
                do {
                    try table?.touchOpenRows(now: now)
                    try table?.checkpoint()
                } catch {
                    log(.warning, "closing: \(error)")
                }
                table = nil
            }
        }
    }

    /// "irisgw: call records <path>: <message>" in the log (component records).
    static func log(_ level: LogLevel, _ path: String, _ message: String) {
        Log.records(path).log(level, message)
    }

    private func log(_ level: LogLevel, _ message: String) { Self.log(level, path, message) }

    private func submit(_ operation: Operation) {
        if !enqueue(operation) {
            failures.add(1, ordering: .relaxed)
            log(.error, "write after close dropped")
        }
    }

    /// Queues `operation` and schedules a batch unless one is already waiting; false once
    /// the store is closed.
    private func enqueue(_ operation: Operation) -> Bool {
        let schedule: Bool? = inbox.withLock { inbox in
            guard !inbox.closed else { return nil }
            inbox.operations.append(operation)
            defer { inbox.drainScheduled = true }
            return !inbox.drainScheduled
        }
        guard let schedule else { return false }
        // Strong capture: the store stays alive until what it accepted is written.
        if schedule { queue.async { self.drain() } }
        return true
    }

    private func scheduleHeartbeat(every interval: Double) {
        queue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, self.enqueue(.heartbeat) else { return }
            self.scheduleHeartbeat(every: interval)
        }
    }

    private func schedulePrune(every interval: Double) {
        queue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, !self.inbox.withLock({ $0.closed }) else { return }
            self.prune(sofar: 0)
            self.schedulePrune(every: interval)
        }
    }

    /// On `queue`: deletes one chunk of what `retention` says is due, then queues the next
    /// chunk behind the writes that arrived meanwhile, until nothing more is due; says how
    /// many went on fd 2.
    private func prune(sofar: Int) {
        let now = clock()
        let outcome: Result<Int, any Error>? = table.withLock { table in
            guard let table else { return nil }
            do {
                return .success(
                    try table.prune(
                        startedBefore: retention.cutoff(now: now), keepingNewest: retention.maxRecords,
                        limit: max(1, retention.chunk)))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case nil:
            return
        case .failure(let error):
            log(.warning, "pruning old records: \(error)")
        case .success(let deleted):
            pruned.add(deleted, ordering: .relaxed)
            if deleted >= max(1, retention.chunk) {
                queue.async { [weak self] in self?.prune(sofar: sofar + deleted) }
            } else if sofar + deleted > 0 {
                let age = retention.days > 0 ? "started over \(retention.days) days ago" : ""
                let count = retention.maxRecords.map { "beyond the newest \($0)" } ?? ""
                log(
                    .notice,
                    "pruned \(sofar + deleted) ended records "
                        + [age, count].filter { !$0.isEmpty }.joined(separator: " or "))
            }
        }
    }

    private func read<T: Sendable>(
        _ fallback: T, _ body: (any CallRecordBackend) throws -> T
    ) -> T {
        queue.sync {
            drain()
            return table.withLock { table -> T in
                guard let table else { return fallback }
                do { return try body(table) } catch {
                    log(.error, "read: \(error)")
                    return fallback
                }
            }
        }
    }

    /// On `queue`: takes everything queued and writes it as one batch.
    private func drain() {
        let batch = inbox.withLock { inbox in
            inbox.drainScheduled = false
            defer { inbox.operations = [] }
            return inbox.operations
        }
        // Kept where they are until the commit says what is still left, so `pendingWrites`
        // never reads 0 in between.
        let kept = retrying.withLock { $0 }
        table.withLock { table in
            guard let table else { return }
            // Also before a read or a node's close with nothing queued: they need the connection too.
            table.reconnectIfNeeded()
            if !batch.isEmpty || !kept.isEmpty { commit(kept + batch, to: table) }
        }
    }

    private func commit(_ batch: [Operation], to table: any CallRecordBackend) {
        let now = clock()
        var lost = 0
        var firstProblem: String?
        func note(_ problem: String) {
            lost += 1
            if firstProblem == nil { firstProblem = problem }
        }
        do {
            try table.begin()
            for operation in batch {
                if let problem = try perform(operation, on: table, now: now) { note(problem) }
            }
            try table.commit()
            retrying.withLock { $0 = [] }
        } catch {
            table.rollback()
            // The batch is undone. Replay it one write per transaction, so a bad write costs
            // only itself. From the first write the disk refuses (full, I/O error) on, the
            // rest is kept, in order, for the next batch: the records catch up once there is
            // room again, and a room's change never runs before its start.
            lost = 0
            firstProblem = nil
            var keep: [Operation] = []
            for operation in batch {
                if !keep.isEmpty {
                    if case .heartbeat = operation { continue }
                    keep.append(operation)
                    continue
                }
                do {
                    if let problem = try perform(operation, on: table, now: now) { note(problem) }
                } catch {
                    if table.isWorthRetrying(error) {
                        if case .heartbeat = operation { continue }
                        if firstProblem == nil { firstProblem = "\(error)" }
                        keep.append(operation)
                    } else {
                        note("\(error)")
                    }
                }
            }
            if keep.count > Self.maxRetrying {
                let dropped = keep.count - Self.maxRetrying
                keep.removeFirst(dropped)
                failures.add(dropped, ordering: .relaxed)
                log(.error, "lost \(dropped) writes kept too long for a \(table.medium) that refused them")
            }
            if !keep.isEmpty, retrying.withLock({ $0.isEmpty }) {
                log(
                    .warning, "keeping \(keep.count) writes until the \(table.medium) takes them: \(firstProblem ?? "")"
                )
            }
            retrying.withLock { $0 = keep }
        }
        if lost > 0, let firstProblem {
            failures.add(lost, ordering: .relaxed)
            log(.error, "lost \(lost) of \(batch.count) writes; first: \(firstProblem)")
        }
    }

    /// Applies one write; returns why it could not be applied when that is not an SQLite
    /// error (no record for the room).
    private func perform(_ operation: Operation, on table: any CallRecordBackend, now: Double) throws -> String? {
        switch operation {
        case .start(let record):
            try table.insert(record, now: now)
        case .heartbeat:
            try table.stampAlive(now: now)
        case .dialog(let roomId, let text):
            try table.setDialog(roomId: roomId, text)
        case .change(let roomId, let finishing, let change):
            guard var record = try table.record(roomId: roomId) else {
                return "no call record for room \(roomId)"
            }
            change(&record)
            record.roomId = roomId
            if finishing, record.endedAt == nil { record.endedAt = now }
            _ = try table.replace(record, now: now)
        }
        return nil
    }
}
