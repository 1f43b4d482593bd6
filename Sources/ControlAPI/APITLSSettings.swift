import Gateway
import IOCore
import TLS

/// The control API's HTTPS keys of the serve file (docs/operations.md, "HTTPS for the control
/// API"). With `apiTlsCertificate` and `apiTlsKey`, `apiListen` speaks HTTPS and WSS only;
/// plain HTTP then only on `apiListenPlain`, when asked for.
///
/// ```json5
/// apiTlsCertificate: "/etc/irisgw/tls/api.pem",  // PEM, the chain after it; reread on SIGHUP
/// apiTlsKey: "/etc/irisgw/tls/api.key",
/// apiTlsVerifyClient: "none",            // "optional" or "require": ask API clients for a certificate
/// apiTlsClientCA: "/etc/irisgw/tls/clients.pem",  // CAs of the clients' certificates; default: the system store
/// apiListenPlain: "127.0.0.1:8081",      // also plain HTTP there (e.g. loopback health checks); default: none
/// ```
public struct APITLSSettings: Sendable, Equatable {
    public var certificate: String?
    public var key: String?
    public var clientCA: String?
    public var verifyClient: TLSServerSettings.ClientVerification?
    /// A second, plain HTTP listener next to the HTTPS one.
    public var listenPlain: String?
    public init() {}

    /// The HTTPS listener's settings, when a certificate and key are given.
    public var server: TLSServerSettings? {
        guard let certificate, let key else { return nil }
        return TLSServerSettings(
            certificateFile: certificate, keyFile: key, clientCAFile: clientCA, verifyClient: verifyClient ?? .none)
    }

    /// Reads the `apiTls*` keys and `apiListenPlain` from the serve file's top-level keys; nil
    /// when none is given. Errors name the file and key.
    static func read(_ o: ProfileSchema.ObjectFields) throws(ProfileError) -> APITLSSettings? {
        let schema = o.schema
        var s = APITLSSettings()
        (s.certificate, s.key, s.clientCA, s.verifyClient) = try ServeConfiguration.listenerFiles(
            o, schema: schema, prefix: "apiTls")
        s.listenPlain = try o.optional("apiListenPlain") { (v, p) throws(ProfileError) in
            let text = try schema.string(v, at: p)
            guard let a = SocketAddress.parse(text, defaultPort: -1), a.port >= 0,
                a.withSockAddr({ _, _ in true }) != nil
            else {
                throw schema.fail(p, "must be HOST:PORT with a numeric host, found \"\(text)\"")
            }
            return a.description
        }
        return s == APITLSSettings() ? nil : s
    }
}
