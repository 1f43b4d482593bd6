import Foundation
import IOCore
import TestSupport
import Testing

@testable import Media

/// A call through the engine over real UDP on 127.0.0.1: a "carrier" socket sends a 1 kHz
/// PCMU tone into the trunk leg; the "app" socket receives Opus and decodes the tone.
struct MediaEngineSmokeTests {
    @Test func pcmuToOpusCarriesATone() async throws {
        let engine = try MediaEngine(
            configuration: .init(threads: 1, portRange: try freePortRange(count: 100), portQuarantine: 0))
        defer { engine.shutdown() }
        let carrier = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let app = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let call = try engine.openCall(
            MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.local),
                platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.local)))
        defer { call.close() }
        let to = try #require(RawSocketAddress(call.trunkAddress))
        // 1 s of a 1 kHz tone, paced at 20 ms.
        var packet = [UInt8](repeating: 0, count: 172)
        var pcm = [Int16](repeating: 0, count: 160)
        var ulaw = [UInt8](repeating: 0, count: 160)
        var received: [[UInt8]] = []
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { rx.deallocate() }
        var from = RawSocketAddress()
        for n in 0..<50 {
            for i in 0..<160 { pcm[i] = Int16(8000 * sin(2 * Double.pi * 1000 * Double(n * 160 + i) / 8000)) }
            G711.encodeULaw(pcm, into: &ulaw)
            packet[0] = 0x80; packet[1] = 0
            packet[2] = UInt8(n >> 8); packet[3] = UInt8(n & 0xFF)
            let ts = UInt32(n * 160)
            packet[4] = UInt8(ts >> 24); packet[5] = UInt8((ts >> 16) & 0xFF); packet[6] = UInt8((ts >> 8) & 0xFF);
            packet[7] = UInt8(ts & 0xFF)
            packet[8] = 1; packet[9] = 2; packet[10] = 3; packet[11] = 4
            for i in 0..<160 { packet[12 + i] = ulaw[i] }
            packet.withUnsafeBytes { _ = carrier.send($0, to: to) }
            try await Task.sleep(nanoseconds: 20_000_000)  // the 20 ms packet pacing, not a wait
            while let got = app.receive(into: rx, from: &from) { received.append(Array(rx[0..<got])) }
        }
        _ = await eventually(timeout: 2) {
            while let got = app.receive(into: rx, from: &from) { received.append(Array(rx[0..<got])) }
            return received.count > 30
        }
        #expect(received.count > 30, "got \(received.count) packets on the platform leg")
        let decoder = try OpusDecoder(sampleRate: 8000)
        var out: [Int16] = []
        var all: [Int16] = []
        for p in received.dropFirst(10) {
            #expect(p[1] & 0x7F == 111)
            try decoder.decode(Array(p[12...]), into: &out)
            all += out
        }
        // The tone dominates: pacing on a loaded machine may add silence or concealed frames,
        // so compare against neighbouring frequencies rather than the total energy.
        let at1000 = Goertzel(frequency: 1000, sampleRate: 8000).power(all)
        for other in [500.0, 700, 1400, 2000] {
            let p = Goertzel(frequency: other, sampleRate: 8000).power(all)
            #expect(at1000 > 20 * p, "1 kHz \(at1000) vs \(other) Hz \(p)")
        }
        let stats = call.statistics()
        #expect(stats[.trunk]?.packetsReceived == 50)
        #expect((stats[.platform]?.packetsSent ?? 0) >= 40)
        // The thread that transcoded a second of audio used CPU, and the engine reads it
        // from another thread (BENCH media divides by it).
        #expect(engine.cpuTime > 0)
    }
}

