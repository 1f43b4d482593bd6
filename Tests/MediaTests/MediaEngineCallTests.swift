import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

/// Calls through the media engine over real UDP on 127.0.0.1: a "carrier" socket on the
/// trunk leg and an "app" socket on the platform leg send paced 20 ms RTP and check what
/// the engine sends them. Every wait has a timeout; assertions are on what arrived, not
/// on when. Serialized: each test is real time, and a few in parallel on a small machine
/// would stall each other's media threads and senders.
@Suite(.serialized) struct MediaEngineCallTests {
    /// One tone through a transcoding call, in one direction.
    struct ToneCase: Sendable, CustomTestStringConvertible {
        var trunk: AudioCodec
        var trunkPayloadType: UInt8
        /// The leg the tone enters on.
        var from: MediaLeg
        var frequency: Double

        var testDescription: String {
            "\(from == .trunk ? "\(trunk) -> opus" : "opus -> \(trunk)") \(Int(frequency)) Hz"
        }
        /// The call's PCM rate: G.722 bridged to Opus runs wideband.
        var sampleRate: Int { trunk == .g722 ? 16_000 : 8000 }
    }

    static let toneCases: [ToneCase] = [
        ToneCase(trunk: .pcmu, trunkPayloadType: 0, from: .trunk, frequency: 1000),
        ToneCase(trunk: .pcma, trunkPayloadType: 8, from: .trunk, frequency: 1000),
        ToneCase(trunk: .pcmu, trunkPayloadType: 0, from: .platform, frequency: 440),
        ToneCase(trunk: .pcma, trunkPayloadType: 8, from: .platform, frequency: 440),
        ToneCase(trunk: .g722, trunkPayloadType: 9, from: .trunk, frequency: 1000),
        ToneCase(trunk: .g722, trunkPayloadType: 9, from: .platform, frequency: 1000),
        // Above the 4 kHz narrowband limit: only a wideband chain carries it.
        ToneCase(trunk: .g722, trunkPayloadType: 9, from: .trunk, frequency: 6000),
        ToneCase(trunk: .g722, trunkPayloadType: 9, from: .platform, frequency: 6000)
    ]

