/// The part of the gateway a line comes from; each has its own level
/// (`--log-level sip=debug`, `logLevels: { sip: "debug" }`).
public enum LogComponent: String, CaseIterable, Sendable {
    /// The process as a whole: start, signals, its files, recovery after a crash.
    case gateway
    /// Each call's start and end.
    case calls
    /// SIP signalling: inbound authentication, the trunks.
    case sip
    /// The media threads and their I/O.
    case media
    /// The control API's listener.
    case api
    /// Cluster membership and takeover.
    case cluster
    /// The call records (SQLite or PostgreSQL).
    case records
    /// TLS connections of the SIP trunks.
    case tls
    /// Deliveries of inbound notifications to the webhook.
    case webhook

    /// The component's slot in `LogSink`'s packed levels, 0-15.
    var slot: Int {
        switch self {
        case .gateway: 0
        case .calls: 1
        case .sip: 2
        case .media: 3
        case .api: 4
        case .cluster: 5
        case .records: 6
        case .tls: 7
        case .webhook: 8
        }
    }

    /// The names as the flags and the settings file take them.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
