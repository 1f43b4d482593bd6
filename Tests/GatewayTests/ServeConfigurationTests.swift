import Gateway
import Testing

@Suite struct ServeConfigurationTests {
    @Test func everyKeyIsRead() throws {
        let c = try ServeConfiguration.parse("""
        // a production node
        {
          profiles: "/etc/irisgw/profiles", sipListen: "0.0.0.0:5060", apiListen: "127.0.0.1:8080",
          rtpHost: "203.0.113.7", rtpPorts: "30000-39999", dataDir: "/var/lib/irisgw",
          publicURL: "https://gw1.example.net", drainTimeoutSec: 60, maxSessions: 500, mediaRealtimePriority: 10,
          webhook: { url: "http://127.0.0.1:9000/hook", timeoutSec: 3, retries: 4 },
        }
        """, file: "serve.json5")
        #expect(c.profiles == "/etc/irisgw/profiles" && c.sipListen?.port == 5060 && c.apiListen == "127.0.0.1:8080")
        #expect(c.rtpPorts == 30_000...39_999 && c.rtpHost == "203.0.113.7" && c.dataDir == "/var/lib/irisgw")
        #expect(c.publicURL == "https://gw1.example.net" && c.drainTimeoutSec == 60 && c.maxSessions == 500)
        #expect(c.webhook == .init(url: "http://127.0.0.1:9000/hook", timeoutSec: 3, retries: 4))
        #expect(c.mediaRealtimePriority == 10)
        #expect(try ServeConfiguration.parse("{}", file: "empty.json5") == ServeConfiguration())
    }

    @Test(arguments: [
        ("{ sipListn: \"1.2.3.4:5\" }", "sipListn"),
        ("{ rtpPorts: \"20001-20000\" }", "rtpPorts"),
        ("{ maxSessions: \"many\" }", "maxSessions"),
        ("{ webhook: { timeoutSec: 3 } }", "webhook.url"),
        ("{ webhook: { url: \"ftp://x\" } }", "webhook.url"),
        ("{ publicURL: \"gw1\" }", "publicURL"),
        ("{ apiListen: \"localhost\" }", "apiListen"),
        ("{ mediaRealtimePriority: 0 }", "mediaRealtimePriority"),
    ])
    func badFilesNameTheFileAndKey(_ text: String, _ key: String) {
        do {
            _ = try ServeConfiguration.parse(text, file: "serve.json5")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.file == "serve.json5" && error.keyPath == key, "\(error)")
        }
    }
}
