import Foundation
import Gateway
import Glibc
import IrisAPI
import IrisClient
import SIP
import Synchronization
import TestSupport
import Testing

/// One `irisgw serve` process for a test: its own profiles and data dir in a temporary
/// folder, SIP and API on ports the OS picks, RTP in a block of 1000 ports checked free
/// after an OS-chosen one (a pair another process takes later is skipped; 500 pairs, so a
/// test placing calls in a loop does not run out while released pairs sit in quarantine). `stop()` (in a `defer`) ends it and cleans up.
final class GatewayProcess: @unchecked Sendable {
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("irisgw").path
    }

    let directory: URL
    private var process: ChildProcess!
    private(set) var sipPort = 0
    private(set) var apiURL = ""
    /// Every line the process printed so far.
    var lines: [String] { process.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    let apiKey: String
    /// The CA that issued the API's certificate, for an HTTPS `apiURL` (nil: plain HTTP).
    let apiCAFile: String?

    /// A trunk profile for the tests: outbound to `proxies` (SIPp ports on 127.0.0.1),
    /// inbound from 127.0.0.1 with `routes`.
    struct Profile {
        var name = "trunk"
        var proxies: [Int] = []
        /// Proxy URIs written as they are (names for DNS), instead of `proxies`.
        var proxyURIs: [String]?
        var codecs = ["PCMU", "PCMA", "G722"]
        var ringTimeoutSec = 30
        var inboundRingTimeoutSec = 30
        var maxConcurrentCalls = 100
        var callsPerSecond = 100
        var routes: [(did: String, routingId: String)] = [("+15550001000", "alice")]
        /// nil: the key is left out (with `inboundAuth`, every address may authenticate).
        var allowFrom: [String]? = ["127.0.0.1/32"]
        var auth: (user: String, env: String)?
        /// `inbound.auth`: digest credentials the trunk's INVITEs must carry.
        var inboundAuth: (user: String, env: String, algorithms: [String])?
        /// JSON5 members added to `outbound` as they are (carrier policy keys).
        var outboundExtra = ""
        /// JSON5 members added to `sip` as they are (`tls: {...}`).
        var sipExtra = ""
        /// JSON5 members added to `media` as they are (`encryption: "required"`).
        var mediaExtra = ""
        /// Whether the profile has an `inbound` part.
        var hasInbound = true
        var rtpTimeoutSec = 30
        var dtmf = "rfc4733"
        var register = false
        var sessionTimerSec = 1800
        var inboundMaxCalls = 100
        var inboundCallsPerSecond = 100
        /// The profile's `transfer` section's keys, as written (empty: no section).
        var transfer = ""
        /// Top-level JSON5 members added as they are (`recording: {...}`).
        var extra = ""

        var json5: String {
            let proxyList = (proxyURIs ?? proxies.map { "sip:127.0.0.1:\($0);transport=udp" }).map { "\"\($0)\"" }
                .joined(separator: ", ")
            let authLine = auth.map { "auth: { username: \"\($0.user)\", passwordEnv: \"\($0.env)\" }," } ?? ""
            let outbound =
                proxies.isEmpty && proxyURIs == nil
                ? ""
                : """
                  outbound: {
                    proxies: [\(proxyList)], fromDomain: "gw.test", \(authLine)
                    allowedPrefixes: ["+1"], maxConcurrentCalls: \(maxConcurrentCalls), callsPerSecond: \(callsPerSecond),
                    ringTimeoutSec: \(ringTimeoutSec), register: { enabled: \(register), expiresSec: 60 },
                    \(outboundExtra)
                  },
                """
            let routeList = routes.map { "{ did: \"\($0.did)\", routingId: \"\($0.routingId)\" }" }.joined(
                separator: ", ")
            let allowLine =
                allowFrom.map { "allowFrom: [" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]," } ?? ""
            let inboundAuthLine =
                inboundAuth.map {
                    "auth: { username: \"\($0.user)\", passwordEnv: \"\($0.env)\", algorithms: ["
                        + $0.algorithms.map { "\"\($0)\"" }.joined(separator: ", ") + "] },"
                } ?? ""
            let inbound =
                !hasInbound
                ? ""
                : """
                  inbound: { \(allowLine) routes: [\(routeList)], ringTimeoutSec: \(inboundRingTimeoutSec),
                             maxConcurrentCalls: \(inboundMaxCalls), callsPerSecond: \(inboundCallsPerSecond), \(inboundAuthLine) },
                """
            return """
                // written by GatewayProcess for one test
                {
                  name: "\(name)",
                \(outbound)
                \(inbound)
                  media: { codecs: [\(codecs.map { "\"\($0)\"" }.joined(separator: ", "))], dtmf: "\(dtmf)", rtpTimeoutSec: \(rtpTimeoutSec), \(mediaExtra) },
                  sip: { transport: "udp", prack: "supported", sessionTimerSec: \(sessionTimerSec), optionsPingSec: 0, \(sipExtra) },
                  \(transfer.isEmpty ? "" : "transfer: { \(transfer) },")
                  \(extra)
                }
                """
        }
    }

    /// Whether `stop()` removes the folder (a successor started with `after:` takes it over).
    private var ownsDirectory = true

    /// `config`: the text of a `--config` file (JSON5), written beside the profiles.
    /// `stderrApart`: stderr goes to a file of its own (`errors`), so `printed` and `lines`
    /// are stdout alone.
    /// `after`: a stopped (or killed) gateway whose folder, data dir and records this one
    /// takes over, as a restart would.
    init(
        profiles: [Profile], environment: [String: String] = [:], extraArguments: [String] = [], config: String? = nil,
        after predecessor: GatewayProcess? = nil, dataDir: String? = nil, launcher: [String] = [],
        apiCAFile: String? = nil, stderrApart: Bool = false
    ) async throws {
        dataDirOverride = dataDir
        self.apiCAFile = apiCAFile
        directory =
            predecessor?.directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-gw-\(UUID().uuidString.prefix(8))")
        predecessor?.ownsDirectory = false
        let profileDir = directory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: profileDir, withIntermediateDirectories: true)
        for p in profiles {
            try p.json5.write(
                to: profileDir.appendingPathComponent(p.name + ".json5"), atomically: true, encoding: .utf8)
        }
        let data = dataDir ?? directory.appendingPathComponent("data").path
        var configArguments: [String] = []
        if let config {
            let file = directory.appendingPathComponent("serve.json5")
            try config.write(to: file, atomically: true, encoding: .utf8)
            configArguments = ["--config", file.path]
        }
        let base = try freePortBlock(count: 1000)
        // `launcher` runs the gateway through another program (prlimit, say).
        let arguments =
            launcher.dropFirst() + (launcher.isEmpty ? [] : [Self.binary])
            + [
                "serve", "--profiles", profileDir.path, "--sip-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
                "--data-dir", data, "--rtp-ports", "\(base)-\(base + 999)", "--drain-timeout", "2"
            ] + configArguments + extraArguments
        var env = ProcessInfo.processInfo.environment
        env["IRISGW_API_KEY"] = nil
        for (k, v) in environment { env[k] = v }
        process = try ChildProcess(
            launcher.first ?? Self.binary, Array(arguments), environment: env,
            outputFile: directory.appendingPathComponent("output-\(UUID().uuidString.prefix(8)).txt"),
            errorFile: stderrApart ? directory.appendingPathComponent("errors-\(UUID().uuidString.prefix(8)).txt") : nil
        )
        let child = process!
        func printed() -> [String] {
            child.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        _ = await eventually(timeout: 20) { !child.isRunning || printed().contains("ready") }
        let lines = printed()
        for l in lines {
            if l.hasPrefix("listening sip udp "), let port = l.split(separator: ":").last.flatMap({ Int($0) }) {
                sipPort = port
            }
            if l.hasPrefix("listening api ") { apiURL = String(l.dropFirst("listening api ".count)) }
        }
        apiKey =
            (try? String(contentsOfFile: data + "/api-key", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines) ?? ""
        if let started = Self.started {
            started.add(self)
        } else {
            Issue.record("a GatewayProcess outside the .stopsGateways trait: its end would not be awaited")
        }
        guard lines.contains("ready"), sipPort > 0, !apiURL.isEmpty, !apiKey.isEmpty else {
            stop()
            throw SocketError(
                "irisgw serve did not start: \(lines.joined(separator: " | ")) \(child.errors)", code: EINVAL)
        }
    }

    private let dataDirOverride: String?
    var dataDir: String { dataDirOverride ?? directory.appendingPathComponent("data").path }

    /// Waits until the process has printed a line containing `text` (true), or exited or
    /// `timeout` passed.
    func waitForOutput(containing text: String, timeout: Double) async -> Bool {
        await process.waitForOutput(containing: text, timeout: timeout)
    }
    var sipPeer: SIPPeer { SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: sipPort)) }

    func connection() throws -> IrisRtcConnection {
        try IrisRtcConnection(baseURL: apiURL, apiKey: apiKey, caFile: apiCAFile)
    }

    var isRunning: Bool { process.isRunning }
    var processID: Int32 { process.processIdentifier }

    /// Sends `sig` and waits (suspended) up to `timeout` for the exit; nil if it did not exit.
    func signal(_ sig: Int32, timeout: Double = 10) async -> Int32? {
        await process.signal(sig, timeout: timeout)
    }

    /// Stops the gateway (SIGINT: every call ends, every record completes) and returns the
    /// call records it left in `calls.sqlite`.
    func recordsAfterStop() async throws -> [CallRecord] {
        if process.isRunning { _ = await signal(SIGINT, timeout: 10) }
        let store = try CallRecordStore(path: dataDir + "/calls.sqlite", heartbeatInterval: nil)
        defer { store.close() }
        return store.all()
    }

    /// Everything the process printed so far.
    var printed: String { process.output }
    /// What it printed on stderr so far, when started with `stderrApart` (else "").
    var errors: String { process.errors }

    /// Ends the gateway (SIGINT, then SIGKILL after 8 s) and removes its folder, without
    /// waiting: for a `defer`, which cannot suspend. The wait for the exit runs in a task that
    /// the `.stopsGateways` trait awaits when the test case ends (`stopped()`), so no thread of
    /// the cooperative pool is held while the gateway drains (at most 2 s, `--drain-timeout 2`).
    ///
    /// Every gateway a test ran is also checked there, so the invariant holds after all the
    /// tests: one call record per session the gateway started, each completed with an end
    /// reason.
    func stop() {
        stopping.withLock { task in
            if task == nil { task = Task { await self.stopAndCheck() } }
        }
    }

    /// `stop()`, then waits (suspended) until the gateway has exited, been checked and its
    /// folder removed.
    func stopped() async {
        stop()
        await stopping.withLock { $0 }?.value
    }

    private let stopping = Mutex<Task<Void, Never>?>(nil)

    private func stopAndCheck() async {
        var started: Int?
        if process.isRunning {
            let metrics = try? await HTTPClient(
                baseURL: apiURL, defaultHeaders: ["Authorization": "Bearer " + apiKey], caFile: apiCAFile
            ).request(method: "GET", path: "/metrics", timeout: 5)
            started = metrics.flatMap { r in
                String(decoding: r.body, as: UTF8.self).split(separator: "\n")
                    .first { $0.hasPrefix("irisgw_sessions_started_total ") }.flatMap {
                        Int($0.split(separator: " ")[1])
                    }
            }
            await process.stopped(signal: SIGINT, grace: 8)
        }
        let records = dataDir + "/calls.sqlite"
        // A test may have removed a data dir of its own by now: nothing to check then.
        if let started, process.exitStatus == 0, FileManager.default.fileExists(atPath: records),
            let store = try? CallRecordStore(path: records, heartbeatInterval: nil)
        {
            let records = store.all()
            store.close()
            #expect(records.count == started, "\(started) sessions, \(records.count) records")
            for r in records { #expect(r.endedAt != nil && r.endReason != nil, "an unfinished record: \(r)") }
        }
        if ownsDirectory, ProcessInfo.processInfo.environment["IRISGW_E2E_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The gateways started in the current test case (set by `.stopsGateways`).
    @TaskLocal static var started: Started?

    /// The gateways one test case started, stopped and awaited when it ends.
    final class Started: Sendable {
        private let gateways = Mutex<[GatewayProcess]>([])
        func add(_ gateway: GatewayProcess) { gateways.withLock { $0.append(gateway) } }
        func stopAll() async {
            for gateway in gateways.withLock({ $0 }) { await gateway.stopped() }
        }
    }
}

/// Stops every gateway a test case started and awaits their ends (exit, records check,
/// folder) when the case is over: in its scope, so an issue the check finds is the test's.
struct StopsGatewaysTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let started = GatewayProcess.Started()
        do {
            try await GatewayProcess.$started.withValue(started) { try await function() }
        } catch {
            await started.stopAll()
            throw error
        }
        await started.stopAll()
    }
}