/// RTCP from the engine against a scripted loss pattern: the carrier sends 100 packets with
/// every 10th missing; the engine's report block on the carrier's stream counts the loss.
struct MediaEngineRTCPTests {
    /// An RTP socket on an OS-chosen port and its RTCP socket at port + 1 (retried until the
    /// neighbour is free).
    static func socketPair() throws -> (UDPSocket, UDPSocket) {
        for _ in 0..<50 {
            let rtp = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            if let rtcp = try? UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: rtp.local.port + 1)) {
                return (rtp, rtcp)
            }
        }
        throw SocketError("no free port pair")
    }

    @Test func reportBlockCountsScriptedLoss() async throws {
        let engine = try MediaEngine(
            configuration: .init(threads: 1, portRange: try freePortRange(count: 100), portQuarantine: 0))
        defer { engine.shutdown() }
        let (carrier, carrierRTCP) = try Self.socketPair()
        let app = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        var config = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.local),
            platform: .init(codec: .pcmu, payloadType: 0, remote: app.local))
        config.rtcpInterval = 0.2
        let call = try engine.openCall(config)
        defer { call.close() }
        let to = try #require(RawSocketAddress(call.trunkAddress))
        var packet = [UInt8](repeating: 0xFF, count: 172)
        for n in 0..<100 where n % 10 != 5 {
            packet[0] = 0x80; packet[1] = 0
            packet[2] = UInt8(n >> 8); packet[3] = UInt8(n & 0xFF)
            let ts = UInt32(n * 160)
            packet[4] = UInt8(ts >> 24); packet[5] = UInt8((ts >> 16) & 0xFF); packet[6] = UInt8((ts >> 8) & 0xFF);
            packet[7] = UInt8(ts & 0xFF)
            packet[8] = 0xCA; packet[9] = 0xFE; packet[10] = 0xBA; packet[11] = 0xBE
            packet.withUnsafeBytes { _ = carrier.send($0, to: to) }
        }
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { rx.deallocate() }
        var from = RawSocketAddress()
        var lost: Int32? = nil
        // A condition wait: 20 s only matters on a machine stalled by other work.
        _ = await eventually(timeout: 20, pollInterval: 0.02) {
            while lost != 10, let n = carrierRTCP.receive(into: rx, from: &from) {
                guard let compound = try? RTCPCompoundPacket(parsing: UnsafeRawBufferPointer(rebasing: rx[0..<n]))
                else { continue }
                #expect(compound.packets.count == 2, "SR or RR, then SDES")
                for p in compound.packets {
                    switch p {
                    case .senderReport(let sr):
                        lost = sr.reportBlocks.first(where: { $0.ssrc == 0xCAFE_BABE })?.cumulativeLost ?? lost
                    case .receiverReport(let rr):
                        lost = rr.reportBlocks.first(where: { $0.ssrc == 0xCAFE_BABE })?.cumulativeLost ?? lost
                    default: break
                    }
                }
            }
            return lost == 10
        }
        #expect(lost == 10, "cumulative lost in the engine's report: \(String(describing: lost))")
        #expect(call.statistics()[.trunk]?.packetsLost == 10)
    }
}

/// `realtimePriority` puts the media threads under SCHED_RR, or says why it could not.
@Test func realtimePriorityIsTakenOrExplained() async throws {
    let engine = try MediaEngine(
        configuration: .init(
            threads: 1, portRange: try freePortRange(count: 10), portQuarantine: 0, realtimePriority: 5))
    defer { engine.shutdown() }
    let policy = await engine.threads[0].loop.run { () -> Int32 in
        var p = sched_param()
        var policy: Int32 = 0
        pthread_getschedparam(pthread_self(), &policy, &p)
        return policy
    }
    if let why = engine.realtimeError {
        #expect(why.contains("SCHED_RR priority 5"))
        #expect(policy == Int32(SCHED_OTHER))
    } else {
        #expect(policy == Int32(SCHED_RR))
    }
    let plain = try MediaEngine(
        configuration: .init(threads: 1, portRange: try freePortRange(count: 10), portQuarantine: 0))
    defer { plain.shutdown() }
    #expect(plain.realtimeError == nil)
}
