import IOCore
import SIP

extension ServeConfiguration {
    /// The DNS keys: where names in proxies and targets are looked up (RFC 3263) and how
    /// long a lookup may take. Every key optional; the defaults are
    /// `DNSResolverConfiguration`'s (docs/operations.md).
    ///
    /// ```json5
    /// dnsServers: ["10.0.0.53:53", "[2001:db8::53]:53"],  // default: /etc/resolv.conf
    /// dnsTimeoutMs: 1500,       // one try; c-ares doubles it each round through the servers
    /// dnsTries: 2,              // tries per server
    /// dnsNegativeCacheSec: 30,  // NXDOMAIN, no data, SERVFAIL and timeouts are kept this long
    /// ```
    public struct DNSSettings: Sendable, Equatable {
        public var servers: [SocketAddress]?
        public var timeoutMs: Int?
        public var tries: Int?
        public var negativeCacheSec: Int?
        public init() {}

        /// Applies what is set to a resolver's configuration.
        public func apply(to dns: inout DNSResolverConfiguration) {
            if let servers { dns.servers = servers }
            if let timeoutMs { dns.timeoutMs = timeoutMs }
            if let tries { dns.tries = tries }
            if let negativeCacheSec { dns.negativeTTL = Double(negativeCacheSec) }
        }
    }

    static let dnsKeys = ["dnsServers", "dnsTimeoutMs", "dnsTries", "dnsNegativeCacheSec"]

    /// A DNS server as `--dns-server` and `dnsServers` take it: a numeric IPv4 host or a
    /// bracketed IPv6 one, and a port from 1 to 65535. nil for anything else.
    public static func dnsServer(_ text: String) -> SocketAddress? {
        guard let a = SocketAddress.parse(text, defaultPort: -1), (1...65_535).contains(a.port),
            a.withSockAddr({ _, _ in true }) != nil, !a.isIPv6 || text.hasPrefix("[")
        else { return nil }
        return a
    }

    static func dnsSettings(_ o: ProfileSchema.ObjectFields, schema: ProfileSchema) throws(ProfileError) -> DNSSettings?
    {
        var s = DNSSettings()
        s.servers = try o.optional("dnsServers") { (v, p) throws(ProfileError) -> [SocketAddress] in
            guard case .array(let items) = v else {
                throw schema.typeError(p, expected: "an array of \"HOST:PORT\" strings", found: v)
            }
            guard !items.isEmpty else {
                throw schema.fail(p, "must name at least one server (leave the key out for /etc/resolv.conf)")
            }
            var out: [SocketAddress] = []
            for (i, item) in items.enumerated() {
                let text = try schema.string(item, at: "\(p)[\(i)]")
                guard let a = dnsServer(text) else {
                    throw schema.fail(
                        "\(p)[\(i)]", "must be HOST:PORT with a numeric host ([v6]:port for IPv6), found \"\(text)\"")
                }
                out.append(a)
            }
            return out
        }
        s.timeoutMs = try o.optional("dnsTimeoutMs") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 50...30_000)
        }
        s.tries = try o.optional("dnsTries") { (v, p) throws(ProfileError) in try schema.int(v, at: p, in: 1...10) }
        s.negativeCacheSec = try o.optional("dnsNegativeCacheSec") { (v, p) throws(ProfileError) in
            try schema.int(v, at: p, in: 0...3600)
        }
        return s == DNSSettings() ? nil : s
    }
}
