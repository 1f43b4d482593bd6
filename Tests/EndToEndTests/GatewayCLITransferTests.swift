import Foundation
import TestSupport
import Testing

extension GatewaySuites {
    /// `irisgw call --transfer-to TN [--transfer-after S]`, the real binary: what can be
    /// checked without the gateway's transfer (the options' parsing and `--help`).
    @Suite struct GatewayCLITransferTests {
        /// Runs the binary to its exit (SIGTERM at `timeout`) with stderr in the output and
        /// an API key in the environment; its status and everything it printed.
        static func run(_ args: [String], timeout: Double = 20) async throws -> (status: Int32, output: String) {
            let p = try ChildProcess(
                GatewayProcess.binary, args,
                environment: ProcessInfo.processInfo.environment.merging(["IRISGW_API_KEY": "k"]) { $1 })
            defer { p.stop() }
            var status = await p.exit(timeout: timeout)
            if status == nil { status = await p.stopped(grace: 5) }
            return (status ?? -1, p.output)
        }

        static let call = ["call", "+15551230001", "--from", "+15557654321"]

        @Test func helpListsBothOptions() async throws {
            let r = try await Self.run(["call", "--help"])
            #expect(r.status == 0, "\(r.output)")
            #expect(r.output.contains("[--transfer-to TN [--transfer-after S]]"), "\(r.output)")
            #expect(r.output.contains("--transfer-to TN     blind transfer"), "\(r.output)")
            #expect(r.output.contains("--transfer-after S   when to ask"), "\(r.output)")
        }

        @Test(arguments: [
            (
                ["--transfer-to", "+15551230002", "--transfer-after", "soon"],
                #"--transfer-after needs seconds (a number, 0 or more), found "soon""#
            ),
            (
                ["--transfer-to", "+15551230002", "--transfer-after", "-1"],
                #"--transfer-after needs seconds (a number, 0 or more), found "-1""#
            ),
            (
                ["--transfer-to", "+15551230002", "--transfer-after", "inf"],
                #"--transfer-after needs seconds (a number, 0 or more), found "inf""#
            ),
            (
                ["--transfer-to", "+15551230002", "--transfer-after", "nan"],
                #"--transfer-after needs seconds (a number, 0 or more), found "nan""#
            ),
            (["--transfer-to", "+15551230002", "--transfer-after"], "--transfer-after needs a value"),
            (["--transfer-after", "2"], "--transfer-after needs --transfer-to"),
            (["--transfer-to", ""], "--transfer-to needs a number"),
            (["--transfer-to"], "--transfer-to needs a value"),
            // The media-service options share the parsing (docs/api.md, "Media services").
            (["--amd", "guess"], "--amd is detect or detectBeep"),
            (["--recording", "mp3"], "--recording is wav or ogg"),
            (["--agent"], "--agent needs a value")
        ])
        func badTransferOptionsAreUsageErrors(_ extra: [String], _ message: String) async throws {
            let r = try await Self.run(Self.call + extra)
            #expect(r.status == 2, "\(r.output)")
            #expect(r.output.contains("irisgw call: \(message)\n"), "\(r.output)")
            #expect(r.output.contains("usage: irisgw call"), "\(r.output)")
        }

        /// Good values get past the parsing to the gateway (none listens here: exit 3).
        @Test(arguments: [
            ["--transfer-to", "+15551230002"], ["--transfer-to", "+15551230002", "--transfer-after", "1.5"]
        ])
        func goodTransferOptionsReachTheGateway(_ extra: [String]) async throws {
            let api = "http://127.0.0.1:\(try freePort())"
            let r = try await Self.run(Self.call + extra + ["--api", api])
            #expect(r.status == 3, "\(r.output)")
            #expect(r.output.contains("cannot reach the gateway"), "\(r.output)")
        }
    }
}
