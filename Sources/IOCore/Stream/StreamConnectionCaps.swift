import Glibc

/// Counts the stream connections of one owner (both directions) and bounds them, in all and
/// per source address. The listener asks it before handing a connection on; each
/// `StreamConnection` given it counts itself in when made and out when it ends. Confined to
/// the owner's loop.
public final class StreamConnectionCaps {
    /// Connections open at once.
    public let maxConnections: Int
    /// Connections from (or to) one IP address.
    public let maxPerSource: Int
    /// Connections open now.
    public private(set) var total = 0
    private var perSource: [String: Int] = [:]
    /// What `maxPerSource` counts by, from a peer's host (the control API groups an IPv6
    /// client's /64); by default the host itself.
    private let sourceKey: (String) -> String

    public init(maxConnections: Int, maxPerSource: Int, sourceKey: @escaping (String) -> String = { $0 }) {
        self.maxConnections = maxConnections
        self.maxPerSource = maxPerSource
        self.sourceKey = sourceKey
    }

    /// Why a new connection from `host` must be refused, or nil when it may open.
    public func refusal(forSource host: String) -> StreamRefusal? {
        if total >= maxConnections { return .tooManyConnections }
        if perSource[sourceKey(host), default: 0] >= maxPerSource { return .tooManyFromSource }
        return nil
    }

    /// Connections open to or from `host`.
    public func count(of host: String) -> Int { perSource[sourceKey(host), default: 0] }

    func add(_ host: String) {
        total += 1
        perSource[sourceKey(host), default: 0] += 1
    }

    func remove(_ host: String) {
        total -= 1
        let key = sourceKey(host)
        let left = perSource[key, default: 1] - 1
        perSource[key] = left > 0 ? left : nil
    }

    /// `maxConnections`, or half the process's descriptor limit when that is lower (at least
    /// 16), so sockets for everything else stay available whatever stream peers do.
    public static func cap(_ maxConnections: Int) -> Int { min(maxConnections, max(16, descriptorLimit() / 2)) }

    /// The soft RLIMIT_NOFILE, raised to the hard limit first (the default soft limit of
    /// 1024 is far too low for a gateway; the hard one is the administrator's choice).
    public static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? 1 << 20 : Int(min(limit.rlim_cur, 1 << 20))
    }
}
