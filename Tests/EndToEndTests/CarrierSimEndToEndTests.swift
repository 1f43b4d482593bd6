import CarrierTest
import Foundation
import Glibc
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

/// `irisgw carrier-sim` as a process: its SIP port read from `listening sip udp`, `stop()`
/// (SIGINT, then SIGKILL) in a `defer`.
final class CarrierSimProcess: @unchecked Sendable {
    private let process: ChildProcess
    private(set) var port = 0

    init(arguments: [String] = []) async throws {
        process = try ChildProcess(GatewayProcess.binary, ["carrier-sim", "--listen", "127.0.0.1:0"] + arguments)
        _ = await eventually(timeout: 10) { [process] in !process.isRunning || process.output.hasSuffix("ready\n") }
        let lines = self.lines
        if let l = lines.first(where: { $0.hasPrefix("listening sip udp ") }),
            let p = l.split(separator: ":").last.flatMap({ Int($0) })
        {
            port = p
        }
        guard lines.contains("ready"), port > 0 else {
            stop()
            throw SocketError("carrier-sim did not start: \(lines.joined(separator: " | "))", code: EINVAL)
        }
    }

    /// Every line it printed so far.
    var lines: [String] { process.output.split(separator: "\n").map(String.init) }

    /// SIGINT, SIGKILL 5 s later if it still runs (without waiting).
    func stop() { process.stop(signal: SIGINT, grace: 5) }
}

extension GatewaySuites {
    /// The built-in carrier simulator behind a real `irisgw serve`, the Swift client as the app.
    @Suite struct CarrierSimEndToEndTests {
        @Test func echoNumberAndBusyNumberThroughTheGateway() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }

