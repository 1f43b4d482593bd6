import Foundation
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// Two calls merged into a three-way call over real UDP: the two carriers and the app each
/// send a distinct tone; each hears the other two and not itself.
@Suite struct MediaConferenceTests {
    @Test func eachPartyHearsTheOtherTwoAndNotItself() async throws {
        let engine = try MediaEngine(
            configuration: .init(threads: 2, portRange: try freePortRange(count: 200), portQuarantine: 0))
        defer { engine.shutdown() }
        let carrierA = try RTPTestPeer(), carrierB = try RTPTestPeer(), app = try RTPTestPeer(),
            heldApp = try RTPTestPeer()
        let opus = AudioCodec.opus(.init())
        let configA = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0, remote: carrierA.address),
            platform: .init(codec: opus, payloadType: 111, remote: app.address))
        let configB = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0, remote: carrierB.address),
            platform: .init(codec: opus, payloadType: 111, remote: heldApp.address))
        let a = try engine.openCall(configA), b = try engine.openCall(configB)
        defer { a.close(); b.close() }
        let merged = Mutex<(any Error)??>(nil)
        a.merge(with: b, configuration: configA, heldConfiguration: configB) { error in
            merged.withLock { $0 = .some(error) }
        }
        #expect(await eventually(timeout: 5) { merged.withLock { $0 } != nil })
        #expect(merged.withLock { $0 }! == nil)

        let pcmu = try TestCodec(.pcmu, sampleRate: 8000), opusCodec = try TestCodec(opus, sampleRate: 8000)
        let senders: [(RTPTestPeer, TestCodec, UInt8, Double, SocketAddress, UInt32)] = [
            (carrierA, pcmu, 0, 500, a.trunkAddress, 160), (carrierB, pcmu, 0, 1500, b.trunkAddress, 160),
            (app, opusCodec, 111, 1000, a.platformAddress, 960)
        ]
        // Only what arrives from here on counts.
        for peer in [carrierA, carrierB, app] { peer.drain() }
        let before = [
            carrierA.packets(payloadType: 0).count, carrierB.packets(payloadType: 0).count,
            app.packets(payloadType: 111).count
        ]
        await paced(60) { n in
            for (peer, codec, pt, hz, to, step) in senders {
                peer.send(
                    payloadType: pt, payload: codec.encode(sine(hz, sampleRate: 8000, count: 160, offset: n * 160)),
                    to: to)
                peer.timestamp &+= step
            }
        }
        _ = await eventually(timeout: 2, drain: { [carrierA, carrierB, app].forEach { $0.drain() } }) {
            carrierA.packets(payloadType: 0).count >= before[0] + 50
                && carrierB.packets(payloadType: 0).count >= before[1] + 50
                && app.packets(payloadType: 111).count >= before[2] + 50
        }
        func heard(_ peer: RTPTestPeer, _ codec: TestCodec, _ pt: UInt8) -> [Int16] {
            let skip = peer === carrierA ? before[0] : peer === carrierB ? before[1] : before[2]
            // The packets of the 60 tone frames, less the start (jitter buffers filling, codecs
            // warming up); afterwards the engine keeps the streams alive with silence.
            return peer.packets(payloadType: pt).dropFirst(skip).prefix(60).dropFirst(15).flatMap {
                codec.decode($0.payload)
            }
        }
        func level(_ hz: Double, _ audio: [Int16]) -> Double {
            Goertzel(frequency: hz, sampleRate: 8000).energyRatio(audio)
        }
        let atA = heard(carrierA, pcmu, 0), atB = heard(carrierB, pcmu, 0), atApp = heard(app, opusCodec, 111)
        #expect(
            level(1500, atA) > 0.2 && level(1000, atA) > 0.2 && level(500, atA) < 0.02,
            "carrier A: 1500 \(level(1500, atA)), 1000 \(level(1000, atA)), own 500 \(level(500, atA))")
        #expect(
            level(500, atB) > 0.2 && level(1000, atB) > 0.2 && level(1500, atB) < 0.02,
            "carrier B: 500 \(level(500, atB)), 1000 \(level(1000, atB)), own 1500 \(level(1500, atB))")
        #expect(
            level(500, atApp) > 0.2 && level(1500, atApp) > 0.2 && level(1000, atApp) < 0.02,
            "app: 500 \(level(500, atApp)), 1500 \(level(1500, atApp)), own 1000 \(level(1000, atApp))")

        // Closing the held call ends the bridge: A carries on as a plain call.
        b.close()
        carrierA.drain()
        let alone = carrierA.packets(payloadType: 0).count
        await paced(20) { n in
            app.send(
                payloadType: 111, payload: opusCodec.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                to: a.platformAddress)
            app.timestamp &+= 960
        }
        _ = await eventually(timeout: 1, drain: carrierA.drain) { carrierA.packets(payloadType: 0).count >= alone + 15 }
        #expect(carrierA.packets(payloadType: 0).count >= alone + 15)
    }

    @Test func mergingACallWithItselfIsRefused() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let peer = try RTPTestPeer()
        let config = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0, remote: peer.address),
            platform: .init(codec: .opus(.init()), payloadType: 111, remote: peer.address))
        let a = try engine.openCall(config)
        defer { a.close() }
        let result = Mutex<(any Error)?>(nil)
        a.merge(with: a, configuration: config, heldConfiguration: config) { e in result.withLock { $0 = e } }
        #expect(result.withLock { $0 as? MediaMergeError } == .sameCall)
    }
}
