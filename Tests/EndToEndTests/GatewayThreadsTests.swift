import Foundation
import Testing

extension GatewaySuites {
    /// Media threads come from the CPUs the process may use, not the machine's: under
    /// `taskset -c 0` the gateway runs one, and the `mediaThreads` setting overrides.
    @Suite struct GatewayThreadsTests {
        @Test func oneCPUInTheAffinityMaskGivesOneMediaThread() async throws {
            try #require(
                FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), "taskset (util-linux) is needed")
            let gw = try await GatewayProcess(profiles: [.init()], launcher: ["/usr/bin/taskset", "-c", "0"])
            defer { gw.stop() }
            #expect(
                gw.lines.contains { $0.hasPrefix("media threads 1; usable CPUs 1 (affinity 1, cgroup quota ") },
                "\(gw.printed)")
            #expect(await GatewayFaultTests.metric(gw, "irisgw_media_threads") == 1)
        }

        @Test func theSettingOverrides() async throws {
            let gw = try await GatewayProcess(
                profiles: [.init()], config: "{ mediaThreads: 3 }", launcher: ["/usr/bin/taskset", "-c", "0"])
            defer { gw.stop() }
            #expect(gw.lines.contains("media threads 3 (mediaThreads setting)"), "\(gw.printed)")
            #expect(await GatewayFaultTests.metric(gw, "irisgw_media_threads") == 3)
            // The media I/O path: io_uring on this kernel unless the setting asks for epoll.
            #expect(gw.lines.contains("media io uring"), "\(gw.printed)")
        }

        @Test func mediaIOEpollIsHonoured() async throws {
            let gw = try await GatewayProcess(profiles: [.init()], config: "{ mediaIO: \"epoll\", mediaThreads: 1 }")
            defer { gw.stop() }
            #expect(gw.lines.contains("media io epoll"), "\(gw.printed)")
        }
    }
}