extension Trait where Self == StopsGatewaysTrait {
    /// See `StopsGatewaysTrait`: on `GatewaySuites`, so every gateway suite has it.
    static var stopsGateways: Self { Self() }
}

/// The lines `child` printed once one equals `last` or satisfies `stopWhen` (or it exited,
/// or `timeout` seconds passed): everything it printed by then.
func lines(
    of child: ChildProcess, until last: String, timeout: Double,
    stopWhen: @escaping (String) -> Bool = { _ in false }
) async -> [String] {
    func printed() -> [String] { child.output.split(separator: "\n").map(String.init) }
    _ = await eventually(timeout: timeout, pollInterval: 0.02) {
        let lines = printed()
        return lines.contains(last) || lines.contains(where: stopWhen) || !child.isRunning
    }
    return printed()
}

/// A delegate that records events for assertions.
final class SessionRecorder: IrisRtcAudioSessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [SessionEvent] = []
    var events: [SessionEvent] { lock.withLock { _events } }

    func onEvent(_ session: IrisRtcAudioSession, event: SessionEvent) { lock.withLock { _events.append(event) } }

    /// Event names with statuses, e.g. ["onSessionCreated", "Initializing", "Connecting", "Connected", ...].
    var trace: [String] {
        events.map { e in
            switch e.event {
            case .onSessionSIPStatus: (e.status?.rawValue ?? "?") + (e.earlyMedia == true ? "*" : "")
            case .onSessionEnded: "ended:" + (e.reason?.rawValue ?? "?")
            case .onSessionError: "error:\(e.code ?? 0)"
            default: e.event.rawValue
            }
        }
    }

    func waitFor(timeout: Double = 10, _ condition: ([SessionEvent]) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { condition(self.events) }
    }

    func waitForStatus(_ s: SessionStatus, timeout: Double = 10) async -> Bool {
        await waitFor(timeout: timeout) { $0.contains { $0.status == s } }
    }

    var ended: SessionEvent? { events.first { $0.event == .onSessionEnded } }
}

