import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

// The platform leg's Opus settings reach the encoder: read back from libopus, and seen in
// what a real `MediaEngine` call on 127.0.0.1 sends the app (payload sizes, the TOC byte's
// bandwidth, packets that decode). Tables at file scope (as static members the compiler
// reports a circular reference).

/// Settings, the call's PCM rate, and what libopus must hold (bitrate nil: libopus's own).
private let encoderRows: [(AudioCodec.OpusSettings, Int, OpusEncoder.Configuration)] = [
    (
        .init(), 8000,
        .init(
            sampleRate: 8000, application: .voip, complexity: 5, bitrate: nil, inbandFEC: true, expectedLossPercent: 5,
            dtx: false,
            maxBandwidth: .narrowband)
    ),
    (
        .init(), 16_000,
        .init(
            sampleRate: 16_000, application: .voip, complexity: 5, bitrate: nil, inbandFEC: true,
            expectedLossPercent: 5, dtx: false,
            maxBandwidth: .wideband)
    ),
    (
        .init(
            complexity: 0, bitrate: 6000, inbandFEC: false, expectedLossPercent: 0, dtx: true, application: .audio,
            maxBandwidth: .mediumband), 8000,
        .init(
            sampleRate: 8000, application: .audio, complexity: 0, bitrate: 6000, inbandFEC: false,
            expectedLossPercent: 0, dtx: true,
            maxBandwidth: .mediumband)
    ),
    (
        .init(
            complexity: 10, bitrate: 510_000, expectedLossPercent: 100, application: .restrictedLowDelay,
            maxBandwidth: .fullband), 16_000,
        // libopus holds a mono stream to 300 kbit/s (510 kbit/s is the stereo ceiling).
        .init(
            sampleRate: 16_000, application: .restrictedLowDelay, complexity: 10, bitrate: 300_000, inbandFEC: true,
            expectedLossPercent: 100,
            dtx: false, maxBandwidth: .fullband)
    ),
    // The encoder above the call's rate: automatic bandwidth is what its own rate holds.
    (
        .init(complexity: 10, bitrate: 32_000, sampleRate: 48_000), 8000,
        .init(
            sampleRate: 48_000, application: .voip, complexity: 10, bitrate: 32_000, inbandFEC: true,
            expectedLossPercent: 5, dtx: false, maxBandwidth: .fullband)
    ),
    (
        .init(sampleRate: 24_000), 16_000,
        .init(
            sampleRate: 48_000, application: .voip, complexity: 5, bitrate: nil, inbandFEC: true,
            expectedLossPercent: 5, dtx: false, maxBandwidth: .fullband)
    )
]

/// `sampleRate` asked for, the call's rate, the rate the encoder runs at: never below the
/// call's, and one the call's rate reaches by 1, 2, 3 or 6.
private let codecRateRows: [(Int?, Int, Int)] = [
    (nil, 8000, 8000), (nil, 16_000, 16_000), (8000, 8000, 8000), (16_000, 8000, 16_000), (24_000, 8000, 24_000),
    (48_000, 8000, 48_000), (8000, 16_000, 16_000), (16_000, 16_000, 16_000), (24_000, 16_000, 48_000),
    (48_000, 16_000, 48_000), (12_000, 8000, 16_000), (48_000, 48_000, 48_000)
]

@Test(arguments: codecRateRows)
func theEncoderRateFollowsTheSetting(asked: Int?, call: Int, encoder: Int) {
    #expect(AudioCodec.OpusSettings(sampleRate: asked).codecSampleRate(callSampleRate: call) == encoder)
}

/// Toward an Opus trunk, `maxplaybackrate` caps a fixed encoder rate at the lowest that holds it.
@Test func theReceiversPlaybackRateCapsTheEncoderRate() {
    func rate(_ fmtp: String, _ asked: Int?) -> Int? {
        OpusFormatParameters(fmtp: fmtp).encoding(.init(sampleRate: asked)).sampleRate
    }
    #expect(rate("maxplaybackrate=16000", 48_000) == 16_000)
    #expect(rate("maxplaybackrate=44100", 48_000) == 48_000)
    #expect(rate("maxplaybackrate=8000", 24_000) == 8000)
    #expect(rate("maxplaybackrate=48000", 24_000) == 24_000)
    #expect(rate("maxplaybackrate=16000", nil) == nil)
    #expect(rate("", 48_000) == 48_000)
}

