// The only file that touches libpq. Every C pointer into the library stays here; callers see
// `PostgresConnection`, `PostgresRows` and `PostgresError`.
//
// Threading: `PostgresConnection` is `final` and deliberately not `Sendable`: a libpq
// connection must be used from one thread at a time (`CallRecordStore` keeps it on its
// writer queue). Values travel as parameters of `PQexecParams`, never inside the SQL text.

internal import CPostgres
import Foundation
import Logging

/// A libpq failure: the SQLSTATE, PostgreSQL's (or libpq's) message, and what was being done.
/// Neither `message` nor `description` ever holds the password of the connection URL.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. "23505" unique violation, "08006" connection
    /// failure, "57P01" admin shutdown; "08001" when no connection could be made.
    public let sqlState: String
    /// The server's or libpq's text for the failure, on one line.
    public let message: String
    /// The connection URL with its password replaced by `***`.
    public let target: String
    /// The statement that failed; nil when connecting failed.
    public let sql: String?
    /// True when the connection, not the statement, failed (the server is down or restarting,
    /// the network broke): the same write may succeed once the connection is made again.
    public let isConnectionProblem: Bool

    public init(sqlState: String, message: String, target: String, sql: String?, isConnectionProblem: Bool) {
        self.sqlState = sqlState
        self.message = message
        self.target = target
        self.sql = sql
        self.isConnectionProblem = isConnectionProblem
    }

    /// "postgres <url without password>: <message> (sqlstate <code>) in: <sql>", on one line.
    public var description: String {
        var text = "postgres \(target): \(message) (sqlstate \(sqlState))"
        if let sql { text += " in: " + Self.oneLine(sql) }
        return text
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }

    /// SQLSTATE classes that say the server or the link failed, not the statement: 08
    /// connection exception, 53 insufficient resources, 57P01-57P03 shutdown and start-up,
    /// 40001/40P01 serialization failure and deadlock (worth the same write again).
    static func isTransient(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || sqlState.hasPrefix("53")
            || ["57P01", "57P02", "57P03", "40001", "40P01"]
                .contains(sqlState)
    }
}

/// `url` with the password of its user info and any `password=` parameter replaced by `***`.
func redactedPostgresURL(_ url: String) -> String {
    var text = url
    for range in postgresPasswordRanges(in: url).reversed() { text.replaceSubrange(range, with: "***") }
    return text
}

/// The passwords written in `url`, and their pieces between URL delimiters, longest first,
/// so a message that quotes one or a piece can be scrubbed of it (libpq reads the user info
/// only up to a '/', and quotes what it then takes for a port).
func postgresPasswords(in url: String) -> [String] {
    let passwords = postgresPasswordRanges(in: url).map { String(url[$0]) }
    let pieces = passwords.flatMap { $0.split(whereSeparator: { "/?#@:".contains($0) }).map(String.init) }
    return Set(passwords + pieces).filter { !$0.isEmpty }.sorted { $0.count > $1.count }
}

/// Where the passwords are in `text`: `user:password@` (up to the last '@' before the query,
/// from the first ':' of the user info) and every `password=` value (up to '&' or a space).
private func postgresPasswordRanges(in text: String) -> [Range<String.Index>] {
    var ranges: [Range<String.Index>] = []
    if let scheme = text.range(of: "://") {
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(of: "?") ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
            ranges.append(text.index(after: colon)..<at)
        }
    }
    var from = text.startIndex
    while let key = text.range(of: "password=", options: .caseInsensitive, range: from..<text.endIndex) {
        let end = text[key.upperBound...].firstIndex(where: { $0 == "&" || $0 == " " }) ?? text.endIndex
        if ranges.allSatisfy({ !$0.overlaps(key.upperBound..<end) }) { ranges.append(key.upperBound..<end) }
        from = end
    }
    return ranges.sorted { $0.lowerBound < $1.lowerBound }
}

/// The rows a query returned, as text (libpq's text format). Column and row numbers are 0-based.
struct PostgresRows {
    fileprivate let values: [[String?]]

    var count: Int { values.count }

    /// Row `index`, read through `CallRecordRow`'s accessors.
    func row(_ index: Int) -> PostgresRow { PostgresRow(values: values[index]) }
}

/// One row of `PostgresRows`.
struct PostgresRow {
    fileprivate let values: [String?]

    /// Column `index` as text; nil for NULL.
    func string(_ index: Int32) -> String? { values[Int(index)] }
    /// Column `index` as an integer; nil for NULL.
    func int64(_ index: Int32) -> Int64? { string(index).flatMap { Int64($0) } }
    /// Column `index` as a floating-point number (double precision); nil for NULL.
    func double(_ index: Int32) -> Double? { string(index).flatMap { Double($0) } }
}

