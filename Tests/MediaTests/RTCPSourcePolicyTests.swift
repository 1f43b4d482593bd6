import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

/// RTCP under the source policy (docs/media.md, "Who may send media"): reports from anyone
/// but the peer's host would write loss and round-trip figures into the call's record.
@Suite struct RTCPSourcePolicyTests {
    /// A receiver report about `ssrc` claiming `fractionLost` (of 256).
    static func report(about ssrc: UInt32, fractionLost: UInt8) throws -> [UInt8] {
        let block = RTCPReportBlock(
            ssrc: ssrc, fractionLost: fractionLost, cumulativeLost: 100, extendedHighestSequenceNumber: 1000,
            interarrivalJitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
        return try RTCPCompoundPacket(packets: [
            .receiverReport(RTCPReceiverReport(ssrc: 0x5EED, reportBlocks: [block]))
        ]).serialize()
    }

    @Test func reportsFromAnotherHostAreDroppedAndThePeersHostIsHeard() async throws {
        let (engine, carrier, app, call) = try openBridge()
        defer { call.close(); engine.shutdown() }
        // The carrier's RTP latches the trunk leg; our packets back tell us the leg's SSRC.
        let silence = [UInt8](repeating: 0xFF, count: 160)
        let opus = try TestCodec(.opus(.init()), sampleRate: 8000)
        await paced(10) { n in
            carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
            carrier.timestamp &+= 160
            app.send(
                payloadType: 111, payload: opus.encode(sine(440, sampleRate: 8000, count: 160, offset: n * 160)),
                to: call.platformAddress)
            app.timestamp &+= 960
        }
        _ = await eventually(timeout: 2, drain: carrier.drain) { !carrier.packets(payloadType: 0).isEmpty }
        let ssrc = try #require(carrier.packets(payloadType: 0).first?.ssrc)
        let rtcpPort = SocketAddress(host: call.trunkAddress.host, port: call.trunkAddress.port + 1)

        let stranger = try RTPTestPeer(host: "127.0.0.2")
        let forged = try Self.report(about: ssrc, fractionLost: 255)
        forged.withUnsafeBytes { _ = stranger.socket.send($0, to: RawSocketAddress(rtcpPort)!) }
        #expect(await eventually(timeout: 2) { (call.statistics()[.trunk]?.sourceDropped ?? 0) >= 1 })
        #expect(call.statistics()[.trunk]?.remoteFractionLost == nil, "a stranger's report was read")

        // The carrier's RTCP from another port of its host (a NAT's own mapping) is read.
        let carrierRTCP = try RTPTestPeer()
        let real = try Self.report(about: ssrc, fractionLost: 64)
        real.withUnsafeBytes { _ = carrierRTCP.socket.send($0, to: RawSocketAddress(rtcpPort)!) }
        #expect(await eventually(timeout: 2) { call.statistics()[.trunk]?.remoteFractionLost == 0.25 })
        // Once latched, the stranger is still not heard.
        forged.withUnsafeBytes { _ = stranger.socket.send($0, to: RawSocketAddress(rtcpPort)!) }
        #expect(await eventually(timeout: 2) { (call.statistics()[.trunk]?.sourceDropped ?? 0) >= 2 })
        #expect(call.statistics()[.trunk]?.remoteFractionLost == 0.25)
    }
}

/// What a stranger's packets cannot do on a plain leg: keep a dead call up.
@Suite struct StrangerMediaTests {
    /// The carrier goes silent and only a stranger keeps sending: the RTP timeout still fires.
    @Test func aStrangersPacketsDoNotKeepADeadCallUp() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer(), app = try RTPTestPeer(), stranger = try RTPTestPeer(host: "127.0.0.2")
        let log = MediaEventLog()
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
                platform: .init(codec: .pcmu, payloadType: 0, remote: app.address),
                rtpTimeout: 1)
        ) { log.append($0) }
        defer { call.close() }
        let silence = [UInt8](repeating: 0xFF, count: 160)
        carrier.send(payloadType: 0, payload: silence, to: call.trunkAddress)
        let timedOut = { log.all.contains { if case .timeout(.trunk) = $0 { true } else { false } } }
        // The stranger sends for up to 5 s; the timeout must come after about 1 s anyway.
        var sent = 0
        let fired = await eventually(timeout: 5) {
            stranger.send(payloadType: 0, payload: silence, to: call.trunkAddress)
            stranger.timestamp &+= 160
            sent += 1
            return timedOut()
        }
        #expect(fired, "the stranger's \(sent) packets kept the call up")
        #expect((call.statistics()[.trunk]?.sourceDropped ?? 0) > 0)
        #expect(call.statistics()[.trunk]?.packetsReceived == 1, "only the carrier's packet counts as received")
    }
}