    /// 1 s of a tone in on one leg comes out on the other, re-encoded, as a contiguous
    /// stream whose decoded audio is mostly that tone.
    @Test(arguments: toneCases)
    func toneCrossesTheCall(_ c: ToneCase) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let opus = AudioCodec.opus(.init())
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: c.trunk, payloadType: c.trunkPayloadType, remote: carrier.address),
                platform: .init(codec: opus, payloadType: 111, remote: app.address)))
        defer { call.close() }
        let (source, sink) = c.from == .trunk ? (carrier, app) : (app, carrier)
        let (sourceCodec, sinkCodec) = c.from == .trunk ? (c.trunk, opus) : (opus, c.trunk)
        let (sourcePT, sinkPT) = c.from == .trunk ? (c.trunkPayloadType, UInt8(111)) : (UInt8(111), c.trunkPayloadType)
        let encoder = try TestCodec(sourceCodec, sampleRate: c.sampleRate)
        let step = UInt32(sourceCodec.rtpClockRate / 50)

        await paced(50) { n in
            let pcm = sine(
                c.frequency, sampleRate: c.sampleRate, count: encoder.frameSamples, offset: n * encoder.frameSamples)
            source.send(
                payloadType: sourcePT, payload: encoder.encode(pcm), marker: n == 0, to: call.address(of: c.from))
            source.timestamp &+= step
            sink.drain()
        }
        // Read before the stream's end, which the jitter buffer conceals as an underrun.
        let concealed = call.statistics()[c.from]?.concealed ?? -1
        _ = await eventually(timeout: 2, drain: sink.drain) { sink.packets(payloadType: sinkPT).count >= 45 }

        let packets = sink.packets(payloadType: sinkPT)
        #expect(packets.count >= 45, "\(packets.count) packets out")
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
        let decoder = try TestCodec(sinkCodec, sampleRate: c.sampleRate)
        // The first frames hold the jitter buffer's start and the codecs' warm-up.
        // Only the packets of the 1 s sent: after it the engine keeps the stream alive with silence.
        let audio = packets.prefix(50).dropFirst(10).flatMap { decoder.decode($0.payload) }
        let ratio = Goertzel(frequency: c.frequency, sampleRate: Double(c.sampleRate)).energyRatio(audio)
        // Per 20 ms frame: which ones do not carry the tone (a diagnosis when it fails).
        let frame = sinkCodec.rtpClockRate == 48_000 ? c.sampleRate / 50 : decoder.frameSamples
        let weak = stride(from: 0, to: audio.count - frame + 1, by: frame).enumerated().compactMap {
            i, start -> String? in
            let r = Goertzel(frequency: c.frequency, sampleRate: Double(c.sampleRate)).energyRatio(
                Array(audio[start..<(start + frame)]))
            return r < 0.3 ? "\(i):\(String(format: "%.2f", r))" : nil
        }
        #expect(
            ratio > 0.3 && toneDominates(c.frequency, sampleRate: Double(c.sampleRate), audio),
            "\(Int(c.frequency)) Hz energy ratio \(ratio); weak frames \(weak); lost \(call.statistics()[c.from]?.packetsLost ?? -1)"
        )
        let stats = call.statistics()
        #expect(stats[c.from]?.packetsReceived == 50)
        #expect(stats[c.from]?.packetsLost == 0)
        // 0 unless a tick or a send was held up by a busy machine.
        #expect((0...5).contains(concealed), "\(concealed) frames concealed")
    }

    /// Same codec both sides: each packet is relayed as it arrives, payload untouched,
    /// under our SSRC with contiguous sequence numbers and the source's timestamp spacing.
    @Test(arguments: [MediaLeg.trunk, .platform])
    func passthroughRelaysEveryPacket(from: MediaLeg) async throws {
        let (engine, carrier, app, call) = try openBridge {
            $0.platform = .init(codec: .pcmu, payloadType: 0, remote: $0.platform.remote)
        }
        defer { engine.shutdown() }
        defer { call.close() }
        let (source, sink) = from == .trunk ? (carrier, app) : (app, carrier)
        let payloads = (0..<50).map { _ in (0..<160).map { _ in UInt8.random(in: 0...255) } }

        await paced(payloads.count) { n in
            let payload = payloads[n]
            source.send(payloadType: 0, payload: payload, marker: n == 0, to: call.address(of: from))
            source.timestamp &+= 160
        }
        _ = await eventually(timeout: 2, drain: sink.drain) { sink.received.count >= 50 }

        let out = sink.received
        #expect(out.count == 50)
        #expect(out.map(\.payload) == payloads)
        #expect(out.allSatisfy { $0.payloadType == 0 })
        #expect(Set(out.map(\.ssrc)).count == 1)
        #expect(out.first?.ssrc != source.ssrc)
        #expect(out.first?.marker == true)
        #expect(
            zip(out, out.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 160
            })
        #expect(call.statistics()[from.other]?.packetsSent == 50)
    }

    /// The carrier sends `1234#` as RFC 4733 (no marker bits) between PCMU frames: the
    /// engine reports each digit once, in order, and the app gets the digits again as
    /// telephone-events on its own (48 kHz) clock.
    @Test func rfc4733DigitsAreReportedAndRegenerated() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let log = MediaEventLog()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, telephoneEventPayloadType: 101, remote: carrier.address),
                platform: .init(
                    codec: .opus(.init()), payloadType: 111, telephoneEventPayloadType: 101, remote: app.address)),
            events: log.append)
        defer { call.close() }
        // The carrier's schedule, worked out beforehand: a telephone-event report when one
        // is due, else a frame of silence.
        var sender = DTMFSender()
        try sender.enqueue("1234#")
        let first = carrier.timestamp
        let schedule = (0..<60).map { n in sender.tick(timestamp: first &+ UInt32(n * 160)) }
        #expect(sender.isIdle)
        let silence = [UInt8](repeating: 0xFF, count: 160)

        await paced(schedule.count) { n in
            if let event = schedule[n] {
                carrier.send(
                    payloadType: 101, payload: event.report.serialize(), marker: false, timestamp: event.timestamp,
                    to: call.trunkAddress)
            } else {
                carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
            }
            carrier.timestamp &+= 160
            app.drain()
        }
        let regenerated = await eventually(timeout: 2, drain: app.drain) {
            decodeTelephoneEvents(app.packets(payloadType: 101), clockRate: 48_000).count >= 5
        }

        #expect(log.digits(on: .trunk) == "1234#")
        let durations = log.all.compactMap { if case .dtmf(_, _, let ms) = $0 { ms } else { nil } }
        #expect(durations.allSatisfy { (80...120).contains($0) }, "\(durations)")
        #expect(regenerated)
        #expect(decodeTelephoneEvents(app.packets(payloadType: 101), clockRate: 48_000) == "1234#")
        #expect(call.statistics()[.trunk]?.dtmfDigits == 5)
    }

    /// `sendDTMF` on a leg sends RFC 4733 events there that a receiver decodes to the same
    /// digits, in the leg's own clock (8 kHz toward the carrier, 48 kHz toward the app),
    /// while the other side sends audio.
    @Test(arguments: [MediaLeg.trunk, .platform])
    func sendDTMFReachesThePeer(on leg: MediaLeg) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, telephoneEventPayloadType: 101, remote: carrier.address),
                platform: .init(
                    codec: .opus(.init()), payloadType: 111, telephoneEventPayloadType: 101, remote: app.address)))
        defer { call.close() }
        let (talker, listener) = leg == .trunk ? (app, carrier) : (carrier, app)
        let codec = try TestCodec(leg == .trunk ? .opus(.init()) : .pcmu, sampleRate: 8000)
        let (talkerPT, step): (UInt8, UInt32) = leg == .trunk ? (111, 960) : (0, 160)
        let clock = leg == .trunk ? 8000 : 48_000

        await paced(60) { n in
            if n == 5 { try? call.sendDTMF("1234#", on: leg) }
            talker.send(
                payloadType: talkerPT, payload: codec.encode([Int16](repeating: 0, count: 160)),
                to: call.address(of: leg.other))
            talker.timestamp &+= step
            listener.drain()
        }
        _ = await eventually(timeout: 2, drain: listener.drain) {
            decodeTelephoneEvents(listener.packets(payloadType: 101), clockRate: clock).count >= 5
        }
        let events = listener.packets(payloadType: 101)
        #expect(decodeTelephoneEvents(events, clockRate: clock) == "1234#")
        // One marker per digit (RFC 4733 §2.5.1.1).
        #expect(events.filter(\.marker).count == 5)
    }

    /// `sendDTMF` toward a side that gets no audio yet (the app has not started talking):
    /// the digits still start, end and follow each other.
    @Test func sendDTMFWithoutAudioEnds() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, telephoneEventPayloadType: 101, remote: carrier.address),
                platform: .init(
                    codec: .opus(.init()), payloadType: 111, telephoneEventPayloadType: 101, remote: app.address)))
        defer { call.close() }
        try call.sendDTMF("12", on: .trunk)
        let done = await eventually(timeout: 2, drain: carrier.drain) {
            decodeTelephoneEvents(carrier.packets(payloadType: 101), clockRate: 8000).count >= 2
        }
        #expect(done)
        #expect(decodeTelephoneEvents(carrier.packets(payloadType: 101), clockRate: 8000) == "12")
        #expect(carrier.packets(payloadType: 101).contains { (try? TelephoneEvent.parse($0.payload))?.isEnd == true })
    }

    /// Muting the platform leg silences app -> carrier only; the stream toward the carrier
    /// goes on (silence), and the tone comes back on unmute.
    @Test func muteSilencesOneDirection() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address)))
        defer { call.close() }
        call.setMuted(.platform, true)
        // setMuted is queued to the media thread; a round trip there makes sure it ran before
        // the first packet (which is played the moment it arrives).
        _ = call.statistics()
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000), opus = try TestCodec(.opus(.init()), sampleRate: 8000)

        let unmutedAt = Shared(0)
        await paced(60) { n in
            if n == 30 {
                carrier.drain()
                unmutedAt.value = carrier.received.count
                call.setMuted(.platform, false)
            }
            carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.trunkAddress)
            carrier.timestamp &+= 160
            app.send(
                payloadType: 111, payload: opus.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.platformAddress)
            app.timestamp &+= 960
            if n != 30 { carrier.drain() }
            app.drain()
        }
        let split = unmutedAt.value
        _ = await eventually(timeout: 1, drain: carrier.drain) { carrier.received.count >= split + 25 }
        app.drain()

        let muted = carrier.received[..<split].flatMap { pcmu.decode($0.payload) }
        let unmuted = carrier.received[split...].dropFirst(5).flatMap { pcmu.decode($0.payload) }
        #expect(split >= 20, "the stream toward the carrier stops while muted (\(split) packets)")
        #expect(muted.allSatisfy { abs(Int($0)) < 16 }, "peak \(muted.map { abs(Int($0)) }.max() ?? 0) while muted")
        let back = Goertzel(frequency: 440, sampleRate: 8000).energyRatio(unmuted)
        #expect(
            unmuted.count >= 160 * 15 && back > 0.3 && toneDominates(440, sampleRate: 8000, unmuted),
            "440 Hz ratio \(back) after unmute over \(unmuted.count) samples")
        let appDecoder = try TestCodec(.opus(.init()), sampleRate: 8000)
        let other = app.packets(payloadType: 111).dropFirst(10).flatMap { appDecoder.decode($0.payload) }
        #expect(toneDominates(1000, sampleRate: 8000, other), "carrier -> app muted too")
    }

    /// The carrier stops sending: one `.timeout(.trunk)`, not before the configured time.
    @Test func rtpTimeoutFiresWhenTheCarrierStops() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let log = MediaEventLog()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address), rtpTimeout: 0.8),
            events: log.append)
        defer { call.close() }
        let silence = [UInt8](repeating: 0xFF, count: 160)

        await paced(40) { n in
            carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
            carrier.timestamp &+= 160
        }
        let stopped = ContinuousClock.now
        #expect(!log.all.contains(.timeout(.trunk)), "timed out while RTP was flowing")
        let fired = await eventually(timeout: 3) { log.all.contains(.timeout(.trunk)) }
        let after = ContinuousClock.now - stopped
        #expect(fired)
        #expect(after >= .milliseconds(750), "fired \(after) after the last packet")
        #expect(log.all.filter { $0 == .timeout(.trunk) }.count == 1)
        #expect(log.all.first == .firstPacket(.trunk))
    }

    /// 10% of the carrier's packets lost: the app still gets one packet per 20 ms frame
    /// (contiguous sequence numbers and timestamps), the gaps concealed with the tone kept.
    @Test func lossOnTheTrunkIsConcealed() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address)))
        defer { call.close() }
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)

        await paced(100) { n in
            if n % 10 == 3 {
                carrier.sequenceNumber &+= 1  // lost on the way
            } else {
                carrier.send(
                    payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                    to: call.trunkAddress)
            }
            carrier.timestamp &+= 160
            app.drain()
        }
        _ = await eventually(timeout: 2, drain: app.drain) { app.packets(payloadType: 111).count >= 98 }

        let out = app.packets(payloadType: 111)
        #expect(out.count >= 98, "\(out.count) packets for 100 frames")
        #expect(
            zip(out, out.dropFirst()).allSatisfy {
                $1.sequenceNumber == $0.sequenceNumber &+ 1 && $1.timestamp == $0.timestamp &+ 960
            })
        let stats = try #require(call.statistics()[.trunk])
        #expect(stats.packetsReceived == 90)
        #expect(stats.packetsLost == 10)
        #expect(stats.concealed >= 10, "\(stats)")
        let decoder = try TestCodec(.opus(.init()), sampleRate: 8000)
        let audio = out.dropFirst(10).prefix(85).flatMap { decoder.decode($0.payload) }
        #expect(toneDominates(1000, sampleRate: 8000, audio))
    }

    /// Symmetric RTP: the SDP gave a wrong address for the carrier; once the carrier's
    /// packets arrive from its real socket, the engine sends there and never to the SDP one.
    @Test func symmetricRTPLatchesTheRealSource() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer(), wrong = try RTPTestPeer()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: wrong.address),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address)))
        defer { call.close() }
        let opus = try TestCodec(.opus(.init()), sampleRate: 8000)
        let silence = [UInt8](repeating: 0xFF, count: 160)

        await paced(40) { n in
            carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
            carrier.timestamp &+= 160
            if n >= 5 {
                // The app talks once the carrier's media is up.
                app.send(
                    payloadType: 111, payload: opus.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                    to: call.platformAddress)
                app.timestamp &+= 960
            }
            carrier.drain()
        }
        _ = await eventually(timeout: 1, drain: carrier.drain) { carrier.packets(payloadType: 0).count >= 30 }
        wrong.drain()

        #expect(carrier.packets(payloadType: 0).count >= 30)
        #expect(wrong.received.isEmpty, "\(wrong.received.count) packets went to the SDP address")
        #expect(call.statistics()[.trunk]?.remote == carrier.address)
    }

    /// An RTCP report sent to the RTP port before any RTP (a peer without rtcp-mux that
    /// got the ports wrong, or a probe) is not our payload type: from a stranger it is
    /// dropped by the source policy and does not latch, so the audio still goes to the
    /// carrier; from the carrier itself it is counted as a foreign payload type.
    @Test func foreignPayloadTypesDoNotLatch() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { call.close(); engine.shutdown() }
        let stray = try RTPTestPeer()
        // A receiver report (PT 201) as the RTP parser reads it: version 2, marker set, PT 73.
        stray.send(payloadType: 73, payload: [0, 0, 0, 0], marker: true, to: call.trunkAddress)
        let opus = try TestCodec(.opus(.init()), sampleRate: 8000)
        let silence = [UInt8](repeating: 0xFF, count: 160)
        await paced(30) { n in
            if n >= 5 {
                carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
                carrier.timestamp &+= 160
            }
            if n == 10 { carrier.send(payloadType: 73, payload: [0, 0, 0, 0], marker: true, to: call.trunkAddress) }
            app.send(
                payloadType: 111, payload: opus.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.platformAddress)
            app.timestamp &+= 960
            carrier.drain()
        }
        _ = await eventually(timeout: 1, drain: carrier.drain) { carrier.packets(payloadType: 0).count >= 25 }
        stray.drain()
        #expect(stray.received.isEmpty, "\(stray.received.count) packets went to the stray source")
        #expect(carrier.packets(payloadType: 0).count >= 25)
        #expect(call.statistics()[.trunk]?.sourceDropped == 1, "the stranger's packet")
        #expect(call.statistics()[.trunk]?.otherPayloadTypes == 1, "the carrier's own")
        #expect(
            call.statistics()[.trunk]?.lastOtherPayloadType == 73, "the last foreign payload type, for the snapshot")
    }

    /// Packets longer than the engine's 20 ms frame: a carrier on 30 ms PCMU (as SIPp's
    /// g711a.pcap) bridged to PCMA, where the chain is exact enough to demand one unbroken
    /// sine; an app on 40 ms Opus toward a PCMU carrier. The other side gets a contiguous
    /// 20 ms stream of the whole tone, nothing concealed.
    @Test(arguments: [(MediaLeg.trunk, 30), (.platform, 40)])
    func longPacketsPlayOutInTwentyMillisecondFrames(from: MediaLeg, packetMs: Int) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let platform: AudioCodec = from == .trunk ? .pcma : .opus(.init())
        let platformPT: UInt8 = from == .trunk ? 8 : 111
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: platform, payloadType: platformPT, remote: app.address)))
        defer { call.close() }
        let (source, sink) = from == .trunk ? (carrier, app) : (app, carrier)
        let (sourcePT, sinkPT): (UInt8, UInt8) = from == .trunk ? (0, platformPT) : (platformPT, 0)
        let sourceCodec = try TestCodec(from == .trunk ? .pcmu : platform, sampleRate: 8000)
        let sinkCodec = try TestCodec(from == .trunk ? platform : .pcmu, sampleRate: 8000)
        let samples = 8 * packetMs
        let step = UInt32((from == .trunk ? 8 : 48) * packetMs)
        let count = 1000 / packetMs

        await paced(count, intervalMs: packetMs) { n in
            let pcm = sine(1000, sampleRate: 8000, count: samples, offset: n * samples)
            source.send(
                payloadType: sourcePT, payload: sourceCodec.encode(pcm), marker: n == 0, to: call.address(of: from))
            source.timestamp &+= step
            sink.drain()
        }
        // Read before the stream's end, which the jitter buffer conceals as an underrun.
        let concealed = call.statistics()[from]?.concealed ?? -1
        let frames = count * packetMs / 20
        _ = await eventually(timeout: 1, drain: sink.drain) { sink.packets(payloadType: sinkPT).count >= frames }

        let out = sink.packets(payloadType: sinkPT)
        #expect(out.count >= frames - 2, "\(out.count) packets for \(frames) frames")
        #expect(zip(out, out.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
        // 0 unless a tick or a send was held up by a busy machine; 15 and more when only
        // 20 ms of each packet is decoded (a third of the ticks then find nothing).
        #expect((0...5).contains(concealed), "\(concealed) frames concealed")
        let audio = out.dropFirst(5).prefix(frames - 10).flatMap { sinkCodec.decode($0.payload) }
        let tone = Goertzel(frequency: 1000, sampleRate: 8000)
        let chunks = stride(from: 0, to: audio.count - 159, by: 160).map { audio[$0..<($0 + 160)] }
        #expect(chunks.count >= frames - 15)
        if from == .trunk {
            // G.711 both ends: a slipped or repeated sample would break the sine's phase.
            #expect(tone.energyRatio(audio) > 0.95, "1 kHz ratio \(tone.energyRatio(audio))")
            #expect(chunks.allSatisfy { tone.amplitude($0) > 7000 })
        } else {
            // Opus keeps the tone, not its phase: frame by frame, no silent frame.
            #expect(
                chunks.allSatisfy { tone.energyRatio($0) > 0.6 && tone.amplitude($0) > 1000 },
                "\(chunks.map { String(format: "%.2f/%.0f", tone.energyRatio($0), tone.amplitude($0)) })")
        }
    }

    /// In-band DTMF (no RFC 4733 from the carrier): with `inbandDTMF` on the trunk leg the
    /// tones of `159*` are reported as digits and regenerated toward the app as RFC 4733;
    /// G.722 runs the detector on the wideband audio averaged down to 8 kHz. Off, nothing.
    @Test(arguments: [(AudioCodec.pcmu, true), (.g722, true), (.pcmu, false)])
    func inbandDigitsAreReported(trunk: AudioCodec, inband: Bool) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer()
        let log = MediaEventLog()
        let trunkPT: UInt8 = trunk == .g722 ? 9 : 0
        let rate = trunk == .g722 ? 16_000 : 8000
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: trunk, payloadType: trunkPT, remote: carrier.address, inbandDTMF: inband),
                platform: .init(
                    codec: .opus(.init()), payloadType: 111, telephoneEventPayloadType: 101, remote: app.address)),
            events: log.append)
        defer { call.close() }
        // 200 ms of silence, then the digits (100 ms each, 50 ms apart) and silence after.
        let tones = try InbandDTMFSender()
        try tones.enqueue("159*")
        let frames =
            [[Int16]](repeating: [Int16](repeating: 0, count: 160), count: 10)
            + (0..<40).map { _ in
                var frame: [Int16] = []
                tones.nextFrame(into: &frame)
                return frame
            }
        let encoder = try TestCodec(trunk, sampleRate: rate)

        await paced(frames.count) { n in
            let pcm = rate == 8000 ? frames[n] : Self.upsample(frames[n])
            carrier.send(payloadType: trunkPT, payload: encoder.encode(pcm), to: call.trunkAddress)
            carrier.timestamp &+= 160
            app.drain()
        }
        let expected = inband ? "159*" : ""
        _ = await eventually(timeout: 1, drain: app.drain) {
            decodeTelephoneEvents(app.packets(payloadType: 101), clockRate: 48_000).count >= expected.count
                && log.digits(on: .trunk).count >= expected.count
        }
        #expect(log.digits(on: .trunk) == expected)
        #expect(decodeTelephoneEvents(app.packets(payloadType: 101), clockRate: 48_000) == expected)
    }

    /// 8 kHz to 16 kHz by linear interpolation.
    private static func upsample(_ pcm: [Int16]) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(pcm.count * 2)
        for (i, s) in pcm.enumerated() {
            let next = i + 1 < pcm.count ? pcm[i + 1] : s
            out.append(s)
            out.append(Int16((Int(s) + Int(next)) / 2))
        }
        return out
    }
}