@Test(arguments: encoderRows)
func theCallsEncoderHoldsTheSettings(
    settings: AudioCodec.OpusSettings, sampleRate: Int, expected: OpusEncoder.Configuration
) throws {
    let codec = try LegCodec(.opus(settings), sampleRate: sampleRate)
    var held = try #require(codec.opusSettingsInEffect)
    if expected.bitrate == nil {
        #expect((held.bitrate ?? 0) > 0, "libopus's own bitrate")
        held.bitrate = nil
    }
    #expect(held == expected)
}

/// RFC 6716 §3.1: the TOC byte's configuration number (its top five bits) and the
/// bandwidth it codes, written out here to check libopus's reading.
private func tocBandwidth(_ packet: [UInt8]) -> Opus.Bandwidth? {
    guard let toc = packet.first else { return nil }
    switch toc >> 3 {
    case 0...3: return .narrowband  // SILK-only
    case 4...7: return .mediumband
    case 8...11: return .wideband
    case 12...13: return .superwideband  // Hybrid
    case 14...15: return .fullband
    case 16...19: return .narrowband  // CELT-only
    case 20...23: return .wideband
    case 24...27: return .superwideband
    default: return .fullband
    }
}

/// Something like speech for the encoder to spend its bits on: a 140 Hz voice's harmonics
/// up to just below half the rate under a syllable envelope, plus noise (a fixed seed).
private func voice(sampleRate: Int, count: Int, offset: Int) -> [Int16] {
    var seed = UInt32(truncatingIfNeeded: offset &* 2_654_435_761 &+ 12_345)
    return (0..<count).map { i in
        let t = Double(offset + i) / Double(sampleRate)
        let envelope = 0.6 + 0.4 * sin(2 * Double.pi * 3 * t)
        var s = 0.0
        var k = 1.0
        while 140 * k < 0.45 * Double(sampleRate) {
            s += 2200 / k.squareRoot() * sin(2 * Double.pi * 140 * k * t + k)
            k += 1
        }
        seed = seed &* 1_664_525 &+ 1_013_904_223
        let noise = (Double(seed >> 16) / 65_536 - 0.5) * 2500
        return Int16(clamping: Int(envelope * s * 0.5 + noise))
    }
}

/// One second of `voice` in from the carrier (`trunk`, PCMU or G.722) through a call whose
/// platform leg is Opus with `settings`; the Opus payloads the app got (after the first 10:
/// the jitter buffer's start and the encoder's warm-up).
private func platformPayloads(
    trunk: AudioCodec, trunkPayloadType: UInt8, settings: AudioCodec.OpusSettings
) async throws -> [[UInt8]] {
    let engine = try TestMediaEngine.make()
    defer { engine.shutdown() }
    let carrier = try RTPTestPeer(), app = try RTPTestPeer()
    let call = try engine.openCall(
        MediaCallConfiguration(
            trunk: .init(codec: trunk, payloadType: trunkPayloadType, remote: carrier.address),
            platform: .init(codec: .opus(settings), payloadType: 111, remote: app.address)))
    defer { call.close() }
    let rate = trunk == .g722 ? 16_000 : 8000
    let encoder = try TestCodec(trunk, sampleRate: rate)
    await paced(50) { n in
        carrier.send(
            payloadType: trunkPayloadType,
            payload: encoder.encode(
                voice(
                    sampleRate: rate, count: encoder.frameSamples,
                    offset: n * encoder.frameSamples)),
            marker: n == 0, to: call.address(of: .trunk))
        carrier.timestamp &+= 160
        app.drain()
    }
    _ = await eventually(timeout: 2, drain: app.drain) { app.packets(payloadType: 111).count >= 45 }
    return app.packets(payloadType: 111).prefix(50).dropFirst(10).map(\.payload)
}

