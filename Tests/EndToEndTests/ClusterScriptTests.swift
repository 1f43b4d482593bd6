import Foundation
import Glibc
import TestSupport
import Testing

/// The repository's `cluster/` folder (where Kamailio's configuration is).
private let clusterFolder = URL(fileURLWithPath: Kamailio.configuration).deletingLastPathComponent()

extension GatewaySuites {
    /// `make cluster`'s script, run as it is: Redis, Kamailio, three nodes and the carrier
    /// simulator on this machine, one call through node 2, and nothing left afterwards.
    @Suite(
        .enabled(
            if: Kamailio.isInstalled && FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server"),
            "needs kamailio and redis-server"),
        .timeLimit(.minutes(4)))
    struct ClusterScriptTests {
        @Test func selfTestPlacesACallThroughTheClusterAndLeavesNoProcess() async throws {
            var environment = ProcessInfo.processInfo.environment
            environment["IRISGW_BIN"] = GatewayProcess.binary
            environment["IRISGW_CLUSTER_SELFTEST"] = "1"
            environment["IRISGW_CLUSTER_KEEP"] = nil
            let script = try ChildProcess(
                "/bin/bash", [clusterFolder.appendingPathComponent("run-local.sh").path], environment: environment,
                unblockingSignals: true)
            defer { script.stop(grace: 15) }
            let status = await script.exit(timeout: 180)
            let output = script.output
            #expect(status == 0, "\(output)")
            #expect(output.contains("selftest: passed"), "\(output)")
            // Out through gw2 and Kamailio to the simulator, and in from 127.0.0.2 through Kamailio.
            #expect(output.contains("ended: completed"), "\(output)")
            #expect(output.contains("summary: 1 calls, 1 answered, 1 ended normally, 0 failed"), "\(output)")
            #expect(output.contains("run-local: stopped"), "\(output)")
            // Everything it started: redis, the simulator, three nodes, Kamailio.
            let pidLine = try #require(output.split(separator: "\n").first { $0.hasPrefix("pids: ") }, "\(output)")
            let pids = pidLine.dropFirst("pids: ".count).split(separator: " ").compactMap { pid_t($0) }
            #expect(pids.count == 6, "\(pidLine)")
            for pid in pids {
                let gone = kill(pid, 0) == -1 && errno == ESRCH
                #expect(gone, "pid \(pid) is still there\n\(output)")
            }
            let folder = try #require(
                output.split(separator: "\n").first { $0.contains("files in /tmp/irisgw-cluster.") }, "\(output)")
            let path = String(folder.split(separator: "files in ").last?.dropLast(2) ?? "")
            #expect(path.hasPrefix("/tmp/irisgw-cluster.") && !FileManager.default.fileExists(atPath: path), "\(path)")
            // Nor any process named by its folder: Kamailio's workers, the apps of the self-test.
            let left = try await ChildProcess.run("/usr/bin/pgrep", ["-af", path], timeout: 10)
            #expect(left.output.isEmpty, "still running: \(left.output)")
        }
    }
}

/// The systemd units in `cluster/systemd/` as systemd reads them, and the settings the
/// operations guide promises. The node's unit is a template of packaging (`irisgw@.service.in`):
/// `PackagingTests` verifies it as installed.
@Suite(
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") && Kamailio.isInstalled,
        "needs systemd-analyze (Debian's systemd package) and kamailio; nothing is installed for it"))
struct SystemdUnitTests {
    static let folder = clusterFolder.appendingPathComponent("systemd")

    static func unit(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    /// The value of `key=` in `unit`, nil when absent.
    static func value(_ key: String, in unit: String) -> String? {
        unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    @Test func systemdAnalyzeVerifiesKamailiosUnit() async throws {
        let r = try await ChildProcess.run(
            "/usr/bin/systemd-analyze", ["verify", Self.folder.appendingPathComponent("irisgw-kamailio.service").path],
            timeout: 60)
        // Any warning (an unknown key, a bad value) is printed even when the status is 0.
        #expect(r.status == 0 && r.output.isEmpty, "\(r.output)")
    }

    @Test func theNodeUnitDrainsWithinItsStopTimeout() throws {
        let node = try Self.unit("irisgw@.service.in")
        #expect(Self.value("ExecStart", in: node) == "@BINDIR@/irisgw serve --config @SYSCONFDIR@/irisgw/%i.json5")
        #expect(Self.value("ExecReload", in: node) == "/bin/sh -c 'kill -HUP \"$MAINPID\"'")
        #expect(Self.value("KillSignal", in: node) == "SIGTERM")
        // Longer than the default drainTimeoutSec (30) and the guide's example (60).
        let stop = try #require(Self.value("TimeoutStopSec", in: node).flatMap { Int($0) })
        #expect(stop > 60)
        #expect(Self.value("Restart", in: node) == "on-failure")
        #expect(Self.value("AmbientCapabilities", in: node) == "CAP_SYS_NICE")
        #expect(Self.value("LimitRTPRIO", in: node) != nil && Self.value("LimitNOFILE", in: node) != nil)
        #expect(Self.value("User", in: node) == "irisgw")
        let kamailio = try Self.unit("irisgw-kamailio.service")
        #expect(Self.value("ExecStart", in: kamailio)?.contains("-f /etc/irisgw/kamailio.cfg -DD -E -m ") == true)
    }
}
