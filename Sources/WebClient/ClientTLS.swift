import TLS

/// What an `https://` or `wss://` client checks: the trust (a CA file, or the system store)
/// and the host name its certificate must carry (RFC 6125 / RFC 2818, `TLSNamePolicy.https`).
/// The OpenSSL context is made once per client and shared by its connections, each a
/// `TLSStream(client:target:)` as the stream layer's security layer (`ClientDialer`).
struct ClientTLS: Sendable {
    let context: TLSContext
    let target: TLSTarget

    /// Loads the trust for `host` (the URL's, also sent as SNI when it is a name). Throws
    /// `.usage`-kind `.invalidURL` when the CA file cannot be used.
    init(host: String, caFile: String?, url: String) throws(IrisTransportError) {
        let settings = TLSClientSettings(caFile: caFile, names: .https)
        do throws(TLSFailure) {
            context = try TLSContext(client: settings)
        } catch {
            throw .invalidURL(url, reason: error.description)
        }
        target = TLSTarget(serverName: host, client: settings)
    }
}
