import Testing

@testable import Gateway

/// What a reload compares: profiles by name (added, changed, unchanged, removed) and the
/// serve file by key (live, or needing a restart), as plain values.
@Suite struct ReloadDiffTests {
    static func profile(_ name: String, maxCalls: Int = 10, file: String? = nil) throws -> TrunkProfile {
        try ProfileLoader.parse(
            """
            {
              name: "\(name)",
              outbound: { proxies: ["sip:127.0.0.1:5090"], fromDomain: "gw.test", maxConcurrentCalls: \(maxCalls) },
              media: { codecs: ["PCMU"] },
            }
            """, file: file ?? "\(name).json5")
    }

    @Test func profilesAreAddedChangedUnchangedAndRemovedByName() throws {
        let old = [try Self.profile("a"), try Self.profile("b"), try Self.profile("c"), try Self.profile("d")]
        let new = [
            try Self.profile("d"), try Self.profile("b", maxCalls: 20), try Self.profile("e"), try Self.profile("a")
        ]
        let changes = ProfileChanges(from: old, to: new)
        #expect(changes == ProfileChanges(added: ["e"], changed: ["b"], unchanged: ["a", "d"], removed: ["c"]))
        #expect(changes.reloaded == ["b", "e"])
        // The same set again changes nothing; a profile moved to another file has changed.
        #expect(ProfileChanges(from: new, to: new) == ProfileChanges(unchanged: ["a", "b", "d", "e"]))
        #expect(
            ProfileChanges(from: [try Self.profile("a")], to: [try Self.profile("a", file: "renamed.json5")]).changed
                == ["a"])
    }

    static func serve(_ text: String) throws -> ServeConfiguration {
        try ServeConfiguration.parse(text, file: "serve.json5")
    }

    @Test func serveKeysAreLiveOrNeedARestart() throws {
        let running = try Self.serve(
            """
            { maxSessions: 100, sipListen: "127.0.0.1:5060", sip: { requestsPerSecond: 50 },
              recordings: { retentionDays: 7 }, apiLimits: { maxConnections: 100 } }
            """)
        let next = try Self.serve(
            """
            { maxSessions: 200, sipListen: "127.0.0.1:5070", mediaLoadBudgetPercent: 70,
              sip: { requestsPerSecond: 80, tcp: { maxConnections: 10 } },
              recordings: { retentionDays: 7, dir: "/var/rec" }, apiLimits: { maxConnections: 50 },
              pageTokens: { sessionsPerRoutingId: 2 } }
            """)
        #expect(
            next.changedKeys(since: running) == [
                "apiLimits", "maxSessions", "mediaLoadBudgetPercent", "pageTokens", "recordings.dir",
                "sip.requestsPerSecond",
                "sip.tcp", "sipListen"
            ])
        #expect(next.restartRequired(since: running) == ["apiLimits", "recordings.dir", "sip.tcp", "sipListen"])
        // Nothing differs: nothing to report.
        #expect(next.changedKeys(since: next).isEmpty)
        // A key written with its default value is no change; one left out is its default.
        #expect(try Self.serve("{ sip: { banSec: 60 } }").changedKeys(since: try Self.serve("{}")).isEmpty)
        #expect(
            try Self.serve("{ sip: { banSec: 61 } }").changedKeys(since: try Self.serve("{}")) == ["sip.banSec"])
    }

    /// Every key of the serve file is compared: a key added to the file without a place here
    /// would be neither applied nor reported.
    @Test func everyServeKeyIsCompared() {
        let compared = Set(ServeConfiguration.comparedKeys)
        let topLevel = Set(compared.map { String($0.split(separator: ".")[0]) })
        #expect(topLevel == Set(ServeConfiguration.keys), "\(topLevel.symmetricDifference(ServeConfiguration.keys))")
        let sipKeys = Set(compared.filter { $0.hasPrefix("sip.") }.map { String($0.dropFirst(4)) })
        #expect(sipKeys == Set(ServeConfiguration.SIPSettings.keys))
        #expect(ServeConfiguration.liveKeys.isSubset(of: compared))
    }

    /// The live settings a reload takes, and only those.
    @Test func liveSettingsReplaceOnlyTheLiveFields() {
        let running = GatewayConfiguration(dataDir: "/a", maxSessions: 10)
        var next = GatewayConfiguration(dataDir: "/b", maxSessions: 20)
        next.mediaLoadBudget = 0.5
        next.webrtcSetupTimeout = 5
        next.sip.defence.requestsPerSecond = 7
        next.sip.t1 = 0.2
        next.rtpPorts = 30_000...30_999
        let c = running.withLiveSettings(of: next)
        #expect(c.maxSessions == 20 && c.mediaLoadBudget == 0.5 && c.sip.defence.requestsPerSecond == 7)
        #expect(c.webrtcSetupTimeout == 5)
        #expect(c.dataDir == "/a" && c.sip.t1 == running.sip.t1 && c.rtpPorts == running.rtpPorts)
    }
}
