import Foundation
import Testing

@testable import IrisClient
@testable import WebClient

/// The byte-level pieces under the clients: URLs, tone levels (frames and heads: HTTPTests).
struct WireFormatTests {
    @Test func urls() throws {
        #expect(
            try ClientURL.parse("ws://127.0.0.1:8080/v1/events?call=1")
                == ClientURL(scheme: .ws, host: "127.0.0.1", port: 8080, target: "/v1/events?call=1"))
        #expect(
            try ClientURL.parse("http://[::1]:9000") == ClientURL(scheme: .http, host: "::1", port: 9000, target: "/"))
        #expect(try ClientURL.parse("http://[::1]:9000").hostHeader == "[::1]:9000")
        #expect(
            try ClientURL.parse("ws://LOCALHOST?x=1")
                == ClientURL(scheme: .ws, host: "localhost", port: 80, target: "/?x=1"))
        // TLS schemes: 443 by default, a DNS name allowed (its certificate must name it).
        #expect(
            try ClientURL.parse("https://127.0.0.1")
                == ClientURL(scheme: .https, host: "127.0.0.1", port: 443, target: "/"))
        #expect(
            try ClientURL.parse("wss://[::1]/v1/events")
                == ClientURL(scheme: .wss, host: "::1", port: 443, target: "/v1/events"))
        #expect(
            try ClientURL.parse("wss://GW.Example.NET:8443/v1/events?x=1")
                == ClientURL(scheme: .wss, host: "gw.example.net", port: 8443, target: "/v1/events?x=1"))
        #expect(
            try ClientURL.parse("http://hooks.example.net/irisgw")
                == ClientURL(
                    scheme: .http, host: "hooks.example.net", port: 80,
                    target: "/irisgw"))
        #expect(
            try ClientURL.parse("https://127.0.0.1").scheme.isSecure
                && !ClientURL.parse("ws://127.0.0.1").scheme.isSecure)
        for bad in [
            "ftp://127.0.0.1/", "http://", "http://exa_mple.com/", "https://-bad.example/", "http://a..b/",
            "http://127.0.0.1:0/",
            "http://127.0.0.1:99999/", "http://u@127.0.0.1/", "https://1.2.3/"
        ] {
            #expect(throws: IrisTransportError.self, "\(bad)") { try ClientURL.parse(bad) }
        }
    }

    @Test func toneLevelMeasure() {
        let rate = 8_000
        let tone = (0..<8_000).map { Int16(10_000 * sin(2 * Double.pi * 697 * Double($0) / Double(rate))) }
        #expect(ReceivedAudio.toneLevel(tone, hz: 697, sampleRate: rate) > 0.99)
        #expect(ReceivedAudio.toneLevel(tone, hz: 1_209, sampleRate: rate) < 0.01)
        #expect(ReceivedAudio.toneLevel([Int16](repeating: 0, count: 800), hz: 697, sampleRate: rate) == 0)
        #expect(ReceivedAudio.toneLevel([], hz: 697, sampleRate: rate) == 0)
        #expect(ReceivedAudio.toneLevel(tone, hz: 5_000, sampleRate: rate) == 0)
        var audio = ReceivedAudio(sampleRate: rate, recordingLimitSeconds: 0.5)
        tone.withUnsafeBufferPointer { audio.append($0) }
        #expect(audio.recordingCopy() == Array(tone.prefix(4_000)))
        #expect(audio.last(100) == Array(tone.suffix(100)))

        // Past the 10 s ring: the newest samples, across the wrap point.
        let ramp = (0..<(11 * rate)).map { Int16(truncatingIfNeeded: $0) }
        for start in stride(from: 0, to: ramp.count, by: 160) {
            ramp[start..<(start + 160)].withUnsafeBufferPointer { audio.append($0) }
        }
        #expect(audio.last(5 * rate) == Array(ramp.suffix(5 * rate)))
        #expect(audio.last(20 * rate).count == 10 * rate)
        #expect(audio.recordingCopy().count == 4_000)
        audio.clear()
        #expect(audio.last(100).isEmpty && audio.recordingCopy().isEmpty)
    }
}
