import ControlAPI
import Gateway
import TLS
import Testing

/// The serve file's control API listener keys, read by ControlAPI from what Gateway's
/// `ServeConfiguration` kept of them: the values, and errors naming the file and the key.
@Suite struct APIListenerSettingsTests {
    static func read(_ text: String) throws(ProfileError) -> APIListenerSettings {
        try APIListenerSettings(serve: ServeConfiguration.parse(text, file: "serve.json5"))
    }

    @Test func theLimitsAreRead() throws {
        let s = try Self.read(
            """
            { apiListen: "127.0.0.1:8080",
              apiLimits: { threads: 4, maxConnectionsPerSource: 300, maxWebSocketsPerClient: 900,
                           headerTimeoutSec: 5, bodyTimeoutSec: 6, idleTimeoutSec: 7, maxHeaderBytes: 8192,
                           maxBodyBytes: 131072, requestQueueLimit: 50, webSocketQueueLimit: 60 } }
            """)
        var expected = APILimits(threads: 4, maxConnectionsPerSource: 300, maxWebSocketsPerClient: 900)
        (expected.headerTimeoutSec, expected.bodyTimeoutSec, expected.idleTimeoutSec) = (5, 6, 7)
        (expected.maxHeaderBytes, expected.maxBodyBytes) = (8192, 131_072)
        (expected.requestQueueLimit, expected.webSocketQueueLimit) = (50, 60)
        #expect(s.limits == expected && s.tls == nil)
        let http = HTTPServerConfiguration(listen: "127.0.0.1:0", limits: s.limits)
        #expect(http.threads == 4 && http.maxConnectionsPerSource == 300 && http.headerTimeout == 5)
        #expect(http.maxBodyBytes == 131_072 && http.webSocketQueueLimit == 60)
    }

    @Test func theTLSKeysAreRead() throws {
        let s = try Self.read(
            """
            { apiListen: "0.0.0.0:8443", apiTlsCertificate: "api.pem", apiTlsKey: "api.key", apiTlsClientCA: "clients.pem",
              apiTlsVerifyClient: "optional", apiListenPlain: "127.0.0.1:8081" }
            """)
        #expect(
            s.tls?.server
                == TLSServerSettings(
                    certificateFile: "api.pem", keyFile: "api.key", clientCAFile: "clients.pem",
                    verifyClient: .optional))
        #expect(s.tls?.listenPlain == "127.0.0.1:8081" && s.limits == nil)
    }

    /// A file without any of the keys leaves Gateway nothing to keep: the defaults.
    @Test func noKeyIsTheDefaults() throws {
        let file = try ServeConfiguration.parse("{ apiListen: \"127.0.0.1:8080\", maxSessions: 5 }", file: "s")
        #expect(file.apiListenerFields == nil)
        #expect(try APIListenerSettings(serve: file) == APIListenerSettings())
    }

    @Test(arguments: [
        ("{ apiLimits: { maxConnections: 0 } }", "apiLimits.maxConnections"),
        ("{ apiLimits: { maxSockets: 9 } }", "apiLimits.maxSockets"),
        ("{ apiLimits: { headerTimeoutSec: 0 } }", "apiLimits.headerTimeoutSec"),
        ("{ apiLimits: 5 }", "apiLimits"),
        ("{ apiTlsCertificate: \"a\" }", "apiTlsKey"),
        ("{ apiTlsCertificate: \"a\", apiTlsKey: \"b\", apiListenPlain: \"gw:8081\" }", "apiListenPlain"),
        ("{ apiTlsCertificate: \"a\", apiTlsKey: \"b\", apiTlsVerifyClient: \"always\" }", "apiTlsVerifyClient")
    ])
    func badKeysNameTheFileAndKey(_ text: String, _ key: String) {
        do {
            _ = try Self.read(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "serve.json5" && error.keyPath == key, "\(error)")
        }
    }
}
