/// `o=`: the originator of the session and the identity and version of the description.
///
/// ```
/// origin-field = %s"o" "=" username SP sess-id SP sess-version SP
///                nettype SP addrtype SP unicast-address CRLF
/// ```
public struct SDPOrigin: Sendable, Equatable {
    /// The originator's login, or "-".
    public var username: String
    /// A numeric string that, with the other fields, identifies the session globally. Kept as
    /// text because implementations use values wider than 64 bits.
    public var sessionID: String
    /// Incremented on every new offer that changes the session (RFC 3264 §8).
    public var sessionVersion: UInt64
    /// The network type, "IN".
    public var netType: String
    /// The address type, "IP4" or "IP6".
    public var addrType: String
    /// The originating host's address or name.
    public var address: String

    /// An origin with the given fields; `netType` defaults to "IN" and `addrType` to "IP4".
    public init(
        username: String = "-", sessionID: String, sessionVersion: UInt64,
        netType: String = "IN", addrType: String = "IP4", address: String
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.netType = netType
        self.addrType = addrType
        self.address = address
    }

    /// The same origin with the session version incremented (wrapping), for a changed offer.
    public func incrementingVersion() -> SDPOrigin {
        var next = self
        next.sessionVersion = sessionVersion &+ 1
        return next
    }

    /// Parses the value of an `o=` line (without "o=").
    public static func parse(_ value: String, line: Int = 0) throws(SDPError) -> SDPOrigin {
        let parts = value.split(separator: " ").map(String.init)
        guard parts.count == 6 else {
            throw SDPError(
                line: line,
                reason:
                    "o= needs 6 fields (username sess-id sess-version nettype addrtype address), found \(parts.count)")
        }
        guard let version = sdpDecimal(parts[2]) else {
            throw SDPError(line: line, reason: "o= session version '\(parts[2])' is not a number")
        }
        return SDPOrigin(
            username: parts[0], sessionID: parts[1], sessionVersion: version,
            netType: parts[3], addrType: parts[4], address: parts[5])
    }

    /// The value of the `o=` line (without "o=").
    public func serialize() -> String {
        "\(username) \(sessionID) \(sessionVersion) \(netType) \(addrType) \(address)"
    }
}