/// The payloads decode with a plain `OpusDecoder` to audio with something in it.
private func decodable(_ payloads: [[UInt8]], sampleRate: Int32) throws -> Bool {
    let decoder = try OpusDecoder(sampleRate: sampleRate)
    var pcm: [Int16] = []
    var energy = 0.0
    for p in payloads {
        guard (try? decoder.decode(p, into: &pcm)) == Int(sampleRate) / 50 else { return false }
        energy += pcm.reduce(0.0) { $0 + Double($1) * Double($1) }
    }
    return energy > 0
}

/// The trunk, the settings, and the bandwidth every packet must code.
private let bandwidthRows: [(AudioCodec, UInt8, AudioCodec.OpusSettings, Opus.Bandwidth)] = [
    // Automatic: what the call's PCM holds.
    (.pcmu, 0, .init(), .narrowband),
    (.g722, 9, .init(), .wideband),
    // A G.722 call held to narrowband.
    (.g722, 9, .init(maxBandwidth: .narrowband), .narrowband),
    // Above what 8 kHz PCM holds: still narrowband.
    (.pcmu, 0, .init(maxBandwidth: .fullband), .narrowband),
    // The encoder at 48 kHz on a G.722 call, held to wideband.
    (.g722, 9, .init(maxBandwidth: .wideband, sampleRate: 48_000), .wideband)
]

/// Serialized: each is a second of real-time media, like `MediaEngineCallTests`.
@Suite(.serialized) struct OpusSettingsMediaTests {
    @Test func theBitrateSetsThePayloadSize() async throws {
        let low = try await platformPayloads(trunk: .pcmu, trunkPayloadType: 0, settings: .init(bitrate: 8000))
        let high = try await platformPayloads(trunk: .pcmu, trunkPayloadType: 0, settings: .init(bitrate: 32_000))
        #expect(low.count >= 35 && high.count >= 35, "\(low.count) and \(high.count) packets")
        let lowMean = Double(low.map(\.count).reduce(0, +)) / Double(max(low.count, 1))
        let highMean = Double(high.map(\.count).reduce(0, +)) / Double(max(high.count, 1))
        // 8 kbit/s is 20 bytes a 20 ms frame; 32 kbit/s allows 80 (measured: about 18 and 80).
        #expect(lowMean <= 26, "8 kbit/s: \(lowMean) bytes a packet")
        #expect(highMean >= 2 * lowMean, "32 kbit/s: \(highMean) bytes a packet against \(lowMean)")
        #expect(try decodable(low, sampleRate: 8000) && decodable(high, sampleRate: 8000))
    }

    @Test(arguments: bandwidthRows)
    func theMaximumBandwidthShowsInTheTOC(
        trunk: AudioCodec, pt: UInt8, settings: AudioCodec.OpusSettings, band: Opus.Bandwidth
    ) async throws {
        let payloads = try await platformPayloads(trunk: trunk, trunkPayloadType: pt, settings: settings)
        #expect(payloads.count >= 35)
        #expect(
            payloads.allSatisfy { tocBandwidth($0) == band }, "\(payloads.map { tocBandwidth($0)?.rawValue ?? "?" })")
        #expect(payloads.allSatisfy { Opus.Bandwidth.of(packet: $0) == tocBandwidth($0) })
        #expect(try decodable(payloads, sampleRate: trunk == .g722 ? 16_000 : 8000))
    }

    @Test(arguments: [Opus.Application.voip, .audio, .restrictedLowDelay])
    func everyApplicationEncodesDecodableOpus(application: Opus.Application) async throws {
        let payloads = try await platformPayloads(
            trunk: .g722, trunkPayloadType: 9, settings: .init(application: application))
        #expect(payloads.count >= 35)
        #expect(try decodable(payloads, sampleRate: 16_000))
        if application == .restrictedLowDelay {
            // CELT only (TOC configurations 16-31): no SILK, no hybrid.
            #expect(payloads.allSatisfy { ($0.first ?? 0) >> 3 >= 16 }, "\(payloads.map { ($0.first ?? 0) >> 3 })")
        } else {
            #expect(payloads.allSatisfy { tocBandwidth($0) == .wideband })
        }
    }
}
