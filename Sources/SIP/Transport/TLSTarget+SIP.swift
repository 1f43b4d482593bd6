@_exported import TLS

extension TLSTarget {
    /// A SIP target: RFC 5922 names, the system trust store.
    public init(serverName: String) {
        self.init(serverName: serverName, client: TLSClientSettings())
    }
}
