/// How much a line matters, least first. A component prints the lines at or above its level
/// (`LogConfiguration`).
public enum LogLevel: String, CaseIterable, Comparable, Sendable {
    /// Detail for finding a fault (libpq's notices, say); off by default.
    case debug
    /// What happens in the normal course: each call's start and end.
    case info
    /// Normal but worth noting: records pruned, a reconnection, calls ended after a restart.
    case notice
    /// Something is wrong but the gateway goes on: a TLS handshake failed, a webhook gave up.
    case warning
    /// Something could not be done: records lost, a start refused.
    case error

    /// The level's place in the order, 0 (debug) to 4 (error).
    public var rank: UInt8 {
        switch self {
        case .debug: 0
        case .info: 1
        case .notice: 2
        case .warning: 3
        case .error: 4
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }

    /// The names as the flags and the settings file take them.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