            // +15550100001: answered after ~1 s, our 440 Hz comes back through the echo.
            let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(
                gw, target: "+15550100001",
                source: .tone(hz: 440, amplitude: 0.3)
            ) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sim.lines)")
                var at440 = 0.0
                _ = await eventually(timeout: 5) {
                    at440 = session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.5)
                    return at440 > 0.3
                }
                #expect(at440 > 0.3, "440 Hz level \(at440)")
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.trace)")

            // +15550100002: 486 with Q.850 cause 17.
            let (busy, _) = try await GatewaySuites.GatewayOutboundTests.call(gw, target: "+15550100002")
            #expect(busy.trace.last == "ended:busy", "\(busy.trace)")
            #expect(busy.ended?.sip?.code == 486)
            #expect(busy.ended?.sip?.cause == 17)
        }
    }
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// The shipped basic suite against the simulator, through a real gateway, with the real
    /// `irisgw test`: every number behaves as the table says, and the reports agree.
    @Test(.timeLimit(.minutes(3)))
    func shippedBasicSuitePassesAgainstTheSimulator() async throws {
        let sim = try await CarrierSimProcess()
        defer { sim.stop() }
        var profile = GatewayProcess.Profile(proxies: [sim.port])
        profile.auth = ("gw", "SIM_PASSWORD")
        let gw = try await GatewayProcess(profiles: [profile], environment: ["SIM_PASSWORD": "carrier-sim"])
        defer { gw.stop() }
        let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/basic.json5").path
        let junit = gw.directory.appendingPathComponent("basic.xml").path
        let r = try await GatewaySuites.GatewayCLITests.run(
            [
                "test", "--profile", "trunk", "--suite", suite, "--parallel", "8", "--api", gw.apiURL,
                "--data-dir", gw.dataDir, "--junit", junit
            ], timeout: 120)
        #expect(r.status == 0, "\(r.lines.joined(separator: "\n"))\n\(sim.lines.suffix(20).joined(separator: "\n"))")
        #expect(r.lines.contains { $0.hasPrefix("14 passed, 0 failed") }, "\(r.lines)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("tests=\"14\" failures=\"0\""))
    }
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// Each misbehaving test of the shipped suite, and a piece of the message its failure
    /// must carry: the message names what was wrong, not just the step.
    static let misbehaviours: [(test: String, step: Int, message: String)] = [
        ("two-way audio", 2, "no audio from the carrier (expected our 1000 Hz tone back within 3.0 s)"),
        ("one-way audio", 2, "one-way audio: audio arrives from the carrier ("),
        ("one-way audio", 2, " packets) but our 1000 Hz tone does not come back"),
        ("late media", 2, "late media: no audio from the carrier 1."),
        ("late media", 2, " s after the answer"),
        ("cause fits the SIP code", 1, "Q.850 cause 1 contradicts 486 Busy Here (expected one of 17)"),
        ("codec as answered", 2, "the carrier sends RTP payload type 8 but its answer chose PCMU (0)"),
        ("early media then an answer", 2, "early media for "),
        ("early media then an answer", 2, " s and no answer"),
        ("stays up", 2, "the carrier ended the call "),
        ("stays up", 2, " s after the answer (BYE, cause 16) before the test did"),
        ("post-dial delay", 1, "post-dial delay "),
        ("post-dial delay", 1, " s over the 2.0 s limit (no 100 Trying or 18x within it; its 100 Trying came after 4."),
        ("post-dial delay", 1, "; our INVITE was sent again "),
        ("stays up", 2, "after our ACK: the ACK never reached it"),
        ("audio quality", 2, " % over 2 %")
    ]

    /// The shipped misbehaving suite through a real gateway and `irisgw carrier-sim`: every
    /// misbehaviour fails its test with the message that names it; the lossy number shows
    /// its loss and jitter in the gateway's trunk counters. Then a clean suite with the same
    /// checks passes against well-behaved numbers.
    @Test(.timeLimit(.minutes(3)))
    func misbehavingSuiteNamesEachFault() async throws {
        let sim = try await CarrierSimProcess()
        defer { sim.stop() }
        let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
        defer { gw.stop() }
        let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/misbehaving.json5").path
        let json = gw.directory.appendingPathComponent("report.json").path
        let r = try await GatewaySuites.GatewayCLITests.run(
            [
                "test", "--profile", "trunk", "--suite", suite, "--parallel", "9", "--api", gw.apiURL,
                "--data-dir", gw.dataDir, "--json", json
            ], timeout: 150)
        let printed = r.lines.joined(separator: "\n")
        #expect(r.status == 1, "\(printed)")
        struct Report: Decodable { var passed: Bool; var results: [TestCallResult] }
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        #expect(!report.passed && report.results.count == 9)
        for (name, step, message) in Self.misbehaviours {
            let result = report.results.first { $0.test == name }
            #expect(result?.passed == false && result?.failedStep == step, "\(name): \(result?.failure ?? "missing")")
            #expect(result?.failure?.contains(message) == true, "\(name): \(result?.failure ?? "missing")\n\(printed)")
            #expect(r.lines.contains { $0.hasPrefix("✘ \(name) (") && $0.contains(message) }, "\(name)\n\(printed)")
        }
        // The ignored ACK: the BYE came about 5 s after the answer, within the 8 s asked.
        let stays = report.results.first { $0.test == "stays up" }
        #expect(stays?.q850Cause == 16 && stays?.endReason == "completed")
        // The slow carrier's post-dial delay is its 4 s of silence.
        let pdd = report.results.first { $0.test == "post-dial delay" }?.postDialDelayMs ?? 0
        #expect(pdd >= 3500 && pdd < 6000, "post-dial delay \(pdd) ms")
        // Lossy: the gateway's trunk leg counted the drops and the jitter, and the measured
        // audio step judged them; the audio itself was scored too.
        let lossy = try #require(report.results.first { $0.test == "audio quality" })
        #expect((lossy.packetsLost ?? 0) > 0, "packetsLost \(lossy.packetsLost ?? -1)")
        #expect((lossy.jitterMs ?? 0) > 5, "jitterMs \(lossy.jitterMs ?? -1)")
        let check = try #require(lossy.audio?.first)
        #expect(!check.passed && (check.lossPercent ?? 0) > 2 && check.score.tonesFound.count == 3, "\(check)")
        // The ignored ACK shows in the trace: the carrier's 200 OK again and again.
        let resent =
            stays?.sip?.messages.filter { $0.retransmission && $0.firstLine.hasPrefix("SIP/2.0 200") }.count ?? 0
        #expect(resent >= 3, "\(stays?.sip?.messages.map(\.firstLine) ?? [])")

        // The same checks pass against numbers that behave.
        let clean = gw.directory.appendingPathComponent("clean.json5").path
        try Self.cleanSuite.write(toFile: clean, atomically: true, encoding: .utf8)
        let ok = try await GatewaySuites.GatewayCLITests.run(
            [
                "test", "--profile", "trunk", "--suite", clean, "--parallel", "4", "--api", gw.apiURL,
                "--data-dir", gw.dataDir
            ], timeout: 90)
        #expect(ok.status == 0, "\(ok.lines.joined(separator: "\n"))")
        #expect(ok.lines.contains { $0.hasPrefix("4 passed, 0 failed") }, "\(ok.lines)")
    }

    /// The shipped audio suite: measured audio through G.711 and G.722 echoes and an early
    /// media announcement passes every threshold against the simulator.
    @Test(.timeLimit(.minutes(2)))
    func shippedAudioSuitePasses() async throws {
        let sim = try await CarrierSimProcess()
        defer { sim.stop() }
        let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
        defer { gw.stop() }
        let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sip-profiles/suites/audio.json5").path
        let json = gw.directory.appendingPathComponent("audio.json").path
        let r = try await GatewaySuites.GatewayCLITests.run(
            [
                "test", "--profile", "trunk", "--suite", suite, "--parallel", "4", "--api", gw.apiURL,
                "--data-dir", gw.dataDir, "--json", json
            ], timeout: 90)
        #expect(r.status == 0, "\(r.lines.joined(separator: "\n"))")
        struct Report: Decodable { var results: [TestCallResult] }
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        let checks = report.results.compactMap { $0.audio?.first }
        #expect(checks.count == 3 && checks.allSatisfy(\.passed), "\(checks)")
        // The echoes measured a round trip and a real SNR; the announcement its 400 Hz.
        #expect(checks.prefix(2).allSatisfy { ($0.score.delayMs ?? 0) > 0 && ($0.score.snrDb ?? 0) > 15 }, "\(checks)")
        #expect(checks.last?.score.tonesFound == [400])
    }

    /// The measured audio score on its own: it flags the audio misbehaviours of the
    /// simulator (one-way, late, a codec it does not send as answered, loss and jitter) and
    /// passes a clean echo and the one-way number's own tones as they arrive.
    @Test(.timeLimit(.minutes(2)))
    func audioScoreFlagsTheAudioMisbehaviours() async throws {
        let sim = try await CarrierSimProcess()
        defer { sim.stop() }
        let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
        defer { gw.stop() }
        let path = gw.directory.appendingPathComponent("score.json5").path
        try Self.scoreSuite.write(toFile: path, atomically: true, encoding: .utf8)
        let json = gw.directory.appendingPathComponent("score.json").path
        let r = try await GatewaySuites.GatewayCLITests.run(
            [
                "test", "--profile", "trunk", "--suite", path, "--parallel", "7", "--api", gw.apiURL,
                "--data-dir", gw.dataDir, "--json", json
            ], timeout: 100)
        struct Report: Decodable { var results: [TestCallResult] }
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        let verdicts = Dictionary(uniqueKeysWithValues: report.results.map { ($0.test, $0.passed) })
        #expect(
            verdicts == [
                "clean echo": true, "one-way, its own tones": true, "one-way, our echo": false, "late media": false,
                "codec mismatch": false, "lossy": false
            ], "\(r.lines.joined(separator: "\n"))")
        let failure = { (name: String) in report.results.first { $0.test == name }?.failure ?? "" }
        // Its own tones share two of ours: the score sees a missing tone and no echo of what was played.
        #expect(
            failure("one-way, our echo").contains("does not match what was played"), "\(failure("one-way, our echo"))")
        #expect(failure("lossy").contains("packet loss"), "\(failure("lossy"))")
    }

    static let scoreSuite = """
        { name: "audio score",
          tests: [
            { name: "clean echo", target: "+15550100001",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "echo", durationSec: 2, withinSec: 5 }, { hangup: true } ] },
            { name: "one-way, its own tones", target: "+15550100016",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "carrier", tones: [400, 1020], durationSec: 1, withinSec: 3 },
                       { hangup: true } ] },
            { name: "one-way, our echo", target: "+15550100016",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "echo", durationSec: 2, withinSec: 3 }, { hangup: true } ] },
            { name: "late media", target: "+15550100017",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "echo", durationSec: 2, withinSec: 1 }, { hangup: true } ] },
            { name: "codec mismatch", target: "+15550100019",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "echo", durationSec: 2, withinSec: 3 }, { hangup: true } ] },
            { name: "lossy", target: "+15550100023",
              steps: [ { expect: "Connected", withinSec: 10 }, { audioQuality: "echo", durationSec: 3, withinSec: 5, maxLossPercent: 2 },
                       { hangup: true } ] },
          ] }
        """

    static let cleanSuite = """
        { name: "clean",
          tests: [
            { name: "answers in time and echoes", target: "+15550100001", maxPostDialDelayMs: 2000, maxAnswerMs: 4000,
              steps: [ { expect: "Connected", withinSec: 10 }, { expectAudio: true, withinSec: 3 }, { expectEcho: 1000, withinSec: 5 },
                       { hangup: true }, { expectEnd: "completed" } ] },
            { name: "busy with a fitting cause", target: "+15550100002",
              steps: [ { expectEnd: "busy", sipCode: 486, cause: 17, causeFits: true, withinSec: 10 } ] },
            { name: "stays up", target: "+15550100001",
              steps: [ { expect: "Connected", withinSec: 10 }, { expectUp: 2 }, { hangup: true }, { expectEnd: "completed" } ] },
            { name: "early media, then the answer", target: "+15550100004", maxPostDialDelayMs: 2000,
              steps: [ { expectEarlyMedia: true, withinSec: 10 }, { expect: "Connected", withinSec: 5 }, { hangup: true },
                       { expectEnd: "completed" } ] },
          ] }
        """
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// What `make run` starts (`irisgw serve --carrier-sim`, the shipped profiles) reaches a
    /// healthy gateway within a bound and stops cleanly on SIGINT. Ports from the OS here;
    /// `make run` itself uses the fixed ones its profile names.
    @Test func makeRunsCommandStartsHealthyAndStopsOnSIGINT() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        #expect(
            makefile.contains("irisgw serve --carrier-sim 127.0.0.1:5090"),
            "make run no longer runs what this test checks")
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-run-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: data) }
        let p = try ChildProcess(
            GatewayProcess.binary,
            [
                "serve", "--carrier-sim", "127.0.0.1:0", "--sip-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
                "--profiles", root.appendingPathComponent("sip-profiles").path, "--data-dir", data.path
            ],
            currentDirectory: root)
        defer { p.stop(signal: SIGKILL) }
        #expect(await p.waitForOutput(containing: "ready\n", timeout: 20), "\(p.output)")
        let text = p.output
        #expect(
            text.contains("listening carrier-sim udp 127.0.0.1:") && text.contains("profiles carrier-sim"), "\(text)")
        let api = try #require(text.split(separator: "\n").first { $0.hasPrefix("listening api ") }).dropFirst(
            "listening api ".count)
        let health = try await HTTPClient(baseURL: String(api)).request(method: "GET", path: "/healthz", timeout: 5)
        #expect(health.status == 200)
        #expect(await p.signal(SIGINT, timeout: 10) == 0)
        #expect(p.output.hasSuffix("stopped\n"), "\(p.output)")
    }
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// `irisgw carrier-sim call` places PSTN calls into the gateway; the app joins each.
    @Test func carrierSimCallPlacesCallsThatTheAppAnswers() async throws {
        let gw = try await GatewayProcess(profiles: [.init()])
        defer { gw.stop() }
        let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
        defer { listener.close() }
        let caller = try GatewaySuites.GatewayCLITests.launch(
            [
                "carrier-sim", "call", "+15550001000", "--from", "+15559876543", "--to", "127.0.0.1:\(gw.sipPort)",
                "--hangup-after", "1", "--calls", "3", "--rate", "5"
            ], mergeErrors: true)
        defer { caller.stop() }
        var sessions: [IrisRtcAudioSession] = []
        defer { sessions.forEach { $0.stop() } }
        for _ in 0..<3 {
            let note = try #require(await listener.next(timeout: 10))
            let s = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 500, amplitude: 0.3)),
                delegate: nil)
            try await s.join(roomId: note.roomid!, roomToken: note.roomtoken!)
            sessions.append(s)
        }
        for s in sessions { #expect(await s.waitForEnd(timeout: 10)) }
        let status = await caller.exit(timeout: 10)
        let text = caller.output
        #expect(status == 0, "\(text)")
        #expect(text.contains("summary: 3 calls, 3 answered, 3 ended normally, 0 failed"), "\(text)")
        #expect(sessions.allSatisfy { $0.endedEvent?.reason == .completed })
    }
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// `--loss` and `--jitter`: in range the simulator starts; out of range, or not a number,
    /// a usage error (exit 2) that names the option.
    @Test func lossAndJitterOptionsAreValidated() async throws {
        let sim = try await CarrierSimProcess(arguments: ["--loss", "12.5", "--jitter", "20"])
        defer { sim.stop() }
        #expect(sim.port > 0 && sim.lines.contains("ready"))
        for (args, option) in [
            (["--loss", "101"], "--loss"), (["--loss", "-1"], "--loss"), (["--loss", "many"], "--loss"),
            (["--jitter", "1001"], "--jitter"), (["--jitter", "nan"], "--jitter"), (["--jitter"], "--jitter")
        ] {
            let p = try GatewaySuites.GatewayCLITests.launch(
                ["carrier-sim", "--listen", "127.0.0.1:0"] + args, mergeErrors: true)
            defer { p.stop(signal: SIGKILL) }
            let status = await p.exit(timeout: 10)
            let text = p.output
            #expect(status == 2, "\(args): \(text)")
            #expect(text.contains(option) && text.contains("usage:"), "\(args): \(text)")
        }
    }
}

