/// Where `irisgw serve` keeps its call records (serve key `records`): an SQLite file (the
/// embedded default, `<dataDir>/calls.sqlite`) or a PostgreSQL database shared by several
/// gateway nodes. docs/operations.md "Call records".
public enum CallRecordLocation: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file at this path.
    case sqlite(path: String)
    /// A PostgreSQL database: a libpq URL, `postgres://` or `postgresql://`.
    case postgres(url: String)

    /// `text` as the serve key `records` takes it: a URL starting `postgres://` or
    /// `postgresql://`, else a file path. Nil for an empty path or a URL with nothing after
    /// its scheme.
    public init?(records text: String) {
        let lower = text.lowercased()
        if let scheme = ["postgres://", "postgresql://"].first(where: { lower.hasPrefix($0) }) {
            guard text.count > scheme.count else { return nil }
            self = .postgres(url: text)
        } else {
            guard !text.isEmpty else { return nil }
            self = .sqlite(path: text)
        }
    }

    /// The path, or the URL with its password replaced by `***` (for logs and errors).
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let url): redactedPostgresURL(url)
        }
    }
}

/// The call record store named by the serve key `records` could not be opened: names the
/// key and the location, never the password.
public struct CallRecordOpenError: Error, CustomStringConvertible {
    /// The location, password hidden.
    public let location: String
    /// The store's error (`SQLiteError`, `PostgresError`, `PrivateFileError`), password hidden.
    public let reason: String

    /// "records \"<location>\": cannot open the call records: <reason>".
    public var description: String { "records \"\(location)\": cannot open the call records: \(reason)" }
}

extension CallRecordStore {
    /// Opens the store `location` names with the gateway's settings; errors name the serve
    /// key `records`. An SQLite file (and its directory) is made private first.
    static func open(
        _ location: CallRecordLocation, nodeId: String, retention: CallRecordRetention
    ) throws(CallRecordOpenError) -> CallRecordStore {
        do {
            switch location {
            case .sqlite(let path):
                try PrivateFiles.prepareDatabase(path)
                return try CallRecordStore(path: path, nodeId: nodeId, retention: retention)
            case .postgres(let url):
                return try CallRecordStore(postgres: url, nodeId: nodeId, retention: retention)
            }
        } catch {
            throw CallRecordOpenError(location: location.description, reason: redactedPostgresURL("\(error)"))
        }
    }
}
