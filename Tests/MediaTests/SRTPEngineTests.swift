import Foundation
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// The carrier's side of an SRTP trunk leg: RTP built like `RTPTestPeer`'s, protected with
/// the peer's keys (the engine's mirrored), sent from the peer's socket or another.
final class SRTPCarrier: @unchecked Sendable {  // used by one sender thread at a time
    let peer: RTPTestPeer
    private(set) var session: SRTPSession
    private(set) var keys: SRTPConfiguration
    init(_ peer: RTPTestPeer, keys: SRTPConfiguration) throws {
        self.peer = peer
        self.keys = keys
        session = try SRTPSession(keys)
    }

    func rekey(_ keys: SRTPConfiguration) throws {
        self.keys = keys
        session = try SRTPSession(keys)
    }

    /// The next packet (sequence number advances), protected.
    func packet(payloadType: UInt8, payload: [UInt8], marker: Bool = false) -> [UInt8] {
        let seq = peer.sequenceNumber, ts = peer.timestamp, ssrc = peer.ssrc
        peer.sequenceNumber &+= 1
        let plain: [UInt8] =
            [
                0x80, (marker ? 0x80 : 0) | payloadType, UInt8(seq >> 8), UInt8(seq & 0xFF),
                UInt8(ts >> 24), UInt8((ts >> 16) & 0xFF), UInt8((ts >> 8) & 0xFF), UInt8(ts & 0xFF),
                UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)
            ] + payload
        let (result, wire) = srtpApply(plain, session.protectRTP)
        precondition(result == .ok(length: wire.count))
        return wire
    }

    func send(_ bytes: [UInt8], to: SocketAddress, from socket: UDPSocket? = nil) {
        guard let raw = RawSocketAddress(to) else { return }
        bytes.withUnsafeBytes { _ = (socket ?? peer.socket).send($0, to: raw) }
    }

    /// The packets that reached the peer, unprotected; those that do not authenticate are
    /// left out. A fresh session each time, so asking twice does not read as replays.
    func unprotectedPackets() -> [RTPTestPeer.Received] {
        guard let session = try? SRTPSession(keys) else { return [] }
        return peer.received.compactMap { r in
            let (result, plain) = srtpApply(r.bytes, session.unprotectRTP)
            guard case .ok = result else { return nil }
            return RTPTestPeer.Received(bytes: plain, source: r.source)
        }
    }
}

