import Gateway

/// The serve file's keys of the control API's listener, read here rather than in Gateway (which
/// keeps them as written, `ServeConfiguration.apiListenerFields`): `apiLimits` and the HTTPS
/// keys. A bad value is an error naming the file and the key path, as for the rest of the file.
public struct APIListenerSettings: Sendable, Equatable {
    /// `apiLimits`; nil: the server's defaults.
    public var limits: APILimits?
    /// `apiTlsCertificate`, `apiTlsKey`, `apiTlsClientCA`, `apiTlsVerifyClient`,
    /// `apiListenPlain`; nil: none given.
    public var tls: APITLSSettings?

    /// No key given: the defaults.
    public init() {}

    /// Reads the listener's keys of `serve`.
    public init(serve: ServeConfiguration) throws(ProfileError) {
        guard let fields = serve.apiListenerFields?.fields else { return }
        limits = try APILimits.read(fields)
        tls = try APITLSSettings.read(fields)
    }
}
