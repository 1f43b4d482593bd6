import Glibc
import IOCore

/// The `SocketAddress` of recent UDP sources, by their C address: a flood, or a carrier's
/// answers, come from a few addresses over and over, and building the text form of each
/// datagram's source (`inet_ntop` and a String) cost more than the lookup. On the SIP loop.
struct UDPSourceNames {
    /// The endpoint and whether it was read as IPv6: a dual-stack socket names an IPv4 peer
    /// `::ffff:a.b.c.d`, an IPv4 socket `a.b.c.d`, and each must keep its own text.
    private struct Key: Hashable {
        var endpoint: SocketEndpoint
        var v6: Bool
    }

    private var names: [Key: SocketAddress] = [:]
    /// Sources kept at most; past it the table starts again (many spoofed sources then cost
    /// what they cost before it).
    static let capacity = 256

    mutating func address(of raw: RawSocketAddress) -> SocketAddress? {
        guard let endpoint = raw.endpoint else { return nil }
        let key = Key(endpoint: endpoint, v6: raw.storage.ss_family == sa_family_t(AF_INET6))
        if let known = names[key] { return known }
        guard let address = raw.address else { return nil }
        if names.count >= Self.capacity { names.removeAll(keepingCapacity: true) }
        names[key] = address
        return address
    }
}