/// The gateway end-to-end suites: each test starts its own `irisgw serve` and SIPp processes
/// (ports from the OS) and awaits them without holding a cooperative thread; `.stopsGateways`
/// awaits the end of every gateway a test started once the test is over. `.atMost` (outside
/// `.stopsGateways`, so a slot is free only once its gateways have exited) bounds how many run
/// at once, for the resource they share, the cores: each gateway runs real-time media threads.
/// Other suites run beside them.
@Suite(.atMost(gatewaySlots), .stopsGateways) struct GatewaySuites {}

/// SIPp playing `xml` as the carrier (listening before this returns) and a gateway whose one
/// profile, `configure`d, routes to it. Stop both in a `defer`: `gw.stop(); sipp.stop()`.
func carrierAndGateway(
    _ xml: String, sippArguments: [String] = [], calls: Int = 1, environment: [String: String] = [:],
    gatewayArguments: [String] = [], dataDir: String? = nil, config: String? = nil, launcher: [String] = [],
    configure: (inout GatewayProcess.Profile) -> Void = { _ in }
)
    async throws -> (SIPp, GatewayProcess)
{
    let sipp = try await SIPp.listening(
        .inline(name: "carrier", xml: xml), calls: calls, timeout: 30, arguments: sippArguments)
    var profile = GatewayProcess.Profile(proxies: [sipp.port])
    configure(&profile)
    do {
        return (
            sipp,
            try await GatewayProcess(
                profiles: [profile], environment: environment, extraArguments: gatewayArguments, config: config,
                dataDir: dataDir, launcher: launcher)
        )
    } catch {
        sipp.stop()
        throw error
    }
}

