// The relay load generator (`irisgw-bench media-gen`) over both of its I/O paths, io_uring and
// epoll: with each leg's socket sending to the other leg's, a loopback "engine" that relays
// every packet, it counts every stream whole and finds every probe burst no earlier than it was
// sent. The path under test is the one the report names.

import Foundation
import Glibc
import IOCore
import TestSupport
import Testing

@testable import irisgw_bench

@Suite(.serialized) struct GeneratorIOTests {
    @Test(arguments: [GeneratorIO.Preference.uring, .epoll])
    func aLoopbackRelayIsCountedWholeWithItsProbe(io: GeneratorIO.Preference) async throws {
        var o = MediaLoadGenerator.Options()
        o.calls = 3
        o.mode = .relay
        o.warmup = 0.2
        o.seconds = 1.0
        o.probe = true
        o.enginePID = getpid()
        o.io = io
        let report = try await offThePool { () throws -> GeneratorReport in
            let run = try MediaLoadGenerator.Run(o)
            // Each leg sends to its call's other leg: its packets come back from the port it
            // was told is the engine's.
            let targets = run.localPorts.map { (trunk: $0.1, platform: $0.0, payloadType: UInt8(0)) }
            return try run.run(targets: targets)
        }
        #expect(report.generatorIO == io.rawValue)
        #expect(report.admitted == 3)
        #expect(report.sentPerStream >= 40, "50 packets a second per leg in the 1 s window")
        #expect(report.streamsOutOfTolerance == 0, "\(report.streamsOff)")
        #expect(report.received >= 6 * (report.sentPerStream - 3))
        #expect(!report.trunkToPlatformMs.isEmpty && !report.platformToTrunkMs.isEmpty)
        // A burst is found after it was sent (within the onset finder's sample rounding).
        #expect((report.trunkToPlatformMs + report.platformToTrunkMs).allSatisfy { $0 > -1 }, "\(report)")
    }

    /// Transcode mode reads the TOC of the Opus that comes back on the platform legs (what an
    /// engine's encoder coded): here each leg sends to itself, so the platform legs get the
    /// generator's own browser Opus back, hybrid fullband (configuration 15).
    @Test func theOpusThatComesBackIsReadByItsTOC() async throws {
        var o = MediaLoadGenerator.Options()
        o.calls = 2
        o.mode = .transcode
        o.warmup = 0.2
        o.seconds = 0.6
        o.enginePID = getpid()
        let report = try await offThePool { () throws -> GeneratorReport in
            let run = try MediaLoadGenerator.Run(o)
            let targets = run.localPorts.map { (trunk: $0.0, platform: $0.1, payloadType: UInt8(111)) }
            return try run.run(targets: targets)
        }
        #expect(report.engineOpusConfigs == report.platformOpusConfigs, "\(report)")
        #expect(report.engineOpusConfigs == [15])
        #expect(abs(report.engineOpusBytes - report.platformOpusBytes) < 10, "\(report)")
    }

    @Test func anUnknownIOPathIsRefused() throws {
        #expect(throws: MediaLoadGenerator.GeneratorError.self) {
            try MediaLoadGenerator.main(["--io", "kqueue"])
        }
    }
}