/// Calls whose trunk leg is SRTP, through the media engine over real UDP on 127.0.0.1.
// Serialized for the cores: paced real-time media whose arrival counts sag when media threads compete.
@Suite(.serialized) struct SRTPEngineTests {
    /// The carrier sends a 440 Hz tone as SRTP PCMU, plus a forgery from another address
    /// before its first packet and a replay midway; the app sends a 1 kHz tone. The app
    /// hears the 440 Hz tone in the clear; the forgery and the replay are counted, never
    /// played, relayed or latched; the carrier gets SRTP it can unprotect into the 1 kHz
    /// tone, and that reads as no tone without the key.
    @Test(arguments: [SRTPSuite.aesCM128HmacSHA1_80, .aeadAES128GCM], [false, true])
    func toneThroughAnSRTPTrunk(suite: SRTPSuite, passthrough: Bool) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrierPeer = try RTPTestPeer(), app = try RTPTestPeer(), attacker = try RTPTestPeer()
        let keys = SRTPConfiguration(
            suite: suite, sendKey: SRTPConfiguration.randomKey(for: suite),
            receiveKey: SRTPConfiguration.randomKey(for: suite))
        let carrier = try SRTPCarrier(carrierPeer, keys: keys.mirrored)
        let platformCodec: AudioCodec = passthrough ? .pcmu : .opus(.init())
        let platformPT: UInt8 = passthrough ? 0 : 111
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrierPeer.address, srtp: keys),
                platform: .init(codec: platformCodec, payloadType: platformPT, remote: app.address)))
        defer { call.close() }
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        let appEncoder = try TestCodec(platformCodec, sampleRate: 8000)
        let appStep = UInt32(platformCodec.rtpClockRate / 50)
        let frames = (0..<50).map { n in pcmu.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)) }
        let trunk = call.address(of: .trunk)

        await paced(50) { n in
            let wire = carrier.packet(payloadType: 0, payload: frames[n], marker: n == 0)
            if n == 0 {
                // A forgery of the first packet from elsewhere, ahead of it: were it taken
                // before authentication, symmetric RTP would latch onto the attacker.
                var forged = wire
                forged[20] ^= 0x40
                carrier.send(forged, to: trunk, from: attacker.socket)
            }
            carrier.send(wire, to: trunk)
            if n == 30 { carrier.send(wire, to: trunk) }  // a replay
            carrierPeer.timestamp &+= 160
            app.send(
                payloadType: platformPT,
                payload: appEncoder.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
                marker: n == 0, to: call.address(of: .platform))
            app.timestamp &+= appStep
            app.drain()
        }
        _ = await eventually(
            timeout: 2,
            drain: {
                app.drain(); carrierPeer.drain()
            }
        ) {
            app.packets(payloadType: platformPT).count >= 45 && carrierPeer.received.count >= 45
        }

        let stats = call.statistics()
        #expect(stats[.trunk]?.srtpAuthFailures == 1)
        #expect(stats[.trunk]?.srtpReplays == 1)
        #expect(stats[.trunk]?.packetsReceived == 50)
        #expect(
            stats[.trunk]?.remote == carrierPeer.address, "latched onto \(String(describing: stats[.trunk]?.remote))")
        attacker.drain()
        #expect(attacker.received.isEmpty)

        // The app: plain RTP with the tone; in passthrough, exactly one packet per genuine one.
        let heard = app.packets(payloadType: platformPT)
        if passthrough { #expect(heard.count == 50, "\(heard.count) relayed") } else { #expect(heard.count >= 45) }
        let appDecoder = try TestCodec(platformCodec, sampleRate: 8000)
        let audio = heard.prefix(50).dropFirst(10).flatMap { appDecoder.decode($0.payload) }
        #expect(toneDominates(440, sampleRate: 8000, audio))

        // The carrier: SRTP (tag after the payload) that unprotects into the app's tone.
        let tag = suite == .aeadAES128GCM ? 16 : 10
        let raw = carrierPeer.received
        #expect(raw.count >= 45 && raw.allSatisfy { $0.bytes.count == 12 + 160 + tag })
        let plain = carrier.unprotectedPackets()
        #expect(plain.count == raw.count)
        #expect(zip(plain, plain.dropFirst()).allSatisfy { $1.sequenceNumber == $0.sequenceNumber &+ 1 })
        let decoded = plain.prefix(50).dropFirst(10).flatMap { pcmu.decode($0.payload) }
        #expect(toneDominates(1000, sampleRate: 8000, decoded))
        // Without the key the payload is noise: it agrees with the plaintext byte for byte
        // about as often as chance (1 in 256), not as a tone test on noise would (which a
        // random spectrum passes a few times in a hundred).
        let pairs = zip(raw.prefix(50), plain.prefix(50)).flatMap { zip($0.bytes[12..<172], $1.bytes[12..<172]) }
        let agreeing = pairs.filter { $0.0 == $0.1 }.count
        #expect(
            !pairs.isEmpty && Double(agreeing) < 0.02 * Double(pairs.count),
            "\(agreeing) of \(pairs.count) bytes in the clear")
    }

    /// A re-INVITE's new keys: `reconfigure` builds new sessions. The old key no longer
    /// authenticates, the new one does, and what the engine sends follows the new key.
    @Test func reconfigureRekeys() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrierPeer = try RTPTestPeer(), app = try RTPTestPeer()
        let suite = SRTPSuite.aesCM128HmacSHA1_80
        let first = SRTPConfiguration(
            suite: suite, sendKey: SRTPConfiguration.randomKey(for: suite),
            receiveKey: SRTPConfiguration.randomKey(for: suite))
        let second = SRTPConfiguration(
            suite: suite, sendKey: SRTPConfiguration.randomKey(for: suite),
            receiveKey: SRTPConfiguration.randomKey(for: suite))
        func configuration(_ keys: SRTPConfiguration) -> MediaCallConfiguration {
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrierPeer.address, srtp: keys),
                platform: .init(codec: .pcmu, payloadType: 0, remote: app.address))
        }
        let call = try engine.openCall(configuration(first))
        defer { call.close() }
        let carrier = try SRTPCarrier(carrierPeer, keys: first.mirrored)
        let oldKeys = try SRTPCarrier(carrierPeer, keys: first.mirrored)
        let payload = [UInt8](repeating: 0x7E, count: 160)
        let trunk = call.address(of: .trunk)

        await paced(5) { n in
            carrier.send(carrier.packet(payloadType: 0, payload: payload), to: trunk)
            app.send(payloadType: 0, payload: payload, to: call.address(of: .platform))
        }
        // The engine itself must have read all five (a stray datagram to the app's port, from
        // an earlier test's call, must not end the wait while one old-key packet is queued).
        #expect(
            await eventually(
                timeout: 2,
                drain: {
                    app.drain(); carrierPeer.drain()
                }
            ) {
                app.received.count >= 5 && carrier.unprotectedPackets().count == 5
                    && call.statistics()[.trunk]?.packetsReceived == 5
            })

        // The rebuild runs on the media thread: packets under the new keys wait for it.
        let rebuilt = Mutex(false)
        call.reconfigure(configuration(second)) { _ in rebuilt.withLock { $0 = true } }
        #expect(await eventually(timeout: 5) { rebuilt.withLock { $0 } })
        try carrier.rekey(second.mirrored)
        await paced(5) { n in
            carrier.send(carrier.packet(payloadType: 0, payload: payload), to: trunk)
            // Keyed with the first keys: refused now.
            oldKeys.send(oldKeys.packet(payloadType: 0, payload: payload), to: trunk)
            app.send(payloadType: 0, payload: payload, to: call.address(of: .platform))
        }
        #expect(
            await eventually(
                timeout: 5,
                drain: {
                    app.drain(); carrierPeer.drain()
                }
            ) {
                app.received.count == 10 && carrierPeer.received.count == 10
            })
        let stats = call.statistics()
        #expect(stats[.trunk]?.srtpAuthFailures == 5)
        #expect(stats[.trunk]?.packetsReceived == 5, "counters start afresh with the new pipeline")
        // The last five left under the new key: the new session unprotects them, the old one does not.
        let afterRekey = Array(carrierPeer.received.suffix(5))
        let fresh = try SRTPSession(second.mirrored)
        #expect(
            afterRekey.allSatisfy { if case .ok = srtpApply($0.bytes, fresh.unprotectRTP).0 { true } else { false } })
        let stale = try SRTPSession(first.mirrored)
        #expect(afterRekey.allSatisfy { srtpApply($0.bytes, stale.unprotectRTP).0 == .authenticationFailed })
    }

    /// SRTCP on the trunk: a protected receiver report about our stream is read (the peer's
    /// view of our loss); a tampered one is counted and ignored.
    @Test func srtcpReportsAuthenticate() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrierPeer = try RTPTestPeer(), app = try RTPTestPeer()
        let suite = SRTPSuite.aesCM128HmacSHA1_32
        let keys = SRTPConfiguration(
            suite: suite, sendKey: SRTPConfiguration.randomKey(for: suite),
            receiveKey: SRTPConfiguration.randomKey(for: suite))
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrierPeer.address, srtp: keys),
                platform: .init(codec: .pcmu, payloadType: 0, remote: app.address)))
        defer { call.close() }
        let carrier = try SRTPCarrier(carrierPeer, keys: keys.mirrored)
        // Our SSRC on the trunk, from a packet the app makes us send there.
        app.send(payloadType: 0, payload: [UInt8](repeating: 0xFF, count: 160), to: call.address(of: .platform))
        #expect(await eventually(timeout: 2, drain: carrierPeer.drain) { carrier.unprotectedPackets().count == 1 })
        guard let ours = carrier.unprotectedPackets().first?.ssrc else { return }

        func report(fractionLost: UInt8) -> [UInt8] {
            let s = carrierPeer.ssrc
            var rr: [UInt8] = [
                0x81, 0xC9, 0x00, 0x07, UInt8(s >> 24), UInt8((s >> 16) & 0xFF), UInt8((s >> 8) & 0xFF),
                UInt8(s & 0xFF),
                UInt8(ours >> 24), UInt8((ours >> 16) & 0xFF), UInt8((ours >> 8) & 0xFF), UInt8(ours & 0xFF),
                fractionLost, 0, 0, 0
            ]
            rr += [UInt8](repeating: 0, count: 16)  // highest seq, jitter, LSR, DLSR
            return srtpApply(rr, carrier.session.protectRTCP).1
        }
        let rtcpPort = SocketAddress(host: "127.0.0.1", port: call.trunkAddress.port + 1)
        var forged = report(fractionLost: 128)
        forged[13] ^= 0x01
        carrier.send(forged, to: rtcpPort)
        carrier.send(report(fractionLost: 64), to: rtcpPort)
        #expect(await eventually(timeout: 2) { call.statistics()[.trunk]?.remoteFractionLost != nil })
        let stats = call.statistics()
        #expect(stats[.trunk]?.remoteFractionLost == 0.25)
        #expect(stats[.trunk]?.srtpAuthFailures == 1)
    }
}
