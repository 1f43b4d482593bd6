import Foundation
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// A sink that keeps what it is handed (a recording, a stream, a detector would copy too).
final class CollectingSink: MediaAudioSink {
    let frames = Mutex<(inbound: [Int16], outbound: [Int16], ticks: Int, rate: Int)>(([], [], 0, 0))
    func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        frames.withLock {
            $0.inbound += inbound
            $0.outbound += outbound
            $0.ticks += 1
            $0.rate = sampleRate
        }
    }
}

/// A source playing a tone (a voice agent would play its queued speech).
final class ToneSource: MediaAudioSource {
    let frequency: Double
    let played = Atomic<Int>(0)
    init(_ frequency: Double) { self.frequency = frequency }
    func mediaAudioFrame(into frame: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) -> Bool {
        let n = played.add(1, ordering: .relaxed).oldValue
        let pcm = sine(frequency, sampleRate: sampleRate, count: frame.count, offset: n * frame.count)
        for i in 0..<frame.count { frame[i] = pcm[i] }
        return true
    }
}

/// The one way a call's decoded audio leaves the media thread (recording, streams, AMD,
/// SIPREC) and the one way audio other than the platform leg's reaches the trunk.
@Suite(.serialized) struct CallAudioTapTests {
    /// The carrier's tone reaches the sink as the inbound track; what the app sends the
    /// trunk is the outbound track; both in step, 20 ms a tick.
    @Test func sinksGetBothTracksInStep() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { engine.shutdown() }
        defer { call.close() }
        let sink = CollectingSink()
        call.addAudioSink(sink)
        try await pacedTones(50, carrier: carrier, app: app, call: call, appRate: 8000)
        let got = await eventually(timeout: 3) { sink.frames.withLock { $0.ticks >= 45 } }
        #expect(got)
        let f = sink.frames.withLock { $0 }
        #expect(f.rate == 8000)
        #expect(f.inbound.count == f.outbound.count)
        #expect(toneDominates(1000, sampleRate: 8000, Array(f.inbound.dropFirst(1600).prefix(4000))))
        #expect(toneDominates(440, sampleRate: 8000, Array(f.outbound.dropFirst(1600).prefix(4000))))
    }

    /// A relaying call (PCMU both legs) starts transcoding when a sink is added, and the
    /// relay still carries the audio.
    @Test func aRelayingCallTranscodesOnceTapped() async throws {
        let (engine, carrier, app, call) = try openBridge {
            $0.platform = .init(codec: .pcmu, payloadType: 0, remote: $0.platform.remote)
        }
        defer { engine.shutdown() }
        defer { call.close() }
        #expect(call.statistics()[.trunk]?.playout == .relay)
        let sink = CollectingSink()
        call.addAudioSink(sink)
        #expect(call.statistics()[.trunk]?.playout != .relay)
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        await paced(40) { n in
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                marker: n == 0, to: call.trunkAddress)
            carrier.timestamp &+= 160
            app.drain()
        }
        #expect(await eventually(timeout: 3, drain: app.drain) { app.packets(payloadType: 0).count >= 35 })
        #expect(await eventually(timeout: 3) { sink.frames.withLock { $0.ticks >= 35 } })
        let inbound = sink.frames.withLock { $0.inbound }
        #expect(toneDominates(1000, sampleRate: 8000, Array(inbound.dropFirst(1600).prefix(3200))))
        // Removed: no more frames.
        call.removeAudioSink(sink)
        _ = call.statistics()
        let ticks = sink.frames.withLock { $0.ticks }
        _ = call.statistics()
        #expect(sink.frames.withLock { $0.ticks } <= ticks + 1)
    }

    /// A source replaces the platform leg: the trunk hears it (encoded for the trunk, paced
    /// by the tick), and nothing goes out on the platform leg.
    @Test func aSourcePlaysToTheTrunkInsteadOfThePlatformLeg() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { engine.shutdown() }
        defer { call.close() }
        let source = ToneSource(700), sink = CollectingSink()
        call.setAudioSource(source)
        call.addAudioSink(sink)
        // statistics() runs on the media thread after the changes above: once it answers,
        // the source is in place, and the carrier's first packet cannot reach the app.
        _ = call.statistics()
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        await paced(30) { n in
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                marker: n == 0, to: call.trunkAddress)
            carrier.timestamp &+= 160
            carrier.drain()
        }
        #expect(await eventually(timeout: 3, drain: carrier.drain) { carrier.packets(payloadType: 0).count >= 25 })
        let audio = carrier.packets(payloadType: 0).dropFirst(5).prefix(20).flatMap { pcmu.decode($0.payload) }
        #expect(toneDominates(700, sampleRate: 8000, audio))
        app.drain()
        #expect(app.packets(payloadType: 111).isEmpty, "the platform leg stays silent")
        let outbound = sink.frames.withLock { $0.outbound }
        #expect(toneDominates(700, sampleRate: 8000, Array(outbound.suffix(1600))))
    }

    @Test(arguments: [(8000, 16000), (16000, 8000), (8000, 8000)])
    func rateConversionKeepsATone(_ rates: (Int, Int)) {
        let pcm = sine(500, sampleRate: rates.0, count: rates.0 / 5, offset: 0)
        let out = pcm.withUnsafeBufferPointer { PCMRateConversion.convert($0, from: rates.0, to: rates.1) }
        #expect(out.count == rates.1 / 5)
        #expect(toneDominates(500, sampleRate: Double(rates.1), out))
    }
}
