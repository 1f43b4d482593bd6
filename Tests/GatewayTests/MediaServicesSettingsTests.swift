import Foundation
import IOCore
import IrisAPI
import Media
import SIP
import Testing

@testable import Gateway

/// The profile's `recording` and `amd` sections, the serve keys `recordings` and
/// `mediaStreams`, how a request's options combine with them, and recording retention.
@Suite struct MediaServicesSettingsTests {
    static let base = #"name: "t", outbound: { proxies: ["sip:127.0.0.1"] }"#

    @Test func profileSectionsAreReadWithTheirDefaults() throws {
        let plain = try ProfileLoader.parse("{ \(Self.base) }", file: "p.json5")
        #expect(plain.recording == TrunkProfile.Recording())
        #expect(plain.amd == AMDSettings())
        let p = try ProfileLoader.parse(
            """
            { \(Self.base), recording: { always: true, channels: 1, format: "ogg", siprec: "sip:srs@127.0.0.1:5090" },
              amd: { initialSilenceMs: 3000, greetingMs: 1200, maximumNumberOfWords: 4, silenceThresholdDb: -45,
                     detectFax: false, beepTimeoutMs: 15000 } }
            """, file: "p.json5")
        #expect(p.recording == .init(always: true, channels: 1, format: .ogg, siprec: "sip:srs@127.0.0.1:5090"))
        #expect(p.amd.initialSilence == 3000 && p.amd.greeting == 1200 && p.amd.maximumNumberOfWords == 4)
        #expect(p.amd.silenceThreshold == -45 && !p.amd.detectFax && p.amd.beepTimeout == 15000)
        #expect(p.amd.afterGreetingSilence == AMDSettings().afterGreetingSilence)
    }

    @Test(arguments: [
        ("recording: { channels: 3 }", "recording.channels"),
        ("recording: { format: \"mp3\" }", "recording.format"),
        ("recording: { siprec: \"http://srs\" }", "recording.siprec"),
        ("recording: { everything: true }", "recording.everything"),
        ("amd: { greetingMs: 10 }", "amd.greetingMs"),
        ("amd: { silenceThresholdDb: 3 }", "amd.silenceThresholdDb"),
        ("amd: { beep: true }", "amd.beep")
    ])
    func aBrokenSectionNamesItsKey(_ c: (String, String)) {
        let error = #expect(throws: ProfileError.self) {
            try ProfileLoader.parse("{ \(Self.base), \(c.0) }", file: "p.json5")
        }
        #expect(error?.keyPath == c.1 && error?.file == "p.json5", "\(String(describing: error))")
    }

    @Test func serveKeysAreRead() throws {
        let c = try ServeConfiguration.parse(
            """
            { dataDir: "/var/lib/irisgw", recordings: { dir: "/srv/rec", retentionDays: 30 },
              mediaStreams: { caFile: "/etc/ca.pem", connectTimeoutSec: 5, maxQueuedFrames: 100, maxForksPerSession: 2 } }
            """, file: "serve.json5")
        let g = GatewayConfiguration(serve: c, cpus: .init(affinity: 1, quota: nil, online: 1))
        #expect(g.recordingsDirectory == "/srv/rec" && g.recordings.retentionDays == 30)
        #expect(
            g.mediaStreams
                == .init(caFile: "/etc/ca.pem", connectTimeoutSec: 5, maxQueuedFrames: 100, maxForksPerSession: 2))
        let d = GatewayConfiguration(
            serve: try ServeConfiguration.parse("{ dataDir: \"/d\" }", file: "s"),
            cpus: .init(affinity: 1, quota: nil, online: 1))
        #expect(d.recordingsDirectory == "/d/recordings" && d.recordings.retentionDays == nil)
        #expect(d.mediaStreams == MediaStreamSettings())
        let error = #expect(throws: ProfileError.self) {
            try ServeConfiguration.parse("{ mediaStreams: { maxQueuedFrames: 0 } }", file: "s.json5")
        }
        #expect(error?.keyPath == "mediaStreams.maxQueuedFrames")
    }

    /// `sip.t1Ms` (a serve key beside these): every SIP timer's base, 50-5000 ms.
    @Test func sipT1IsReadAndBounded() throws {
        let c = try ServeConfiguration.parse("{ sip: { t1Ms: 100 } }", file: "s.json5")
        var sip = SIPUserAgentConfiguration()
        c.sip?.apply(to: &sip)
        #expect(sip.t1 == 0.1)
        let error = #expect(throws: ProfileError.self) {
            try ServeConfiguration.parse("{ sip: { t1Ms: 10 } }", file: "s")
        }
        #expect(error?.keyPath == "sip.t1Ms")
    }

    @Test func aRequestsOptionsGoOverTheProfiles() throws {
        var profile = try ProfileLoader.parse(
            "{ \(Self.base), recording: { channels: 1, format: \"ogg\" }, media: { codecs: [\"G722\", \"PCMU\"] } }",
            file: "p.json5")
        let c = try Gateway.recordingConfiguration(RecordingOptions(channels: 2), profile: profile, field: "recording.")
        #expect(c.layout == .stereo && c.format == .ogg && c.sampleRate == 16_000)
        profile.media.codecs = [.pcmu]
        let d = try Gateway.recordingConfiguration(RecordingOptions(), profile: profile, field: "recording.")
        #expect(d.layout == .mixed && d.sampleRate == 8000)
        #expect(throws: GatewayError.self) {
            try Gateway.recordingConfiguration(RecordingOptions(format: "flac"), profile: profile, field: "recording.")
        }
    }

    @Test func retentionDeletesOnlyOldRecordings() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["old.wav", "old.ogg", "new.wav", "old.txt"] {
            FileManager.default.createFile(atPath: dir + "/" + name, contents: Data([1, 2, 3]))
        }
        let old = Date(timeIntervalSinceNow: -10 * 86_400)
        for name in ["old.wav", "old.ogg", "old.txt"] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: dir + "/" + name)
        }
        let removed = RecordingRetention.sweep(directory: dir, olderThan: 7 * 86_400)
        #expect(Set(removed) == ["old.wav", "old.ogg"])
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["new.wav", "old.txt"])
    }
}