/// A session the client places and that reached `status` (Connected by default).
func placedSession(
    _ gw: GatewayProcess, status: SessionStatus = .connected, source: AudioSource = .silence
) async throws
    -> (IrisRtcAudioSession, SessionRecorder)
{
    let rec = SessionRecorder()
    let session = IrisRtcAudioSession(
        connection: try gw.connection(), stream: try IrisRtcStream(source: source), delegate: rec)
    try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321")
    guard await rec.waitForStatus(status) else {
        session.stop()
        throw SocketError("the session did not reach \(status): \(rec.trace)", code: ETIMEDOUT)
    }
    return (session, rec)
}

/// Ends `session` from the app, then waits for its `onSessionEnded` and for the 200 to our
/// BYE in its SIP trace (so a trace or capture read next is whole); true when both came.
func closeAndWaitForTheTrace(
    _ session: IrisRtcAudioSession, _ rec: SessionRecorder, room: String, timeout: Double = 10
) async throws -> Bool {
    try await session.close()
    guard await rec.waitFor(timeout: timeout, { $0.contains { $0.event == .onSessionEnded } }) else { return false }
    return await eventually(timeout: timeout) {
        (try? session.connection.sipTrace(roomId: room))?.messages.last?.firstLine.hasPrefix("SIP/2.0 200") == true
    }
}
