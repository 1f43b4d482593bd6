import Formats
import SIP

extension ServeConfiguration {
    /// The TLS listener's keys (docs/operations.md, "SIP over TLS"). Every key optional;
    /// `sipTlsListen` needs `tlsCertificate` and `tlsKey`.
    ///
    /// ```json5
    /// sipTlsListen: "0.0.0.0:5061",        // or an array; port 0: the OS picks
    /// tlsCertificate: "/etc/irisgw/tls/gw.pem",   // PEM, the chain after it; reread on SIGHUP
    /// tlsKey: "/etc/irisgw/tls/gw.key",
    /// tlsVerifyClient: "none",             // "optional" or "require": ask peers for a certificate
    /// tlsClientCA: "/etc/irisgw/tls/carriers.pem",  // CAs of the peers' certificates; default: the system store
    /// ```
    public struct TLSSettings: Sendable, Equatable {
        public var listen: [SocketAddress]?
        public var certificate: String?
        public var key: String?
        public var clientCA: String?
        public var verifyClient: SIPTLSServerSettings.ClientVerification?
        public init() {}

        /// The listener's settings, when a certificate and key are given.
        public var server: SIPTLSServerSettings? {
            guard let certificate, let key else { return nil }
            return SIPTLSServerSettings(
                certificateFile: certificate, keyFile: key, clientCAFile: clientCA,
                verifyClient: verifyClient ?? .none)
        }
    }

    static let tlsKeys = ["sipTlsListen", "tlsCertificate", "tlsKey", "tlsClientCA", "tlsVerifyClient"]

    static func tlsSettings(_ o: ProfileSchema.ObjectFields, schema: ProfileSchema) throws(ProfileError) -> TLSSettings?
    {
        var s = TLSSettings()
        func address(_ v: JSON5Value, _ p: String) throws(ProfileError) -> SocketAddress {
            let text = try schema.string(v, at: p)
            guard let a = SocketAddress.parse(text, defaultPort: -1), a.port >= 0,
                a.withSockAddr({ _, _ in true }) != nil
            else {
                throw schema.fail(p, "must be HOST:PORT with a numeric host, found \"\(text)\"")
            }
            return a
        }
        s.listen = try o.optional("sipTlsListen") { (v, p) throws(ProfileError) -> [SocketAddress] in
            guard case .array(let items) = v else { return [try address(v, p)] }
            guard !items.isEmpty else { throw schema.fail(p, "must name at least one HOST:PORT") }
            var out: [SocketAddress] = []
            for (i, item) in items.enumerated() { out.append(try address(item, "\(p)[\(i)]")) }
            return out
        }
        (s.certificate, s.key, s.clientCA, s.verifyClient) = try listenerFiles(o, schema: schema, prefix: "tls")
        if s.listen != nil && s.certificate == nil {
            throw schema.fail("tlsCertificate", "missing: sipTlsListen needs tlsCertificate and tlsKey")
        }
        return s == TLSSettings() ? nil : s
    }

    /// A TLS listener's files and client check, `<prefix>Certificate`, `<prefix>Key`,
    /// `<prefix>ClientCA`, `<prefix>VerifyClient` (SIP's `tls...`, the API's `apiTls...`);
    /// the certificate and its key go together.
    package static func listenerFiles(
        _ o: ProfileSchema.ObjectFields, schema: ProfileSchema, prefix: String
    ) throws(ProfileError)
        -> (certificate: String?, key: String?, clientCA: String?, verifyClient: TLSServerSettings.ClientVerification?)
    {
        func file(_ key: String) throws(ProfileError) -> String? {
            try o.optional(prefix + key) { (v, p) throws(ProfileError) in
                let text = try schema.string(v, at: p)
                guard !text.isEmpty else { throw schema.fail(p, "must be a file path") }
                return text
            }
        }
        let certificate = try file("Certificate"), key = try file("Key"), clientCA = try file("ClientCA")
        let verifyClient = try o.optional(prefix + "VerifyClient") { (v, p) throws(ProfileError) in
            try schema.choice(v, at: p, TLSServerSettings.ClientVerification.self)
        }
        if (certificate == nil) != (key == nil) {
            throw schema.fail(
                prefix + (certificate == nil ? "Certificate" : "Key"),
                "missing: \(prefix)Certificate and \(prefix)Key go together")
        }
        return (certificate, key, clientCA, verifyClient)
    }
}