extension GatewaySuites.CarrierSimEndToEndTests {
    /// `carrier-sim call --local-host`: the call comes from that address (a trunk that allows
    /// only it takes the call, SIP and media); a name instead of an address is a usage error.
    @Test func carrierSimCallSendsFromItsLocalHost() async throws {
        var profile = GatewayProcess.Profile()
        profile.allowFrom = ["127.0.0.2/32"]
        let gw = try await GatewayProcess(profiles: [profile])
        defer { gw.stop() }
        let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
        defer { listener.close() }
        let caller = try GatewaySuites.GatewayCLITests.launch(
            [
                "carrier-sim", "call", "+15550001000", "--from", "+15559876543", "--to", "127.0.0.1:\(gw.sipPort)",
                "--local-host", "127.0.0.2", "--hangup-after", "1"
            ], mergeErrors: true)
        defer { caller.stop() }
        let note = try #require(await listener.next(timeout: 10), "\(caller.output)")
        let session = IrisRtcAudioSession(
            connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 500, amplitude: 0.3)),
            delegate: nil)
        defer { session.stop() }
        try await session.join(roomId: note.roomid!, roomToken: note.roomtoken!)
        #expect(await session.waitForEnd(timeout: 10))
        #expect(await caller.exit(timeout: 10) == 0, "\(caller.output)")
        #expect(caller.output.contains("1 ended normally"), "\(caller.output)")
        let trace = try await gw.connection().sipTrace(roomId: note.roomid!).messages
        #expect(!trace.isEmpty && trace.allSatisfy { $0.remote.hasPrefix("127.0.0.2:") }, "\(trace.map(\.remote))")

        let refused = try GatewaySuites.GatewayCLITests.launch(
            ["carrier-sim", "call", "+15550001000", "--from", "+1555", "--local-host", "carrier.example"],
            mergeErrors: true)
        defer { refused.stop(signal: SIGKILL) }
        #expect(await refused.exit(timeout: 10) == 2, "\(refused.output)")
        #expect(refused.output.contains("--local-host needs a numeric address"), "\(refused.output)")
    }
}
