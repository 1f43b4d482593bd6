import Foundation
import ICE
import IOCore
import TLS
import TestSupport
import Testing

@testable import Media

/// A WebRTC platform leg driven by a browser played in the test: STUN checks built with the
/// ICE module, a DTLS client from the TLS module, over real UDP on 127.0.0.1. What a browser
/// cannot be made to do on purpose is here: a check with a bad MESSAGE-INTEGRITY, a wrong
/// certificate, a handshake that never comes.
// Serialized for the cores: DTLS and ICE consent timers run in real time on the media threads.
@Suite(.serialized) struct WebRTCLegTests {
    /// The engine's side (`local`) and the browser's (`browser`).
    static let local = ICECredentials(ufrag: "gwuf", pwd: "gateway-password-0123456789")
    static let browser = ICECredentials(ufrag: "brws", pwd: "browser-password-0123456789")

    final class Rig: @unchecked Sendable {
        let engine: MediaEngine
        let call: MediaCall
        let log = MediaEventLog()
        let browserPeer: RTPTestPeer
        let carrier: RTPTestPeer
        let browserContext: DTLSContext

        /// `expect`: the fingerprint the engine takes for the browser (nil: the browser's own).
        init(expect: DTLSFingerprint? = nil, setupTimeout: Double = 1.5) throws {
            engine = try TestMediaEngine.make()
            browserPeer = try RTPTestPeer()
            carrier = try RTPTestPeer()
            let browserCertificate = try DTLSCertificate(commonName: "browser")
            browserContext = try DTLSContext(certificate: browserCertificate)
            let gatewayContext = try DTLSContext(certificate: try DTLSCertificate())
            var platform = MediaLegConfiguration(codec: .opus(.init()), payloadType: 111)
            platform.webrtc = WebRTCMediaConfiguration(
                local: WebRTCLegTests.local, remote: WebRTCLegTests.browser,
                context: gatewayContext, role: .server,
                peerFingerprints: [expect ?? browserCertificate.fingerprint],
                setupTimeout: setupTimeout)
            let log = self.log
            call = try engine.openCall(
                MediaCallConfiguration(
                    trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                    platform: platform)
            ) { log.append($0) }
            gatewayFingerprint = gatewayContext.certificate.fingerprint
        }
        let gatewayFingerprint: DTLSFingerprint

        var platform: SocketAddress { call.address(of: .platform) }

        /// A browser's check: USERNAME local:remote, signed with the engine's password unless `key` says otherwise.
        func check(
            useCandidate: Bool = true, key: String = WebRTCLegTests.local.pwd, from peer: RTPTestPeer? = nil
        ) throws -> STUNTransactionID {
            let id = STUNTransactionID.random()
            var attributes: [STUNAttribute] = [
                .username("\(WebRTCLegTests.local.ufrag):\(WebRTCLegTests.browser.ufrag)"),
                .priority(1_845_501_695), .iceControlling(tieBreaker: 42)
            ]
            if useCandidate { attributes.append(.useCandidate) }
            let bytes = try STUNMessage(type: .bindingRequest, transactionID: id, attributes: attributes)
                .serialized(integrityKey: Array(key.utf8), fingerprint: true)
            send(bytes, from: peer)
            return id
        }

        func send(_ bytes: [UInt8], from peer: RTPTestPeer? = nil) {
            guard let to = RawSocketAddress(platform) else { return }
            bytes.withUnsafeBytes { _ = (peer ?? browserPeer).socket.send($0, to: to) }
        }

        /// The STUN messages the browser got.
        func stunReceived() -> [STUNMessage] {
            browserPeer.drain()
            return browserPeer.received.compactMap {
                PacketKind(datagram: $0.bytes) == .stun ? try? STUNMessage.parse($0.bytes) : nil
            }
        }

        /// Runs the browser's DTLS client against the engine (what the engine sends goes into
        /// the client, what the client makes goes back) until `done`, for at most 5 s.
        func handshake(_ client: inout DTLSTransport, until done: (DTLSTransport) -> Bool) async -> Bool {
            for d in client.start(now: Date().timeIntervalSince1970).datagrams { send(d) }
            var seen = 0
            return await eventually(timeout: 5, pollInterval: 0.02) {
                if done(client) { return true }
                browserPeer.drain()
                for r in browserPeer.received.dropFirst(seen) where PacketKind(datagram: r.bytes) == .dtls {
                    for d in client.receive(r.bytes, now: Date().timeIntervalSince1970).datagrams { send(d) }
                }
                seen = browserPeer.received.count
                return done(client)
            }
        }

        func failure() -> String? {
            log.all.lazy.compactMap { if case .webrtcFailed(.platform, let why) = $0 { why } else { nil } }.first
        }

        func stop() {
            call.close()
            engine.shutdown()
        }
    }

