import IOCore
import SDP

/// A host candidate as the SDP `a=candidate` attribute carries it (RFC 8839 §5.1):
///
///     candidate-attribute = "candidate" ":" foundation SP component-id SP
///                           transport SP priority SP connection-address SP port
///                           SP cand-type [...]
///
/// An ICE-lite agent offers host candidates only (RFC 8445 §2.5): one per media address.
public struct ICECandidate: Sendable, Hashable, CustomStringConvertible {
    /// The foundation: candidates of the same type, base and server share one (1–32 chars).
    public var foundation: String
    /// The component: 1 for RTP (RTCP is multiplexed, RFC 5761).
    public var component: Int
    /// The candidate's priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// The transport address: a numeric IP (no brackets for IPv6) and a UDP port.
    public var address: SocketAddress

    /// A UDP host candidate at `address`, priority from `hostPriority`.
    public init(
        foundation: String = "1", component: Int = 1, address: SocketAddress,
        localPreference: UInt32 = 65535
    ) {
        self.foundation = foundation
        self.component = component
        self.address = address
        self.priority = Self.hostPriority(localPreference: localPreference, component: component)
    }

    /// The priority of a host candidate (RFC 8445 §5.1.2.1):
    /// `2^24 · 126 + 2^8 · local preference + (256 − component)`; 126 is the recommended
    /// type preference for host candidates, 65535 the local preference of a single-homed
    /// agent. Component 1 gives 2130706431.
    public static func hostPriority(localPreference: UInt32 = 65535, component: Int = 1) -> UInt32 {
        precondition(localPreference <= 65535 && (1...256).contains(component))
        return (1 << 24) * 126 + (1 << 8) * localPreference + UInt32(256 - component)
    }

    /// The candidate as SDP writes it (the SDP module owns the grammar).
    public var sdpCandidate: SDPCandidate {
        SDPCandidate(
            foundation: foundation, component: component, transport: "udp", priority: priority,
            address: address.host, port: UInt16(address.port), type: "host")
    }

    /// The attribute's value: `1 1 udp 2130706431 192.0.2.10 40000 typ host`.
    public var attributeValue: String { sdpCandidate.serialize() }

    /// The SDP line without `a=` and CRLF: `candidate:1 1 udp ... typ host`.
    public var description: String { "candidate:" + attributeValue }
}
