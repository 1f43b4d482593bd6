import Foundation
import IrisAPI
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// `irisgw call` and `irisgw answer`, the real binary with the contract's flags.
    @Suite struct GatewayCLITests {
        /// Starts the binary with `args`; its stdout (and stderr, with `mergeErrors`) goes to
        /// the child's output file.
        /// `irisgw serve` arguments for a start that is expected to be refused: a trunk profile
        /// and a data directory in `dir` (made here), listeners on ports from the OS.
        static func serveArguments(in dir: URL) throws -> [String] {
            let profiles = dir.appendingPathComponent("profiles")
            try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
            try GatewayProcess.Profile().json5.write(
                to: profiles.appendingPathComponent("trunk.json5"), atomically: true, encoding: .utf8)
            return [
                "serve", "--profiles", profiles.path, "--data-dir", dir.appendingPathComponent("data").path,
                "--sip-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0"
            ]
        }

        static func launch(_ args: [String], mergeErrors: Bool = false) throws -> ChildProcess {
            try ChildProcess(GatewayProcess.binary, args, discardingErrors: !mergeErrors)
        }

        /// Runs the binary to completion (bounded, SIGTERM at `timeout`); returns its status
        /// and stdout lines. Awaits the exit without holding a thread of the cooperative pool.
        static func run(_ args: [String], timeout: Double = 30) async throws -> (status: Int32, lines: [String]) {
            let p = try launch(args)
            defer { p.stop() }
            var status = await p.exit(timeout: timeout)
            if status == nil { status = await p.stopped(grace: 5) }
            return (status ?? -1, p.output.split(separator: "\n").map(String.init))
        }

        static func events(_ lines: [String]) -> [SessionEvent] {
            lines.compactMap { try? JSONDecoder().decode(SessionEvent.self, from: Data($0.utf8)) }
        }

        @Test func callPrintsJSONEventsAndExitsZeroWhenCompleted() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            let wav = gw.directory.appendingPathComponent("echo.wav").path
            let r = try await Self.run([
                "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir,
                "--tone", "440", "--record", wav, "--hangup-after", "1.5", "--json"
            ])
            #expect(r.status == 0, "\(r.lines)")
            let events = Self.events(r.lines)
            #expect(events.count == r.lines.count, "every line is one event: \(r.lines)")
            #expect(events.last?.event == .onSessionEnded && events.last?.reason == .completed)
            #expect(events.contains { $0.status == .connected })
            #expect(FileManager.default.fileExists(atPath: wav))
        }

        @Test func callExitsNonZeroWhenBusyAndPrintsHumanLines() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.reject("486 Busy Here", q850: 17))
            defer { gw.stop(); sipp.stop() }
            let r = try await Self.run([
                "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir
            ])
            #expect(r.status == 1, "\(r.lines)")
            #expect(r.lines.last?.contains("ended: busy (486 Busy Here, Q.850 cause 17)") == true, "\(r.lines)")
        }

        @Test func callRefusedByTheGatewayExitsThree() async throws {
            let gw = try await GatewayProcess(profiles: [.init(proxies: [9])])
            defer { gw.stop() }
            let r = try await Self.run([
                "call", "+447911123456", "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir
            ])
            #expect(r.status == 3)
            let usage = try await Self.run(["call", "--from", "+1555"])
            #expect(usage.status == 2)
        }

        @Test func answerRejectsAnInboundCall() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let answer = try Self.launch(
                [
                    "answer", "--routing-id", "alice", "--action", "reject", "--api", gw.apiURL,
                    "--data-dir", gw.dataDir, "--timeout", "20", "--json"
                ], mergeErrors: true)
            defer { answer.stop() }
            // The listener must be subscribed before the call arrives (said on stderr).
            #expect(
                await answer.waitForOutput(containing: "waiting for a call to alice", timeout: 10), "\(answer.output)")
            let sipp = try GatewayInboundTests.caller(gw, CallerScenarios.rejected(603))
            defer { sipp.stop() }
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
            #expect(await answer.exit(timeout: 10) == 0)
            let lines = answer.output.split(separator: "\n")
            #expect(Self.events(lines.map(String.init)).first?.type == "notify", "\(lines)")
        }
    }
}

extension GatewaySuites.GatewayCLITests {
    /// `--dtmf`, `--hold-after`, `--unhold-after` and `--hangup-after` in one call: the carrier
    /// sees the digits as RFC 4733 at its media socket, and the hold and resume re-INVITEs.
    @Test func callWithDTMFHoldAndUnhold() async throws {
        let media = try RTPSocketPeer()
        let (sipp, gw) = try await carrierAndGateway(
            CarrierScenarios.answer(
                acceptHoldAndResume: true,
                mediaAddress: "127.0.0.1:\(media.address.port)"))
        defer { gw.stop(); sipp.stop() }
        let drainer = Task.detached {
            while !Task.isCancelled { media.drain(); try? await Task.sleep(nanoseconds: 20_000_000) }  // pacing
        }
        defer { drainer.cancel() }
        let r = try await Self.run([
            "call", "+15551230001", "--from", "+15557654321", "--api", gw.apiURL, "--data-dir", gw.dataDir,
            "--dtmf", "42", "--hold-after", "1", "--unhold-after", "2", "--hangup-after", "3", "--json"
        ])
        #expect(r.status == 0, "\(r.lines)")
        let statuses = Self.events(r.lines).compactMap(\.status).map(\.rawValue)
        #expect(
            statuses == ["Initializing", "Connecting", "Connected", "Hold", "Connected", "Disconnected"], "\(r.lines)")
        media.drain()
        #expect(GatewaySuites.GatewayInCallTests.digits(media.packets(payloadType: 101)) == "42")
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
    }

    @Test func answerAcceptsAndExitsZeroWhenTheCallerHangsUp() async throws {
        let gw = try await GatewayProcess(profiles: [.init()])
        defer { gw.stop() }
        let answer = try Self.launch(
            [
                "answer", "--routing-id", "alice", "--api", gw.apiURL, "--data-dir", gw.dataDir,
                "--tone", "500", "--timeout", "20", "--json"
            ], mergeErrors: true)
        defer { answer.stop() }
        #expect(await answer.waitForOutput(containing: "waiting for a call to alice", timeout: 10), "\(answer.output)")
        let sipp = try GatewaySuites.GatewayInboundTests.caller(gw, CallerScenarios.answered(talkMs: 1000))
        defer { sipp.stop() }
        #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
        #expect(await answer.exit(timeout: 10) == 0)
        let events = Self.events(answer.output.split(separator: "\n").map(String.init))
        #expect(events.filter { $0.event == .onNotification }.count == 1)
        #expect(events.last?.event == .onSessionEnded && events.last?.reason == .completed)
    }
}