/// One connection to a PostgreSQL server, from a libpq URL (`postgres://user:pass@host:port/db`,
/// `postgresql://...`, `?host=/socket/dir`) or a `key=value` string.
final class PostgresConnection {
    /// The URL without its password, for errors and logs.
    let target: String
    /// The URL's passwords, never to appear in a message.
    private let secrets: [String]
    private var handle: OpaquePointer?

    /// Connects. Throws `PostgresError` (sqlstate 08001) when the URL is malformed or the
    /// server cannot be reached or refuses us. Unless the URL sets them itself: connecting
    /// gives up after `connectTimeout` seconds, and over TCP a server that stops answering
    /// fails a statement after 30 s unacknowledged (`tcp_user_timeout`) or 3 unanswered
    /// keepalives 10 s apart, so the writer never waits on a dead link for hours.
    init(url: String, connectTimeout: Int = 10) throws(PostgresError) {
        target = redactedPostgresURL(url)
        secrets = postgresPasswords(in: url)
        // Later keywords win: the URL (expanded from dbname) overrides the defaults before it.
        let defaults = [
            ("connect_timeout", String(connectTimeout)), ("fallback_application_name", "irisgw"),
            ("tcp_user_timeout", "30000"), ("keepalives_idle", "10"), ("keepalives_interval", "10"),
            ("keepalives_count", "3")
        ]
        let keywords = defaults.map(\.0) + ["dbname"]
        let values = defaults.map(\.1) + [url]
        let connection = Self.withCStrings(keywords) { k in
            Self.withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let connection else {
            throw PostgresError(
                sqlState: "08001", message: "out of memory", target: target, sql: nil, isConnectionProblem: true)
        }
        handle = connection
        // libpq prints the server's notices ("relation ... already exists, skipping") on
        // stderr itself: they go to the log instead, at debug, so a JSON log stays all JSON.
        PQsetNoticeProcessor(
            connection,
            { _, message in
                guard let message else { return }
                Log.postgresNotices.debug(String(cString: message), ["origin": "libpq"])
            }, nil)
        guard PQstatus(connection) == CONNECTION_OK else {
            let error = PostgresError(
                sqlState: "08001", message: lastMessage(), target: target, sql: nil, isConnectionProblem: true)
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the connection; later calls throw.
    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// False once libpq noticed the connection broke (a failed statement tells it).
    var isConnected: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Makes the connection again with its original parameters (`PQreset`); true when it is
    /// up. Blocks for up to the connect timeout.
    func reset() -> Bool {
        guard let handle else { return false }
        PQreset(handle)
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Runs one statement with `parameters` as $1, $2... (sent apart from the SQL, as text)
    /// and returns its rows, and the rows it changed (INSERT, UPDATE, DELETE).
    @discardableResult
    func execute(
        _ sql: String, _ parameters: [SQLiteValue] = []
    ) throws(PostgresError) -> (
        rows: PostgresRows, changed: Int
    ) {
        guard let handle else {
            throw PostgresError(
                sqlState: "08003", message: "the connection is closed", target: target, sql: sql,
                isConnectionProblem: true)
        }
        let texts: [String?] = parameters.map { value in
            switch value {
            case .null: nil
            case .integer(let v): String(v)
            case .real(let v): v.isFinite ? "\(v)" : (v.isNaN ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"))
            case .text(let v): v
            }
        }
        let result = Self.withOptionalCStrings(texts) { values in
            PQexecParams(handle, sql, Int32(texts.count), nil, values, nil, nil, 0)
        }
        defer { PQclear(result) }
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK, let result else {
            throw failure(result, sql: sql)
        }
        var rows: [[String?]] = []
        let columns = PQnfields(result)
        for r in 0..<PQntuples(result) {
            rows.append(
                (0..<columns).map { c in
                    PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c))
                })
        }
        let changed = Int(String(cString: PQcmdTuples(result))) ?? 0
        return (PostgresRows(values: rows), changed)
    }

    private func failure(_ result: OpaquePointer?, sql: String) -> PostgresError {
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let text =
            result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? lastMessage()
        let lost = !isConnected
        return PostgresError(
            sqlState: state ?? (lost ? "08006" : "XX000"), message: scrub(text), target: target, sql: sql,
            isConnectionProblem: lost || PostgresError.isTransient(sqlState: state ?? ""))
    }

    private func lastMessage() -> String {
        scrub(handle.map { String(cString: PQerrorMessage($0)) } ?? "no connection")
    }

    /// One line, and nothing of a password, should libpq ever echo the connection string or
    /// a piece of it.
    private func scrub(_ text: String) -> String {
        secrets.reduce(redactedPostgresURL(PostgresError.oneLine(text))) {
            $0.replacingOccurrences(of: $1, with: "***")
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        withOptionalCStrings(strings) { body($0) }
    }

    /// `strings` as a C array of C strings (NULL for nil), valid inside `body` only.
    private static func withOptionalCStrings<R>(
        _ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R
    ) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
