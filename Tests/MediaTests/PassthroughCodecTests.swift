import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

/// Passthrough for every codec the two legs share (Opus, G.722, PCMA), each leg on its own
/// payload type; and an Opus-Opus call that is tapped (a recording, AMD) transcodes at
/// 16 kHz and still carries the tone, over real UDP on 127.0.0.1.
@Suite(.serialized) struct PassthroughCodecTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var codec: AudioCodec
        var trunkPayloadType: UInt8
        var platformPayloadType: UInt8
        var testDescription: String { "\(codec) \(trunkPayloadType) -> \(platformPayloadType)" }
    }

    static let cases: [Case] = [
        Case(codec: .opus(.init()), trunkPayloadType: 96, platformPayloadType: 111),
        Case(codec: .g722, trunkPayloadType: 9, platformPayloadType: 9),
        Case(codec: .pcma, trunkPayloadType: 8, platformPayloadType: 8)
    ]

    static func open(_ c: Case) throws -> (MediaEngine, RTPTestPeer, RTPTestPeer, MediaCall) {
        try openBridge {
            $0.trunk = .init(codec: c.codec, payloadType: c.trunkPayloadType, remote: $0.trunk.remote)
            $0.platform = .init(codec: c.codec, payloadType: c.platformPayloadType, remote: $0.platform.remote)
        }
    }

    /// The app's packets reach the carrier payload for payload, under the trunk's payload
    /// type, our SSRC, contiguous sequence numbers and the codec's timestamp spacing; and
    /// the other way.
    @Test(arguments: cases)
    func packetsCrossUnchangedUnderEachLegsPayloadType(_ c: Case) async throws {
        let (engine, carrier, app, call) = try Self.open(c)
        defer { engine.shutdown() }
        defer { call.close() }
        #expect(call.statistics()[.trunk]?.playout == .relay)
        let step = UInt32(c.codec.rtpClockRate / 50)
        let fromApp = (0..<40).map { _ in (0..<(20 + Int.random(in: 0...60))).map { _ in UInt8.random(in: 0...255) } }
        let fromCarrier = (0..<40).map { _ in (0..<80).map { _ in UInt8.random(in: 0...255) } }
        await paced(fromApp.count) { n in
            app.send(
                payloadType: c.platformPayloadType, payload: fromApp[n], marker: n == 0, to: call.platformAddress)
            app.timestamp &+= step
            carrier.send(
                payloadType: c.trunkPayloadType, payload: fromCarrier[n], marker: n == 0, to: call.trunkAddress)
            carrier.timestamp &+= step
        }
        _ = await eventually(
            timeout: 2,
            drain: {
                carrier.drain(); app.drain()
            }
        ) {
            carrier.packets(payloadType: c.trunkPayloadType).count >= 40
                && app.packets(payloadType: c.platformPayloadType).count >= 40
        }
        let atCarrier = carrier.packets(payloadType: c.trunkPayloadType)
        #expect(atCarrier.map(\.payload) == fromApp)
        #expect(
            zip(atCarrier, atCarrier.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ step
            })
        #expect(atCarrier.first?.ssrc != app.ssrc)
        #expect(app.packets(payloadType: c.platformPayloadType).map(\.payload) == fromCarrier)
    }

    /// Tapped, an Opus-Opus call decodes and re-encodes (the tap needs PCM) at 16 kHz: the
    /// sink hears the carrier's 6 kHz tone (above narrowband), and the app gets it too.
    @Test func aTappedOpusCallTranscodesWideband() async throws {
        let (engine, carrier, app, call) = try Self.open(Self.cases[0])
        defer { engine.shutdown() }
        defer { call.close() }
        let sink = CollectingSink()
        call.addAudioSink(sink)
        #expect(call.statistics()[.trunk]?.playout != .relay)
        let opus = try TestCodec(.opus(.init()), sampleRate: 16_000)
        await paced(50) { n in
            carrier.send(
                payloadType: 96, payload: opus.encode(sine(6000, sampleRate: 16_000, count: 320, offset: n * 320)),
                marker: n == 0, to: call.trunkAddress)
            carrier.timestamp &+= 960
            app.drain()
        }
        #expect(await eventually(timeout: 3) { sink.frames.withLock { $0.ticks >= 40 } })
        let f = sink.frames.withLock { $0 }
        #expect(f.rate == 16_000)
        #expect(toneDominates(6000, sampleRate: 16_000, Array(f.inbound.dropFirst(3200).prefix(6400))))
        _ = await eventually(timeout: 2, drain: app.drain) { app.packets(payloadType: 111).count >= 40 }
        let decoder = try TestCodec(.opus(.init()), sampleRate: 16_000)
        let heard = app.packets(payloadType: 111).prefix(50).dropFirst(10).flatMap { decoder.decode($0.payload) }
        #expect(toneDominates(6000, sampleRate: 16_000, heard))
    }
}
