import Foundation
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// Playout on arrival against the jitter buffer, through the engine over real UDP: a calm
/// stream is transcoded as it arrives, a lost Opus packet is rebuilt from the next one's
/// FEC, jitter and reordering bring the buffer in (and calm takes it out again), and a
/// stalled media thread drops the frames whose time has passed. No timing assertions:
/// what arrived, in what order, with which audio, and the legs' counters.
// Serialized for the cores: playout decisions (on arrival or buffered) follow how punctually packets come.
@Suite(.serialized) struct PlayoutEngineTests {
    /// A calm tone both ways is played on arrival the whole time; the audio is the tone.
    @Test func calmStreamsPlayOnArrival() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { call.close(); engine.shutdown() }
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000), opus = try TestCodec(.opus(.init()), sampleRate: 8000)
        await paced(50) { n in
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.trunkAddress)
            carrier.timestamp &+= 160
            app.send(
                payloadType: 111, payload: opus.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.platformAddress)
            app.timestamp &+= 960
            carrier.drain()
            app.drain()
        }
        _ = await eventually(
            timeout: 2,
            drain: {
                carrier.drain(); app.drain()
            }
        ) {
            app.packets(payloadType: 111).count >= 50 && carrier.packets(payloadType: 0).count >= 50
        }
        // On arrival, unless the machine's load held packets back past 10 ms: then the
        // buffer took over, and the leg says so.
        for (leg, s) in call.statistics() {
            #expect(s.playout == .arrival || s.playoutSwitches > 0, "\(leg): \(s)")
        }
        let toApp = app.packets(payloadType: 111), toCarrier = carrier.packets(payloadType: 0)
        #expect(
            zip(toApp, toApp.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 960
            })
        #expect(
            zip(toCarrier, toCarrier.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 160
            })
        let decoder = try TestCodec(.opus(.init()), sampleRate: 8000)
        #expect(
            toneDominates(1000, sampleRate: 8000, toApp.prefix(50).dropFirst(5).flatMap { decoder.decode($0.payload) }))
        #expect(
            toneDominates(440, sampleRate: 8000, toCarrier.prefix(50).dropFirst(5).flatMap { pcmu.decode($0.payload) }))
    }

    /// The app's Opus carries in-band FEC; one packet is lost where the tone changes from
    /// 440 Hz to 1 kHz. The frame at its place is rebuilt from the next packet (1 kHz, not
    /// a 440 Hz guess), in a contiguous stream, and counted as one concealment.
    @Test func opusFECRebuildsALostPacketOnArrival() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { call.close(); engine.shutdown() }
        let opus = try TestCodec(
            .opus(.init(bitrate: 24_000, inbandFEC: true, expectedLossPercent: 20)), sampleRate: 8000)
        let lost = 30
        await paced(60) { n in
            let pcm = sine(n < lost ? 440 : 1000, sampleRate: 8000, count: 160, offset: n * 160)
            let payload = opus.encode(pcm)
            if n == lost {
                app.sequenceNumber &+= 1
            } else {
                app.send(payloadType: 111, payload: payload, to: call.platformAddress)
            }
            app.timestamp &+= 960
            carrier.drain()
        }
        _ = await eventually(timeout: 2, drain: carrier.drain) { carrier.packets(payloadType: 0).count >= 60 }
        let out = carrier.packets(payloadType: 0)
        #expect(
            zip(out, out.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 160
            })
        let stats = try #require(call.statistics()[.platform])
        // A loaded machine can delay the sender past 10 ms: the buffer takes over (and the
        // lost frame is rebuilt from FEC there too, but its place in our output is then not
        // known to the frame). The strict checks hold for the stream that stayed on arrival.
        guard stats.playoutSwitches == 0 else { return }
        #expect(stats.concealed == 1, "\(stats)")
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        let first = try #require(out.first)
        let rebuilt = try #require(out.first { $0.timestamp == first.timestamp &+ UInt32(160 * lost) })
        let audio = pcmu.decode(rebuilt.payload)
        let high = Goertzel(frequency: 1000, sampleRate: 8000).amplitude(audio),
            low = Goertzel(frequency: 440, sampleRate: 8000).amplitude(audio)
        #expect(high > 2 * low, "the lost frame: 1 kHz \(high), 440 Hz \(low)")
    }

    /// 0-40 ms of random delay on every carrier packet (which reorders some): the stream
    /// goes through the jitter buffer, which smooths it into a contiguous tone; after a
    /// second of calm it plays on arrival again.
    @Test func jitterBringsTheBufferInAndCalmTakesItOut() async throws {
        let (engine, carrier, app, call) = try openBridge { config in config.playoutCalmPeriod = 1 }
        defer { call.close(); engine.shutdown() }
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        let jittered = 100, calm = 100
        var rng = SystemRandomNumberGenerator()
        let delays =
            (0..<jittered).map { n in n < 5 ? 0 : Double.random(in: 0...0.040, using: &rng) }
            + Array(repeating: 0, count: calm)
        let seq0 = carrier.sequenceNumber, ts0 = carrier.timestamp
        await scheduled(delays.enumerated().map { n, d in 0.020 * Double(n) + d }) { n in
            carrier.sequenceNumber = seq0 &+ UInt16(n)
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                timestamp: ts0 &+ UInt32(160 * n), to: call.trunkAddress)
            if n == jittered - 1 {
                let s = call.statistics()[.trunk]
                #expect(s?.onArrival == false, "buffered while the jitter lasts: \(String(describing: s))")
            }
            app.drain()
        }
        _ = await eventually(timeout: 2, drain: app.drain) { call.statistics()[.trunk]?.onArrival == true }
        let stats = try #require(call.statistics()[.trunk])
        #expect(stats.onArrival, "back on arrival after the calm second: \(stats)")
        #expect(stats.playoutSwitches >= 2)
        let out = app.packets(payloadType: 111)
        #expect(out.count >= jittered + calm - 20, "\(out.count) packets; \(stats)")
        #expect(zip(out, out.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
        // The jittered part, smoothed: reordered packets are played in order, few concealed.
        #expect(stats.late <= 5 && stats.concealed <= 8, "\(stats)")
        let decoder = try TestCodec(.opus(.init()), sampleRate: 8000)
        let audio = out.prefix(jittered).dropFirst(10).flatMap { decoder.decode($0.payload) }
        #expect(toneDominates(1000, sampleRate: 8000, audio))
    }

    /// A buffered call whose media thread stalls for 200 ms: the frames that piled up are
    /// played two to a tick until the buffer is back at its target, so the stall does not
    /// stay on as delay, and nothing is dropped (a contiguous stream).
    @Test func aStalledThreadCatchesUp() async throws {
        let (engine, carrier, app, call) = try openBridge { config in config.playoutOnArrival = false }
        defer { call.close(); engine.shutdown() }
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        let thread = try #require(engine.threads.first)
        let depth = Mutex<(stalled: Int, after: Int)>((0, Int.max))
        await paced(100) { n in
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.trunkAddress)
            carrier.timestamp &+= 160
            // stalls the media thread (the behaviour), not the test
            if n == 30 { thread.loop.execute { usleep(200_000) } }
            // Just after the stall (asking during it would hold this sender up too).
            if n == 43 { depth.withLock { $0.stalled = call.statistics()[.trunk]?.bufferMs ?? -1 } }
            if n == 90 { depth.withLock { $0.after = call.statistics()[.trunk]?.bufferMs ?? -1 } }
            app.drain()
        }
        _ = await eventually(timeout: 2, drain: app.drain) { app.packets(payloadType: 111).count >= 98 }
        let stats = try #require(call.statistics()[.trunk])
        #expect(stats.caughtUp > 0, "\(stats)")
        let d = depth.withLock { $0 }
        // A stall kept as delay would leave the buffer at its 40 ms target plus the 200 ms;
        // 120 leaves room for the bursts of a sender that the machine's load held back. (The
        // depth just after the stall is no reference: under load it is read late.)
        #expect(
            d.after <= 120 || stats.jitterMs > 10,
            "buffer at most \(d.stalled) ms after the stall, \(d.after) ms later; \(stats)")
        let out = app.packets(payloadType: 111)
        #expect(out.count >= 98, "\(out.count) packets for 100")
        #expect(
            zip(out, out.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 960
            })
    }
}

/// Runs `body(n)` at `times[n]` seconds from now (in time order, so a later n may go
/// first: reordering), on a thread of its own against the monotonic clock.
func scheduled(_ times: [Double], _ body: @escaping @Sendable (Int) -> Void) async {
    let order = times.indices.sorted { times[$0] < times[$1] }
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            var start = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            let base = Double(start.tv_sec) + Double(start.tv_nsec) / 1e9
            for n in order {
                let at = base + times[n]
                var t = timespec(tv_sec: Int(at), tv_nsec: Int((at - Double(Int(at))) * 1e9))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nil) == EINTR {}
                body(n)
            }
            done.resume()
        }
        thread.name = "rtp-test-scheduler"
        thread.start()
    }
}
