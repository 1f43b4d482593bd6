/// Where a TLS connection goes, beyond the address: the name its certificate must carry
/// (for SIP the host of the URI before DNS, RFC 5922 §4; for HTTPS the URL's host) and how to
/// check it. The name is also sent as SNI when it is not an IP address.
public struct TLSTarget: Sendable, Hashable, CustomStringConvertible {
    /// Lower case, without brackets or a trailing dot.
    public var serverName: String
    public var client: TLSClientSettings

    public init(serverName: String, client: TLSClientSettings) {
        var name = serverName.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        self.serverName = name
        self.client = client
    }

    public var description: String { serverName }
}
