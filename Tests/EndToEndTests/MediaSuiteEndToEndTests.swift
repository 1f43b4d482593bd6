import CarrierTest
import Foundation
import TestSupport
import Testing

extension GatewaySuites {
    /// The media-service steps with the real `irisgw test`, through a real gateway whose trunk
    /// is `irisgw carrier-sim`: the shipped media suite passes, and a suite that expects the
    /// wrong things fails with messages that say what was found.
    @Suite struct MediaSuiteEndToEndTests {
        static func start() async throws -> (CarrierSimProcess, GatewayProcess) {
            let sim = try await CarrierSimProcess()
            do {
                return (sim, try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])]))
            } catch {
                sim.stop()
                throw error
            }
        }

        static func run(
            _ suite: String, _ gw: GatewayProcess, name: String
        ) async throws -> (
            status: Int32, lines: [String], results: [TestCallResult]
        ) {
            let json = gw.directory.appendingPathComponent("\(name).json").path
            let r = try await GatewayCLITests.run(
                [
                    "test", "--profile", "trunk", "--suite", suite, "--parallel", "6", "--api", gw.apiURL, "--data-dir",
                    gw.dataDir,
                    "--json", json
                ], timeout: 90)
            struct Report: Decodable { var results: [TestCallResult] }
            let report = try? JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            return (r.status, r.lines, report?.results ?? [])
        }

        /// Every test passes: the recordings were read back (WAV stereo, Ogg mono), the forks
        /// delivered both tracks' tone to the suite's own server, the simulator's person,
        /// voicemail (and its beep) and fax were told apart.
        @Test(.timeLimit(.minutes(2)))
        func shippedMediaSuitePassesAgainstTheSimulator() async throws {
            let (sim, gw) = try await Self.start()
            defer {
                gw.stop()
                sim.stop()
            }
            let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/media.json5").path
            let r = try await Self.run(suite, gw, name: "media")
            let printed = r.lines.joined(separator: "\n")
            #expect(r.status == 0, "\(printed)")
            #expect(r.lines.contains { $0.hasPrefix("5 passed, 0 failed") }, "\(printed)")
            #expect(
                r.lines.contains { $0.contains("stream both to the suite's WebSocket with the 1000 Hz tone ok") },
                "\(printed)")
            for verdict in ["human", "machine", "fax"] {
                #expect(r.lines.contains { $0.contains("expect AMD \(verdict)") && $0.contains(" ok (") }, "\(printed)")
            }
            #expect(r.results.count == 5 && r.results.allSatisfy(\.passed), "\(printed)")
            #expect(r.results.allSatisfy { $0.endReason == "completed" }, "\(printed)")
        }

        /// The wrong verdict, a tone the call does not carry, and the wrong channel count:
        /// each test fails at its step, saying what came.
        @Test(.timeLimit(.minutes(2)))
        func wrongExpectationsFailNamingWhatCame() async throws {
            let (sim, gw) = try await Self.start()
            defer {
                gw.stop()
                sim.stop()
            }
            let suite = gw.directory.appendingPathComponent("wrong.json5").path
            try """
            { name: "wrong",
              tests: [
                { name: "human", target: "+15550100001", silent: true, amd: "detect",
                  steps: [ { expect: "Connected" }, { expectAMD: "human", withinSec: 8 } ] },
                { name: "other tone", target: "+15550100001",
                  steps: [ { expect: "Connected" }, { stream: { minAudioSec: 0.5, toneHz: 2000, withinSec: 3 } } ] },
                { name: "mono", target: "+15550100001", recording: { channels: 2 },
                  steps: [ { expect: "Connected" }, { wait: 1 }, { hangup: true }, { expectEnd: "completed" },
                           { expectRecording: { channels: 1 }, withinSec: 1 } ] },
              ] }
            """.write(toFile: suite, atomically: true, encoding: .utf8)
            let r = try await Self.run(suite, gw, name: "wrong")
            let printed = r.lines.joined(separator: "\n")
            #expect(r.status == 1, "\(printed)")
            #expect(r.results.count == 3 && r.results.allSatisfy { !$0.passed }, "\(printed)")
            let failures = r.results.map { "\($0.failedStep ?? 0): \($0.failure ?? "")" }
            #expect(failures[0].hasPrefix("2: expected AMD human; got machine (initialSilence, after "), "\(failures)")
            #expect(
                failures[1].hasPrefix("2: the stream to ws://127.0.0.1:")
                    && failures[1].contains("within 3.0 s: the 2000 Hz tone holds ")
                    && failures[1].hasSuffix("% of the inbound audio (expected most of it)"), "\(failures)")
            #expect(
                failures[2].hasPrefix("5: the recording within 1.0 s: expected 1 channel; got a 2-channel wav of "),
                "\(failures)")
        }
    }
}
