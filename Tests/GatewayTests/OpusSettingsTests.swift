import IrisAPI
import Media
import Testing

@testable import Gateway

// `media.opus` in trunk profiles, the one merging rule (gateway defaults, then the profile,
// then the session), the check of a create request's `opus`, and the snapshot's view of the
// settings in effect. The argument tables live at file scope (as static members the
// compiler reports a circular reference).

private func profile(opus: String) throws(ProfileError) -> TrunkProfile {
    try ProfileLoader.parse(
        #"{ name: "t", outbound: { proxies: ["sip:127.0.0.1:5090"] }, media: { opus: \#(opus) } }"#, file: "opus.json5")
}

/// Profile `media.opus` text and what it reads as.
private let goodProfileValues: [(String, AudioCodec.OpusOverrides)] = [
    ("{}", .init()),
    ("{ complexity: 0 }", .init(complexity: 0)),
    ("{ complexity: 10 }", .init(complexity: 10)),
    ("{ bitrate: 6000 }", .init(bitrate: .fixed(6000))),
    ("{ bitrate: 510000 }", .init(bitrate: .fixed(510_000))),
    ("{ bitrate: 24000.0 }", .init(bitrate: .fixed(24_000))),
    (#"{ bitrate: "auto" }"#, .init(bitrate: .automatic)),
    ("{ fec: false }", .init(inbandFEC: false)),
    ("{ expectedLoss: 0 }", .init(expectedLossPercent: 0)),
    ("{ expectedLoss: 100 }", .init(expectedLossPercent: 100)),
    ("{ dtx: true }", .init(dtx: true)),
    (#"{ application: "voip" }"#, .init(application: .voip)),
    (#"{ application: "audio" }"#, .init(application: .audio)),
    (#"{ application: "restricted-lowdelay" }"#, .init(application: .restrictedLowDelay)),
    (#"{ maxBandwidth: "auto" }"#, .init(maxBandwidth: .automatic)),
    (#"{ maxBandwidth: "narrowband" }"#, .init(maxBandwidth: .fixed(.narrowband))),
    (#"{ maxBandwidth: "mediumband" }"#, .init(maxBandwidth: .fixed(.mediumband))),
    (#"{ maxBandwidth: "wideband" }"#, .init(maxBandwidth: .fixed(.wideband))),
    (#"{ maxBandwidth: "superwideband" }"#, .init(maxBandwidth: .fixed(.superwideband))),
    (#"{ maxBandwidth: "fullband" }"#, .init(maxBandwidth: .fixed(.fullband))),
    (#"{ sampleRate: "auto" }"#, .init(sampleRate: .automatic)),
    ("{ sampleRate: 8000 }", .init(sampleRate: .fixed(8000))),
    ("{ sampleRate: 16000 }", .init(sampleRate: .fixed(16_000))),
    ("{ sampleRate: 24000 }", .init(sampleRate: .fixed(24_000))),
    ("{ sampleRate: 48000 }", .init(sampleRate: .fixed(48_000))),
    (
        #"{ complexity: 2, bitrate: 16000, fec: false, expectedLoss: 12, dtx: true, application: "audio", maxBandwidth: "wideband" }"#,
        .init(
            complexity: 2, bitrate: .fixed(16_000), inbandFEC: false, expectedLossPercent: 12, dtx: true,
            application: .audio,
            maxBandwidth: .fixed(.wideband))
    )
]

@Test(arguments: goodProfileValues)
func profileOpusValuesAreRead(text: String, expected: AudioCodec.OpusOverrides) throws {
    #expect(try profile(opus: text).media.opus == expected)
}

@Test func aProfileWithoutOpusGivesNothingOver() throws {
    let p = try ProfileLoader.parse(#"{ name: "t", outbound: { proxies: ["sip:127.0.0.1:5090"] } }"#, file: "t.json5")
    #expect(p.media.opus.isEmpty)
    #expect(p.media.opusSettings(default: .init()) == AudioCodec.OpusSettings())
}

/// Profile `media.opus` text, the key path its refusal names, and its message.
private let badProfileValues: [(String, String, String)] = [
    ("{ complexity: 11 }", "media.opus.complexity", "must be from 0 to 10, found 11"),
    ("{ complexity: -1 }", "media.opus.complexity", "must be from 0 to 10, found -1"),
    ("{ complexity: 2.5 }", "media.opus.complexity", "expected an integer, found number 2.5"),
    (#"{ complexity: "5" }"#, "media.opus.complexity", #"expected an integer, found string "5""#),
    ("{ bitrate: 5999 }", "media.opus.bitrate", #"must be from 6000 to 510000 or "auto", found 5999"#),
    ("{ bitrate: 510001 }", "media.opus.bitrate", #"must be from 6000 to 510000 or "auto", found 510001"#),
    (#"{ bitrate: "max" }"#, "media.opus.bitrate", #"must be from 6000 to 510000 or "auto", found "max""#),
    ("{ bitrate: true }", "media.opus.bitrate", #"expected an integer or "auto", found boolean true"#),
    (#"{ fec: "yes" }"#, "media.opus.fec", #"expected true or false, found string "yes""#),
    ("{ expectedLoss: 101 }", "media.opus.expectedLoss", "must be from 0 to 100, found 101"),
    ("{ expectedLoss: -5 }", "media.opus.expectedLoss", "must be from 0 to 100, found -5"),
    ("{ dtx: 1 }", "media.opus.dtx", "expected true or false, found number 1"),
    (
        #"{ application: "music" }"#, "media.opus.application",
        #"must be one of "voip", "audio", "restricted-lowdelay", found "music""#
    ),
    (
        #"{ application: "restrictedLowDelay" }"#, "media.opus.application",
        #"must be one of "voip", "audio", "restricted-lowdelay", found "restrictedLowDelay""#
    ),
    (
        #"{ maxBandwidth: "ultrawideband" }"#, "media.opus.maxBandwidth",
        #"must be one of "auto", "narrowband", "mediumband", "wideband", "superwideband", "fullband", found "ultrawideband""#
    ),
    ("{ maxBandwidth: 8000 }", "media.opus.maxBandwidth", "expected a string, found number 8000"),
    (
        "{ sampleRate: 44100 }", "media.opus.sampleRate",
        #"must be one of 8000, 16000, 24000, 48000 or "auto", found 44100"#
    ),
    (
        #"{ sampleRate: "fullband" }"#, "media.opus.sampleRate",
        #"must be one of 8000, 16000, 24000, 48000 or "auto", found "fullband""#
    ),
    ("{ sampleRate: 48000.5 }", "media.opus.sampleRate", "expected an integer, found number 48000.5"),
    ("{ sampleRate: false }", "media.opus.sampleRate", #"expected an integer or "auto", found boolean false"#),
    ("{ complexty: 3 }", "media.opus.complexty", "unknown key (did you mean complexity?)"),
    (
        "{ bandwidth: \"wideband\" }", "media.opus.bandwidth",
        "unknown key (allowed: complexity, bitrate, fec, expectedLoss, dtx, application, maxBandwidth, sampleRate)"
    ),
    ("5", "media.opus", "expected an object, found number 5")
]

@Test(arguments: badProfileValues)
func badProfileOpusValuesAreRefusedNamingFileAndKey(text: String, keyPath: String, message: String) {
    let error = #expect(throws: ProfileError.self) { try profile(opus: text) }
    #expect(error?.description == "opus.json5: \(keyPath): \(message)")
}

// MARK: The merging rule

@Test func defaultsAreTodaysEncoder() {
    let d = AudioCodec.OpusSettings()
    #expect(d.complexity == 5 && d.bitrate == nil && d.inbandFEC && d.expectedLossPercent == 5 && !d.dtx)
    #expect(d.application == .voip && d.maxBandwidth == nil && d.sampleRate == nil)
    #expect(GatewayConfiguration().opus == d)
}

/// Gateway defaults, profile, session, and the settings the session gets.
private let mergeRows:
    [(AudioCodec.OpusSettings, AudioCodec.OpusOverrides, AudioCodec.OpusOverrides?, AudioCodec.OpusSettings)] = [
        // Nothing over the defaults.
        (.init(), .init(), nil, .init()),
        // The profile's keys win over the gateway's; unset ones are inherited.
        (.init(complexity: 7, dtx: true), .init(complexity: 3), nil, .init(complexity: 3, dtx: true)),
        // The session's win over the profile's, key by key.
        (
            .init(), .init(complexity: 3, application: .audio), .init(complexity: 1),
            .init(complexity: 1, application: .audio)
        ),
        // "auto" given later undoes a fixed value given earlier.
        (
            .init(bitrate: 32_000, maxBandwidth: .wideband), .init(bitrate: .automatic),
            .init(maxBandwidth: .automatic), .init()
        ),
        (
            .init(), .init(bitrate: .fixed(12_000)), .init(bitrate: .fixed(40_000), maxBandwidth: .fixed(.fullband)),
            .init(bitrate: 40_000, maxBandwidth: .fullband)
        ),
        // The encoder's rate, fixed by the profile, back to the call's by the session.
        (.init(), .init(sampleRate: .fixed(48_000)), nil, .init(sampleRate: 48_000)),
        (.init(sampleRate: 48_000), .init(), .init(sampleRate: .automatic), .init()),
        // An empty session object changes nothing.
        (
            .init(), .init(inbandFEC: false, expectedLossPercent: 0), .init(),
            .init(inbandFEC: false, expectedLossPercent: 0)
        )
    ]

@Test(arguments: mergeRows)
func sessionOverProfileOverGateway(
    base: AudioCodec.OpusSettings, profile: AudioCodec.OpusOverrides,
    session: AudioCodec.OpusOverrides?, expected: AudioCodec.OpusSettings
) {
    let media = TrunkProfile.MediaSettings(opus: profile)
    #expect(media.opusSettings(default: base, session: session) == expected)
    #expect(base.applying(profile).applying(session) == expected)
}

// MARK: The request's `opus`

/// A create request's `opus` and what it reads as.
private let goodRequestValues: [(OpusOptions, AudioCodec.OpusOverrides)] = [
    (.init(), .init()),
    (.init(complexity: 1), .init(complexity: 1)),
    (.init(bitrate: .auto), .init(bitrate: .automatic)),
    (.init(bitrate: .bitsPerSecond(8000)), .init(bitrate: .fixed(8000))),
    (.init(fec: true, expectedLoss: 20, dtx: false), .init(inbandFEC: true, expectedLossPercent: 20, dtx: false)),
    (
        .init(application: "restricted-lowdelay", maxBandwidth: "auto"),
        .init(application: .restrictedLowDelay, maxBandwidth: .automatic)
    ),
    (.init(maxBandwidth: "superwideband"), .init(maxBandwidth: .fixed(.superwideband))),
    (.init(sampleRate: .hertz(48_000)), .init(sampleRate: .fixed(48_000))),
    (.init(sampleRate: .auto), .init(sampleRate: .automatic))
]

@Test(arguments: goodRequestValues)
func requestOpusValuesAreRead(options: OpusOptions, expected: AudioCodec.OpusOverrides) throws {
    #expect(try Gateway.opusOverrides(options) == expected)
}

/// A create request's `opus` and the 400's message.
private let badRequestValues: [(OpusOptions, String)] = [
    (.init(complexity: 11), "opus.complexity: must be from 0 to 10, found 11"),
    (.init(complexity: -3), "opus.complexity: must be from 0 to 10, found -3"),
    (.init(bitrate: .bitsPerSecond(600_000)), #"opus.bitrate: must be from 6000 to 510000 or "auto", found 600000"#),
    (.init(bitrate: .bitsPerSecond(0)), #"opus.bitrate: must be from 6000 to 510000 or "auto", found 0"#),
    (.init(expectedLoss: 250), "opus.expectedLoss: must be from 0 to 100, found 250"),
    (
        .init(application: "speech"),
        #"opus.application: must be one of "voip", "audio", "restricted-lowdelay", found "speech""#
    ),
    (
        .init(maxBandwidth: "NB"),
        #"opus.maxBandwidth: must be one of "auto", "narrowband", "mediumband", "wideband", "superwideband", "fullband", found "NB""#
    ),
    (
        .init(sampleRate: .hertz(12_000)),
        #"opus.sampleRate: must be one of 8000, 16000, 24000, 48000 or "auto", found 12000"#
    )
]

@Test(arguments: badRequestValues)
func badRequestOpusValuesAre400NamingTheKey(options: OpusOptions, message: String) {
    let error = #expect(throws: GatewayError.self) { try Gateway.opusOverrides(options) }
    #expect(error?.refusal == .invalid && error?.irisCode == -103)
    #expect(error?.message == message)
}

@Test func noRequestOpusIsNoOverride() throws {
    #expect(try Gateway.opusOverrides(nil) == nil)
}

// MARK: The snapshot's view

/// Settings, the call's PCM rate, and how the snapshot shows them.
private let effectiveRows: [(AudioCodec.OpusSettings, Int, OpusOptions)] = [
    (
        .init(), 8000,
        .init(
            complexity: 5, bitrate: .auto, fec: true, expectedLoss: 5, dtx: false, application: "voip",
            maxBandwidth: "narrowband", sampleRate: .hertz(8000))
    ),
    (
        .init(), 16_000,
        .init(
            complexity: 5, bitrate: .auto, fec: true, expectedLoss: 5, dtx: false, application: "voip",
            maxBandwidth: "wideband", sampleRate: .hertz(16_000))
    ),
    // A band above what the PCM holds codes what it holds.
    (
        .init(maxBandwidth: .fullband), 8000,
        .init(
            complexity: 5, bitrate: .auto, fec: true, expectedLoss: 5, dtx: false, application: "voip",
            maxBandwidth: "narrowband", sampleRate: .hertz(8000))
    ),
    (
        .init(
            complexity: 1, bitrate: 8000, inbandFEC: false, expectedLossPercent: 0, dtx: true,
            application: .restrictedLowDelay,
            maxBandwidth: .narrowband), 16_000,
        .init(
            complexity: 1, bitrate: .bitsPerSecond(8000), fec: false, expectedLoss: 0, dtx: true,
            application: "restricted-lowdelay",
            maxBandwidth: "narrowband", sampleRate: .hertz(16_000))
    ),
    // The encoder above the call's rate: the band its own rate holds, and that rate.
    (
        .init(complexity: 10, bitrate: 32_000, sampleRate: 48_000), 8000,
        .init(
            complexity: 10, bitrate: .bitsPerSecond(32_000), fec: true, expectedLoss: 5, dtx: false,
            application: "voip", maxBandwidth: "fullband", sampleRate: .hertz(48_000))
    ),
    (
        .init(maxBandwidth: .wideband, sampleRate: 24_000), 16_000,
        .init(
            complexity: 5, bitrate: .auto, fec: true, expectedLoss: 5, dtx: false, application: "voip",
            maxBandwidth: "wideband", sampleRate: .hertz(48_000))
    )
]

@Test(arguments: effectiveRows)
func theSnapshotShowsEveryKeyInEffect(settings: AudioCodec.OpusSettings, sampleRate: Int, expected: OpusOptions) {
    #expect(OpusOptions(effective: settings, sampleRate: sampleRate) == expected)
}
