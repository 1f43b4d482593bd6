/// Why a `redis://` URL cannot be used; names the part that is wrong and never echoes the
/// password.
public enum RedisURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not `redis://` (the scheme found, or empty when there is none). `rediss://` (TLS) is
    /// not supported.
    case scheme(String)
    /// No host between `//` (or `@`) and the port.
    case missingHost
    /// The host is a name: only IP literals (IPv6 in brackets) and `localhost` are accepted,
    /// names are not resolved.
    case host(String)
    /// The port is not a number from 1 to 65535.
    case port(String)
    /// The path is not a database number (`/0` ... ).
    case database(String)
    /// The part before `@` is not `[user]:password` with valid percent-encoding.
    case userInfo

    public var description: String {
        switch self {
        case .scheme(let found):
            found.isEmpty
                ? "redis URL: missing scheme (expected redis://host:port)"
                : "redis URL: scheme \(found):// is not supported (expected redis://)"
        case .missingHost: "redis URL: missing host"
        case .host(let host): "redis URL: host \(host) is not an IP address or localhost (names are not resolved)"
        case .port(let port): "redis URL: port \(port) is not a number from 1 to 65535"
        case .database(let db): "redis URL: database \(db) is not a number"
        case .userInfo: "redis URL: the part before @ must be [user]:password (percent-encoded)"
        }
    }
}
