/// `c=`: where media is sent or expected.
///
/// ```
/// connection-field = %s"c" "=" nettype SP addrtype SP connection-address CRLF
/// ```
public struct SDPConnection: Sendable, Equatable {
    /// The network type, "IN".
    public var netType: String
    /// The address type, "IP4" or "IP6".
    public var addrType: String
    /// The address, possibly with multicast "/ttl/count" suffixes.
    public var address: String

    /// A connection with the given fields; `netType` defaults to "IN".
    public init(netType: String = "IN", addrType: String, address: String) {
        self.netType = netType
        self.addrType = addrType
        self.address = address
    }

    /// An IPv4 connection ("IN IP4 address").
    public static func ip4(_ address: String) -> SDPConnection {
        SDPConnection(addrType: "IP4", address: address)
    }

    /// An IPv6 connection ("IN IP6 address").
    public static func ip6(_ address: String) -> SDPConnection {
        SDPConnection(addrType: "IP6", address: address)
    }

    /// The address without the multicast "/ttl/count" suffixes.
    public var host: String {
        address.split(separator: "/", maxSplits: 1).first.map(String.init) ?? address
    }

    /// Whether the address is 0.0.0.0 or ::, which RFC 2543 endpoints send to put a call on
    /// hold (RFC 3264 §8.4 still asks answerers to understand it).
    public var isNullAddress: Bool {
        host == "0.0.0.0" || host == "::" || host == "0:0:0:0:0:0:0:0"
    }

    /// Parses the value of a `c=` line (without "c=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPConnection {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 3 else {
            throw SDPError(line: line, reason: "c= needs 3 fields (nettype addrtype address), found \(parts.count)")
        }
        return SDPConnection(netType: parts[0], addrType: parts[1], address: parts[2])
    }

    /// The value of the `c=` line (without "c=").
    public func serialize() -> String { "\(netType) \(addrType) \(address)" }
}
