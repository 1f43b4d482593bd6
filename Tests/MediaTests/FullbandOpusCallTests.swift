import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

/// A G.711 call whose platform Opus runs at 48 kHz (`OpusSettings.sampleRate`), through a real
/// `MediaEngine` on 127.0.0.1, against the same call at the default: tones cross both ways at
/// once, and the app's packets say the band the encoder ran at. Serialized: a second of
/// real-time media each, like `MediaEngineCallTests`.
@Suite(.serialized) struct FullbandOpusCallTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var settings: AudioCodec.OpusSettings
        /// The bandwidth every packet toward the app must say, and the Opus TOC
        /// configurations (RFC 6716 §3.1) that say it.
        var band: Opus.Bandwidth
        var configurations: ClosedRange<UInt8>
        var testDescription: String { "PCMU <-> opus at \(settings.sampleRate.map(String.init) ?? "the call's rate")" }
    }

    static let cases = [
        // Hybrid fullband (14-15) or CELT fullband (28-31); SILK fullband does not exist.
        Case(settings: .init(sampleRate: 48_000), band: .fullband, configurations: 14...31),
        // The default: the call's 8 kHz, SILK narrowband (0-3).
        Case(settings: .init(), band: .narrowband, configurations: 0...3)
    ]

    @Test(arguments: cases)
    func tonesCrossBothWays(_ c: Case) async throws {
        let (engine, carrier, app, call) = try openBridge { $0.platform.codec = .opus(c.settings) }
        defer { engine.shutdown() }
        defer { call.close() }
        // The carrier says 1 kHz in PCMU; the app 440 Hz in Opus from 48 kHz audio, as a browser does.
        try await pacedTones(50, carrier: carrier, app: app, call: call, appRate: 48_000)
        func drainBoth() {
            carrier.drain()
            app.drain()
        }
        _ = await eventually(timeout: 2, drain: drainBoth) {
            app.packets(payloadType: 111).count >= 45 && carrier.packets(payloadType: 0).count >= 45
        }

        // Toward the app: the band the encoder ran at, a 48 kHz clock, the tone.
        let toApp = Array(app.packets(payloadType: 111).prefix(50))
        #expect(toApp.count >= 45, "\(toApp.count) packets to the app")
        let configurations = toApp.dropFirst(10).map { $0.payload[0] >> 3 }
        #expect(configurations.allSatisfy { c.configurations.contains($0) }, "TOC configurations \(configurations)")
        #expect(toApp.dropFirst(10).allSatisfy { Opus.Bandwidth.of(packet: $0.payload) == c.band })
        #expect(zip(toApp, toApp.dropFirst()).allSatisfy { $1.timestamp == $0.timestamp &+ 960 })
        // The app decodes at 48 kHz, as a browser does.
        let decoder = try TestCodec(.opus(.init()), sampleRate: 48_000)
        let heard = toApp.dropFirst(10).flatMap { decoder.decode($0.payload) }
        #expect(toneDominates(1000, sampleRate: 48_000, heard), "1 kHz at the app")
        // Nothing of the 1 kHz's images above the call's band (7 and 9 kHz): the upsampler
        // took them out before the encoder.
        let tone = Goertzel(frequency: 1000, sampleRate: 48_000).power(heard)
        for image in [7000.0, 9000] {
            let down = 10 * log10(tone / max(Goertzel(frequency: image, sampleRate: 48_000).power(heard), 1e-9))
            #expect(down > 30, "the image at \(Int(image)) Hz is \(down) dB down")
        }

        // Toward the carrier: the app's tone at the call's 8 kHz.
        let toCarrier = Array(carrier.packets(payloadType: 0).prefix(50))
        #expect(toCarrier.count >= 45, "\(toCarrier.count) packets to the carrier")
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        let spoken = toCarrier.dropFirst(10).flatMap { pcmu.decode($0.payload) }
        #expect(toneDominates(440, sampleRate: 8000, spoken), "440 Hz at the carrier")

        // The encoder runs at the rate asked for; the call and its decoder at 8 kHz.
        let held = try #require(LegCodec(.opus(c.settings), sampleRate: 8000).opusSettingsInEffect)
        #expect(held.sampleRate == Int32(c.settings.sampleRate ?? 8000))
        #expect(MediaCallConfiguration.callSampleRate(trunk: .pcmu, platform: .opus(c.settings)) == 8000)
        #expect(call.statistics()[.trunk]?.packetsReceived == 50)
        #expect(call.statistics()[.platform]?.packetsReceived == 50)
    }
}
