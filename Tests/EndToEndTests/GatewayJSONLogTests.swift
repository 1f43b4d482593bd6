import Foundation
import Glibc
import IrisAPI
import IrisClient
import TestSupport
import Testing

extension GatewaySuites {
    /// `irisgw serve --log-format json` with a real carrier (`irisgw carrier-sim`) asking for
    /// digest auth: one call each way; stderr is all JSON, each call's start and end carry its
    /// ids, and no secret reaches either stream.
    @Suite struct GatewayJSONLogTests {
        @Test func jsonLogHasEachCallAndNoSecret() async throws {
            let password = "sim-pw-\(UUID().uuidString.prefix(12))"
            let sim = try await CarrierSimProcess(arguments: ["--password", password])
            defer { sim.stop() }
            var profile = GatewayProcess.Profile(proxies: [sim.port])
            profile.auth = (user: "gw", env: "CARRIER_SIM_PASSWORD")
            let gw = try await GatewayProcess(
                profiles: [profile], environment: ["CARRIER_SIM_PASSWORD": password],
                extraArguments: ["--log-format", "json", "--log-level", "info,records=debug"], stderrApart: true)
            defer { gw.stop() }

            // Outbound to the number that answers only with credentials (407, then digest).
            let trace = "log-test-\(UUID().uuidString.prefix(8))"
            let rec = SessionRecorder()
            let out = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .silence), delegate: rec)
            defer { out.stop() }
            try await out.createWithTN(targetTN: "+15550100012", sourceTN: "+15557654321", traceId: trace)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sim.lines)")
            try await out.close()
            #expect(await rec.waitFor { _ in rec.ended != nil }, "\(rec.trace)")

            // Inbound from the simulator, joined with the notification's room token.
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let caller = try GatewaySuites.GatewayCLITests.launch([
                "carrier-sim", "call", "+15550001000", "--from", "+15559876543", "--to", "127.0.0.1:\(gw.sipPort)",
                "--hangup-after", "1"
            ])
            defer { caller.stop() }
            let note = try #require(await listener.next(timeout: 10))
            let roomToken = try #require(note.roomtoken)
            let inbound = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .silence), delegate: nil)
            defer { inbound.stop() }
            try await inbound.join(roomId: try #require(note.roomid), roomToken: roomToken)
            #expect(await inbound.waitForEnd(timeout: 10))

            let outRoom = try #require(out.roomId)
            let inRoom = try #require(note.roomid)
            // Both end lines are written before the sessions' ends are published; SIGINT then
            // adds the shutdown's lines, if any.
            #expect(await gw.signal(SIGINT) == 0)
            let stderr = gw.errors, stdout = gw.printed
            let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(stderr.hasSuffix("\n") && !lines.isEmpty, "\(stderr)")
            var objects: [[String: Any]] = []
            for line in lines {
                let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                #expect(object != nil, "not a JSON object: \(line)")
                guard let object else { continue }
                #expect(
                    ["time", "level", "component", "msg"].allSatisfy { object[$0] is String }
                        && (object["time"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil,
                    "\(line)")
                objects.append(object)
            }
            func line(_ msg: String, room: String) -> [String: Any]? {
                objects.first {
                    $0["component"] as? String == "calls" && ($0["msg"] as? String)?.hasPrefix(msg) == true
                        && $0["roomId"] as? String == room
                }
            }
            let outStart = line("call started", room: outRoom), outEnd = line("call ended", room: outRoom)
            #expect(outStart?["traceId"] as? String == trace && outEnd?["traceId"] as? String == trace, "\(stderr)")
            #expect(outStart?["direction"] as? String == "outbound" && outStart?["profile"] as? String == "trunk")
            #expect(outStart?["to"] as? String == "+15550100012" && (outStart?["callId"] as? String)?.isEmpty == false)
            #expect(outEnd?["reason"] as? String == "completed" && outEnd?["durationMs"] is Int, "\(stderr)")
            let inStart = line("call started", room: inRoom), inEnd = line("call ended", room: inRoom)
            #expect(inStart?["direction"] as? String == "inbound" && inStart?["routingId"] as? String == "alice")
            #expect(
                inStart?["traceId"] as? String != nil && inStart?["traceId"] as? String == inEnd?["traceId"] as? String
                    && inStart?["callId"] as? String == inEnd?["callId"] as? String, "\(stderr)")
            #expect(inEnd?["sipStatus"] == nil || inEnd?["sipStatus"] is Int, "\(stderr)")

            // No secret on either stream: the API key, the digest password, the room token.
            for secret in [gw.apiKey, password, roomToken] {
                #expect(!stderr.contains(secret) && !stdout.contains(secret), "a secret was printed")
            }
            // stdout keeps its readiness lines as they were.
            #expect(stdout.contains("\nready\n") && stdout.contains("listening api "), "\(stdout)")
        }
    }
}

/// A bad `--log-format`, `--log-level` or log key stops `irisgw serve` before it opens
/// anything, naming the flag (exit 2, with the usage) or the file and key (exit 1); with
/// `--log-format json` the refusal itself is a JSON line.
@Test func badLogSettingsAreRefused() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-log-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let config = dir.appendingPathComponent("serve.json5")
    try #"{ logLevels: { sip: "loud" } }"#.write(to: config, atomically: true, encoding: .utf8)
    let data = dir.appendingPathComponent("data").path
    for (args, status, says) in [
        (["--log-format", "xml"], Int32(2), "irisgw serve: --log-format needs text or json"),
        (["--log-level", "sip=loud"], 2, "irisgw serve: --log-level: unknown log level \"loud\""),
        (["--log-level", "rtp=debug"], 2, "irisgw serve: --log-level: unknown log component \"rtp\""),
        (["--config", config.path], 1, "logLevels.sip: must be one of"),
        (
            ["--log-format", "json", "--log-level", "loud"], 2,
            #""level":"error","component":"gateway","msg":"--log-level"#
        )
    ] {
        let r = try await ChildProcess.run(GatewayProcess.binary, ["serve", "--data-dir", data] + args, timeout: 20)
        #expect(r.status == status && r.output.contains(says), "\(args): \(r.output)")
        if args.first == "--log-format" && args.contains("json") {
            #expect(r.output.split(separator: "\n").count == 1 && !r.output.contains("usage:"), "\(r.output)")
        }
    }
    #expect(!FileManager.default.fileExists(atPath: data), "nothing was made")
}
