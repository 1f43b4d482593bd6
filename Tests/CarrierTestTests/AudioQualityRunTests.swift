import Foundation
import IOCore
import IrisClient
import Synchronization
import TestSupport
import Testing

@testable import CarrierTest

#if canImport(Glibc)
    import Glibc
#endif

/// An echoing number without a gateway: a UDP socket on 127.0.0.1 that sends every packet
/// back to where it came from, dropping `burst` packets in every `period` (0: none).
final class UDPEcho: @unchecked Sendable {
    let fd: Int32
    let port: Int
    let period: Int, burst: Int
    private let done = Atomic<Bool>(false)

    init(period: Int = 0, burst: Int = 0) {
        self.period = period
        self.burst = burst
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 2_048)
            var from = sockaddr_storage()
            var count = 0
            while !done.load(ordering: .relaxed) {
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let n = withUnsafeMutablePointer(to: &from) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, &buffer, buffer.count, 0, $0, &length)
                    }
                }
                guard n > 0 else { continue }
                count += 1
                if period > 0 && count % period < burst { continue }
                _ = withUnsafePointer(to: &from) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, buffer, n, 0, $0, length) }
                }
            }
            // The thread closes the socket: once it no longer reads it, and without a wait in `stop`.
            close(fd)
        }.start()
    }

    /// Ends the relay without waiting: its thread sees the flag within its 100 ms read timeout.
    func stop() {
        done.store(true, ordering: .relaxed)
    }
}

/// The `audioQuality` step's own code on a real client leg (Opus at 48 kHz) against an
/// echo: no gateway, so no trunk statistics. Its clean echo must show no gap at all, which a
/// thread starved by two gateway tests beside it can break: it takes a gateway slot.
@Suite(.atMost(gatewaySlots)) struct AudioQualityRunTests {
    static func runner() throws -> SuiteRunner {
        SuiteRunner(
            connection: try IrisRtcConnection(baseURL: "http://127.0.0.1:9", apiKey: "unused"), profile: nil,
            progress: { _ in })
    }

    @Test func echoThroughOpus() async throws {
        let echo = UDPEcho()
        defer { echo.stop() }
        let leg = try ClientMediaLeg()
        defer { leg.stop() }
        leg.source = .tone(hz: 1000, amplitude: 0.3)
        leg.setRemote(SocketAddress(host: "127.0.0.1", port: echo.port))
        #expect(await eventually(timeout: 5) { leg.receivedPackets() > 0 }, "the echo is flowing")
        let step = AudioQualityStep(mode: .echo, durationSec: 2, within: 5)
        let (check, failure) = try Self.runner().measureAudio(step, step: 4, leg: leg, roomId: nil, codec: nil)
        print("AUDIO echo through Opus: \(check.score)")
        #expect(failure == nil && check.passed, "\(check)")
        #expect(check.step == 4 && check.mode == "echo" && check.lossPercent == nil && check.mos == nil)
        #expect(check.score.tonesFound == [400, 1020, 2200] && (check.score.snrDb ?? 0) > 15, "\(check.score)")
        #expect((check.score.delayMs ?? 10_000) < 300 && check.score.longestGapMs == 0, "\(check.score)")
        #expect(leg.source == .tone(hz: 1000, amplitude: 0.3))
    }

    @Test func lossyEchoShowsGaps() async throws {
        let echo = UDPEcho(period: 50, burst: 10)
        defer { echo.stop() }
        let leg = try ClientMediaLeg()
        defer { leg.stop() }
        leg.setRemote(SocketAddress(host: "127.0.0.1", port: echo.port))
        #expect(await eventually(timeout: 5) { leg.receivedPackets() > 0 }, "the echo is flowing")
        var step = AudioQualityStep(mode: .echo, durationSec: 2, within: 5)
        step.thresholds.maxGapMs = 10
        let (check, failure) = try Self.runner().measureAudio(step, step: 1, leg: leg, roomId: nil, codec: nil)
        print("AUDIO echo through Opus, 200 ms of every second dropped: \(check.score); \(failure ?? "")")
        // Opus concealment carries a steady multi-tone through the first frames of each
        // burst (the SNR hardly moves: the trunk's loss figure is what catches this), then fades.
        #expect(
            check.score.delayMs != nil && check.score.longestGapMs >= 20 && check.score.silentPercent > 2,
            "\(check.score)")
        #expect(
            !check.passed && failure?.hasPrefix("echoed audio: ") == true && failure?.contains("longest gap") == true,
            "\(failure ?? "")")
    }

    @Test func nothingComesBack() throws {
        let leg = try ClientMediaLeg()
        defer { leg.stop() }
        leg.setRemote(SocketAddress(host: "127.0.0.1", port: 9))
        let (check, failure) = try Self.runner().measureAudio(
            AudioQualityStep(mode: .echo, durationSec: 1, within: 1), step: 2,
            leg: leg, roomId: nil, codec: nil)
        #expect(failure == "one-way audio: none of our tones came back in 1 s (0 packets arrived)")
        #expect(!check.passed && check.score.tonesMissing == [400, 1020, 2200])
        let (_, carrier) = try Self.runner().measureAudio(
            AudioQualityStep(mode: .carrier, tones: [400], durationSec: 1, within: 0.5), step: 3,
            leg: leg, roomId: nil, codec: nil)
        #expect(carrier == "audio from the carrier: none of the 400 Hz signal arrived in 0.5 s (0 packets arrived)")
    }
}