    @Test func aCheckWithABadMessageIntegrityGets401AndNothingElse() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let id = try rig.check(key: "not-the-gateway-password-at-all")
        var answers: [STUNMessage] = []
        #expect(
            await eventually(timeout: 5) {
                answers = rig.stunReceived()
                return !answers.isEmpty
            })
        #expect(answers.first?.transactionID == id && answers.first?.type == .bindingErrorResponse, "\(answers)")
        #expect(answers.first?.errorCode?.code == 401, "\(answers)")
        // No pair was nominated: the setup limit ends the leg, and no RTP went anywhere.
        #expect(await eventually(timeout: 5) { rig.failure() != nil })
        #expect(rig.failure()?.contains("ICE: no connectivity check") == true, "\(String(describing: rig.failure()))")
        #expect(rig.browserPeer.received.allSatisfy { PacketKind(datagram: $0.bytes) == .stun })
    }

    @Test func aDTLSPeerThatNeverFinishesTimesOut() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        _ = try rig.check()
        #expect(await eventually(timeout: 5) { rig.stunReceived().contains { $0.type == .bindingSuccessResponse } })
        #expect(await eventually(timeout: 5) { rig.failure() != nil })
        #expect(
            rig.failure()?.contains("DTLS: the handshake did not finish") == true,
            "\(String(describing: rig.failure()))")
        #expect(rig.browserPeer.received.allSatisfy { PacketKind(datagram: $0.bytes) != .rtp }, "no media before keys")
    }

    /// The browser's certificate is not the one its SDP named: the handshake fails, no key is
    /// made, the leg reports why.
    @Test func aWrongFingerprintEndsTheLeg() async throws {
        let other = try DTLSCertificate(commonName: "someone else").fingerprint
        let rig = try Rig(expect: other, setupTimeout: 5)
        defer { rig.stop() }
        _ = try rig.check()
        #expect(await eventually(timeout: 5) { rig.stunReceived().contains { $0.type == .bindingSuccessResponse } })
        var client = try DTLSTransport(
            context: rig.browserContext, role: .client, peerFingerprints: [rig.gatewayFingerprint])
        #expect(await rig.handshake(&client) { _ in rig.failure() != nil })
        #expect(rig.failure()?.hasPrefix("DTLS:") == true, "\(String(describing: rig.failure()))")
        #expect(!rig.log.all.contains(.webrtcConnected(.platform)))
        #expect(rig.browserPeer.received.allSatisfy { PacketKind(datagram: $0.bytes) != .rtp }, "no media without keys")
    }

    /// The right certificate: the handshake keys SRTP, the leg reports it is up, and what it
    /// sends the browser is SRTP that the browser's exported keys open.
    @Test func theRightCertificateKeysSRTPAndMediaFlows() async throws {
        let rig = try Rig(setupTimeout: 5)
        defer { rig.stop() }
        _ = try rig.check()
        #expect(await eventually(timeout: 5) { rig.stunReceived().contains { $0.type == .bindingSuccessResponse } })
        var client = try DTLSTransport(
            context: rig.browserContext, role: .client, peerFingerprints: [rig.gatewayFingerprint])
        #expect(
            await rig.handshake(&client) { $0.keys != nil && rig.log.all.contains(.webrtcConnected(.platform)) },
            "\(rig.log.all)")
        let keys = try #require(client.keys)
        let session = try SRTPSession(
            SRTPConfiguration(
                suite: try #require(SRTPSuite(rawValue: keys.suiteName)),
                sendKey: keys.sendKey, receiveKey: keys.receiveKey))
        // The carrier talks; the engine transcodes to Opus and sends SRTP to the browser.
        let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
        for n in 0..<25 {
            rig.carrier.send(
                payloadType: 0, payload: pcmu.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                to: rig.call.address(of: .trunk))
            try await Task.sleep(nanoseconds: 20_000_000)  // the 20 ms packet pacing, not a wait
        }
        var opened = 0
        #expect(
            await eventually(timeout: 5) {
                rig.browserPeer.drain()
                opened =
                    rig.browserPeer.received.filter { r in
                        guard PacketKind(datagram: r.bytes) == .rtp, !(192...223).contains(r.bytes[1]) else {
                            return false
                        }
                        let (result, _) = srtpApply(r.bytes, session.unprotectRTP)
                        if case .ok = result { return true }
                        return false
                    }.count
                return opened >= 10
            }, "SRTP packets the browser could open: \(opened)")
    }

    /// Once ICE has selected the browser's address, nothing from another address is read:
    /// not even a check signed with the right password (which would otherwise move the
    /// media there), nor DTLS. They get no answer and are counted.
    @Test func afterSelectionOnlyTheSelectedAddressIsHeard() async throws {
        let rig = try Rig(setupTimeout: 5)
        defer { rig.stop() }
        _ = try rig.check()
        #expect(await eventually(timeout: 5) { rig.stunReceived().contains { $0.type == .bindingSuccessResponse } })
        let stranger = try RTPTestPeer(host: "127.0.0.2")
        _ = try rig.check(from: stranger)
        rig.send([22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], from: stranger)  // a DTLS record header
        #expect(await eventually(timeout: 5) { (rig.call.statistics()[.platform]?.sourceDropped ?? 0) >= 2 })
        // The browser's own check, after the stranger's, is still answered (the condition
        // the wait needs: the stranger's packets were read before it).
        let id = try rig.check()
        #expect(await eventually(timeout: 5) { rig.stunReceived().contains { $0.transactionID == id } })
        stranger.drain()
        #expect(stranger.received.isEmpty, "the stranger got \(stranger.received.count) answers")
        #expect(rig.call.statistics()[.platform]?.remote == rig.browserPeer.address)
    }
}
