import Logging

/// The gateway's loggers, one per component it writes for, all to `LogSink.standardError`.
/// The text prefixes keep the lines' old wording (docs/operations.md, "Logs").
enum Log {
    static let gateway = Logger(.gateway)
    static let calls = Logger(.calls)
    static let sip = Logger(.sip)
    static let media = Logger(.media)
    static let tls = Logger(.tls)
    static let cluster = Logger(.cluster, textPrefix: "irisgw: cluster: ")

    /// PostgreSQL's notices (libpq hands them over without saying which connection).
    static let postgresNotices = Logger(.records, textPrefix: "irisgw: call records: postgres: ")

    /// The call records at `path` (a file, or a PostgreSQL URL without its password).
    static func records(_ path: String) -> Logger {
        Logger(.records, textPrefix: "irisgw: call records \(path): ").with(["records": "\(path)"])
    }
}
