import Foundation
import Glibc
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

/// Faults a production gateway meets: a kill with calls up, a drain behind a balancer.
extension GatewaySuites {
    @Suite struct GatewayFaultTests {
        static func health(_ gw: GatewayProcess) async -> (status: Int, text: String)? {
            guard let r = try? await HTTPClient(baseURL: gw.apiURL).request(method: "GET", path: "/healthz", timeout: 2)
            else { return nil }
            return (r.status, String(decoding: r.body, as: UTF8.self))
        }

        /// SIGKILL with calls up, then a restart on the same data: every record is closed as
        /// failed at the last second the gateway was alive (not at its answer), the carrier
        /// gets a BYE with a Reason for every dialog, and the API key is the same.
        @Test func aKillWithCallsUpIsCleanedUpAtRestart() async throws {
            let calls = 5
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), calls: calls)
            defer { gw.stop(); sipp.stop() }
            var sessions: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { sessions.forEach { $0.0.stop() } }
            for _ in 0..<calls { sessions.append(try await placedSession(gw)) }
            let answeredBy = Date().timeIntervalSince1970
            // Up for a while, so a duration lost at the kill would show.
            // call time that a kill must not lose: the behaviour, not a wait
            try await Task.sleep(for: .milliseconds(2500))
            #expect(await gw.signal(SIGKILL) != nil)
            let killedAt = Date().timeIntervalSince1970

            let restarted = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [sipp.port])], after: gw)
            defer { restarted.stop() }
            #expect(restarted.apiKey == gw.apiKey, "the key survives the restart")
            // The carrier had every call BYEd and answered them all: SIPp ends cleanly.
            #expect(await sipp.waitForExit(timeout: 20) == 0, sipp.report)
            #expect(sipp.messages.components(separatedBy: "gateway restarted").count - 1 >= calls, sipp.report)
            let records = try await restarted.recordsAfterStop()
            #expect(records.count == calls)
            for r in records {
                #expect(r.endReason == "failed" && r.sipReason == "gateway restarted", "\(r)")
                let duration = r.durationSec ?? 0
                #expect(
                    duration >= 1.5 && r.endedAt! <= killedAt + 1,
                    "ended \(r.endedAt ?? 0), answered \(r.answeredAt ?? 0), by \(answeredBy)")
            }
        }

        /// SIGTERM drains: the call in progress goes on, and /healthz says 503 draining, so a
        /// balancer stops sending new calls before the gateway refuses them.
        @Test func aDrainingGatewaySaysSoOnItsHealthCheck() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), gatewayArguments: ["--drain-timeout", "20"])
            defer { gw.stop(); sipp.stop() }
            #expect(await Self.health(gw)?.status == 200)
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            kill(gw.processID, SIGTERM)
            var seen: (status: Int, text: String)?
            #expect(
                await eventually(timeout: 10) {
                    seen = await Self.health(gw)
                    return seen?.status == 503
                })
            #expect(seen?.text.contains("draining") == true, "\(String(describing: seen))")
            // The call is still up; new ones are refused with -503.
            #expect(rec.events.allSatisfy { $0.event != .onSessionEnded })
            let other = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            defer { other.stop() }
            #expect(throws: IrisError.self) {
                try other.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321")
            }
            try await session.close()
            #expect(await rec.waitFor { $0.contains { $0.event == .onSessionEnded } })
            #expect(await eventually(timeout: 10) { !gw.isRunning })
        }

        /// `/metrics`' value of `name` (a metric without labels), -1 when unreadable.
        static func metric(_ gw: GatewayProcess, _ name: String) async -> Int {
            guard
                let r = try? await HTTPClient(
                    baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey]
                )
                .request(method: "GET", path: "/metrics", timeout: 5)
            else { return -1 }
            return String(decoding: r.body, as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        }

        /// The record store's disk fills up: calls go on, the writes wait (stderr and
        /// /metrics say so), and once there is room again every record is there.
        @Test func aFullDiskKeepsCallsGoingAndTheRecordsCatchUp() async throws {
            let mount = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-full-\(UUID().uuidString.prefix(8))"
            ).path
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: mount) }
            try await run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount])
            defer { umount2(mount, Int32(MNT_DETACH)) }  // `umount -l`, as a call: a defer cannot await a process

            let calls = 3
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(), calls: calls, dataDir: mount + "/data")
            defer { gw.stop(); sipp.stop() }
            // Fill what is left of the file system.
            let filler = mount + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let block = [UInt8](repeating: 0, count: 65_536)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)

            for _ in 0..<calls {
                let (session, rec) = try await placedSession(gw)
                try await session.close()
                #expect(await rec.waitFor { $0.contains { $0.event == .onSessionEnded } }, "\(rec.trace)")
                session.stop()
            }
            #expect(await eventually(timeout: 10) { await Self.metric(gw, "irisgw_record_writes_pending") > 0 })
            #expect(await gw.waitForOutput(containing: "until the disk takes them", timeout: 10), "\(gw.printed)")
            #expect(await Self.metric(gw, "irisgw_record_writes_lost_total") == 0)

            try FileManager.default.removeItem(atPath: filler)
            #expect(await eventually(timeout: 10) { await Self.metric(gw, "irisgw_record_writes_pending") == 0 })
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            let records = try await gw.recordsAfterStop()
            #expect(records.count == calls && records.allSatisfy { $0.endReason == "completed" }, "\(records)")
        }

        private func run(_ tool: String, _ arguments: [String]) async throws {
            guard try await ChildProcess.run(tool, arguments).status == 0 else {
                throw SocketError("\(tool) \(arguments.joined(separator: " "))", code: EINVAL)
            }
        }
    }
}
