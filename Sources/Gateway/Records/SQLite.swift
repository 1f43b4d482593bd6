// The only file that touches libsqlite3. Every C pointer into the library stays here;
// callers see `SQLiteDatabase`, `SQLiteStatement`, `SQLiteValue` and `SQLiteError`.
//
// Threading: the classes are `final` and deliberately not `Sendable`. A connection is opened
// with SQLITE_OPEN_NOMUTEX ("multi-thread" mode): SQLite takes no lock of its own, so the
// owner must use a connection (and its statements) from one thread at a time.

internal import CSQLite

/// A libsqlite3 failure: the result code, SQLite's message, and what was being done.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The (extended) result code, e.g. 14 `SQLITE_CANTOPEN`, 13 `SQLITE_FULL`,
    /// 1555 `SQLITE_CONSTRAINT_PRIMARYKEY`.
    public let code: Int32
    /// SQLite's text for the failure (`sqlite3_errmsg`), e.g. "unable to open database file".
    public let message: String
    /// The database file.
    public let path: String
    /// The statement that failed; nil when opening the file failed.
    public let sql: String?

    /// Wraps a result code and message.
    public init(code: Int32, message: String, path: String, sql: String?) {
        self.code = code
        self.message = message
        self.path = path
        self.sql = sql
    }

    /// The primary result code (the low byte of `code`): `SQLITE_CONSTRAINT` for
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`.
    public var primaryCode: Int32 { code & 0xFF }

    /// "sqlite <path>: <message> (code <code>) in: <sql>", on one line (the SQL's line
    /// breaks and indentation become single spaces) so a log keeps one error per line.
    public var description: String {
        var text = "sqlite \(path): \(message) (code \(code))"
        if let sql {
            text +=
                " in: " + sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
        }
        return text
    }
}

/// A value bound to a statement parameter or read from a column.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    /// `.integer`, or `.null` for nil.
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    /// `.integer`, or `.null` for nil.
    init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// `.real`, or `.null` for nil.
    init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    /// `.text`, or `.null` for nil.
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}

/// One connection to a database file.
final class SQLiteDatabase {
    /// `sqlite3_open_v2` flags.
    struct OpenFlags: OptionSet, Sendable {
        let rawValue: Int32
        static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        /// Create the file if it does not exist (with `readWrite`).
        static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// No per-connection mutex: the owner serialises use (see the file comment).
        static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
    }

    /// The file as given to `init`.
    let path: String
    private var handle: OpaquePointer?

    /// Opens `path`. Throws `SQLiteError` naming the path when the file cannot be opened
    /// (missing directory, permissions, not a database).
    init(path: String, flags: OpenFlags = [.readWrite, .create, .noMutex]) throws(SQLiteError) {
        self.path = path
        var db: OpaquePointer?
        let result = sqlite3_open_v2(path, &db, flags.rawValue, nil)
        guard result == SQLITE_OK, let db else {
            // A failed open still allocates a handle (for the message), which must be closed.
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(db)
            throw SQLiteError(code: result, message: message, path: path, sql: nil)
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit { close() }

    /// Closes the connection; later calls throw `SQLITE_MISUSE`. Statements still alive
    /// keep the underlying connection open until they are released (`sqlite3_close_v2`).
    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs one or more `;`-separated statements that return no rows the caller needs.
    func execute(_ sql: String) throws(SQLiteError) {
        let db = try open(sql)
        var errorText: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(db, sql, nil, nil, &errorText)
        if result != SQLITE_OK {
            let message = errorText.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(errorText)
            throw SQLiteError(code: sqlite3_extended_errcode(db), message: message, path: path, sql: sql)
        }
    }

    /// Compiles one statement.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        let db = try open(sql)
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw error(sql)
        }
        return SQLiteStatement(database: self, handle: statement, sql: sql)
    }

    /// False in autocommit mode: no `BEGIN` is open, or SQLite rolled the transaction back
    /// by itself after an I/O error or a full disk.
    var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes(handle))
    }

    /// The connection's last error, attributed to `sql`.
    fileprivate func error(_ sql: String?) -> SQLiteError {
        guard let handle else {
            return SQLiteError(code: SQLITE_MISUSE, message: "the database is closed", path: path, sql: sql)
        }
        return SQLiteError(
            code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
            path: path, sql: sql)
    }

    private func open(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw error(sql) }
        return handle
    }
}

/// A compiled statement. Bind parameters (1-based, as in SQL `?1`, or by `:name`), `step`
/// through rows, read columns (0-based), then `reset` to run it again.
final class SQLiteStatement {
    /// The SQL text, for errors.
    let sql: String
    // Strong reference: the connection must outlive its statements.
    private let database: SQLiteDatabase
    private let handle: OpaquePointer

    fileprivate init(database: SQLiteDatabase, handle: OpaquePointer, sql: String) {
        self.database = database
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `value` to parameter `index` (1-based).
    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let result: Int32
        switch value {
        case .integer(let v): result = sqlite3_bind_int64(handle, index, v)
        case .real(let v): result = sqlite3_bind_double(handle, index, v)
        case .null: result = sqlite3_bind_null(handle, index)
        case .text(let v):
            var text = v
            // TRANSIENT: SQLite copies the bytes, which live only inside withUTF8. An empty
            // string may have no base address, and a null pointer would bind NULL, not "".
            result = text.withUTF8 { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, CSQLite_transient())
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), CSQLite_transient())
                }
            }
        }
        if result != SQLITE_OK { throw database.error(sql) }
    }

    /// Binds `value` to the parameter called `name` (with its prefix: `:room_id`).
    func bind(_ value: SQLiteValue, named name: String) throws(SQLiteError) {
        let index = sqlite3_bind_parameter_index(handle, name)
        guard index > 0 else {
            throw SQLiteError(code: SQLITE_RANGE, message: "no parameter named \(name)", path: database.path, sql: sql)
        }
        try bind(value, at: index)
    }

    /// Binds `values` to parameters 1, 2, 3...
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Advances to the next row: true when a row is ready to read, false when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(sql)
        }
    }

    /// Makes the statement ready to run again and clears its bindings to NULL.
    func reset() {
        // sqlite3_reset repeats the last step's error, which `step` has already thrown.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Whether column `index` (0-based) of the current row is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as an integer; nil for NULL.
    func int64(_ index: Int32) -> Int64? {
        isNull(index) ? nil : sqlite3_column_int64(handle, index)
    }

    /// Column `index` as a floating-point number; nil for NULL.
    func double(_ index: Int32) -> Double? {
        isNull(index) ? nil : sqlite3_column_double(handle, index)
    }

    /// Column `index` as UTF-8 text; nil for NULL.
    func string(_ index: Int32) -> String? {
        guard !isNull(index), let text = sqlite3_column_text(handle, index) else { return nil }
        // column_bytes after column_text: the length of the UTF-8 form just produced.
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
