import Foundation
import Glibc
import IOCore
import IrisAPI
import Media
import SDP
import Synchronization
import WebClient

/// `BENCH bridge-setup` and `BENCH bridge`: the whole gateway (`irisgw serve`, release build)
/// with SIPp's built-in `uas` as the carrier.
/// - setup: sessions through the control API (create, Connected, DELETE, ended) per second,
///   `workers` at a time.
/// - media: N transcoded calls (Opus from this process into the platform legs, PCMU to
///   SIPp, which echoes it back), the gateway process's CPU time against wall time.
enum BridgeBench {
    struct Gateway {
        let process: Process
        let api: String
        let key: String
        let directory: URL
        /// The SIP port (UDP and TCP share it).
        let sipPort: Int

        var pid: Int32 { process.processIdentifier }
        var dataDirectory: URL { directory.appendingPathComponent("data") }

        /// SIGINT (every call ends, records complete), then `beforeRemoval` on the data
        /// directory, then the directory goes.
        func stop(beforeRemoval: (URL) -> Void = { _ in }) {
            process.interrupt()
            process.waitUntilExit()
            beforeRemoval(dataDirectory)
            try? FileManager.default.removeItem(at: directory)
        }

        /// The gateway process's user + system CPU seconds so far (/proc/PID/stat).
        var cpuSeconds: Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the command: state is field 3; utime and stime are fields 14 and 15.
            guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
            return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    /// The bench's trunk profile: outbound to the carrier at `carrierPort` with budgets no
    /// bench reaches; `inbound` (a JSON5 object) adds calls in.
    static func profile(carrierPort: Int, inbound: String? = nil) -> String {
        """
        { name: "bench",
          outbound: { proxies: ["sip:127.0.0.1:\(carrierPort);transport=udp"], fromDomain: "bench.test", allowedPrefixes: ["+1"],
                      maxConcurrentCalls: 10000, callsPerSecond: 10000, ringTimeoutSec: 30 },
          \(inbound.map { "inbound: \($0)," } ?? "")
          media: { codecs: ["PCMU"], dtmf: "rfc4733", rtpTimeoutSec: 0 },
          sip: { transport: "udp", prack: "supported", sessionTimerSec: 0, optionsPingSec: 0 } }
        """
    }

    /// A release `irisgw serve` with one profile (`profile(carrierPort:)` unless given) and,
    /// when `config` is set, that serve configuration (JSON5). `name` names its temporary
    /// directory (several gateways at once need one each); `keepDirectory` starts it again on
    /// the data a killed one left.
    static func startGateway(
        irisgw: String, carrierPort: Int, profile text: String? = nil, config: String? = nil,
        moreProfiles: [String: String] = [:], arguments: [String] = [], name: String = "irisgw-bench-\(getpid())",
        rtpPorts: String = "30000-39998", keepDirectory: Bool = false
    ) throws -> Gateway {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        if !keepDirectory { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("profiles"), withIntermediateDirectories: true)
        // A cluster node with IRISGW_API_KEY set writes the room-token secret there before
        // anything else has made the directory.
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("data"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try (text ?? profile(carrierPort: carrierPort)).write(
            to: dir.appendingPathComponent("profiles/bench.json5"), atomically: true, encoding: .utf8)
        for (name, body) in moreProfiles {
            try body.write(to: dir.appendingPathComponent("profiles/\(name).json5"), atomically: true, encoding: .utf8)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: irisgw)
        p.arguments =
            [
                "serve", "--profiles", dir.appendingPathComponent("profiles").path, "--sip-listen", "127.0.0.1:0",
                "--api-listen", "127.0.0.1:0", "--data-dir", dir.appendingPathComponent("data").path,
                "--rtp-ports", rtpPorts, "--max-sessions", "100000"
            ] + arguments
        if let config {
            let path = dir.appendingPathComponent("serve.json5")
            try config.write(to: path, atomically: true, encoding: .utf8)
            p.arguments! += ["--config", path.path]
        }
        var env = ProcessInfo.processInfo.environment
        env["IRISGW_API_KEY"] = "bench"
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = readyLines(p, out.fileHandleForReading, logEnvironment: "IRISGW_BENCH_GATEWAY_LOG")
        var api = ""
        var sipPort = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("listening api ") { api = String(line.dropFirst(14)) }
            if line.hasPrefix("listening sip udp "), let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                sipPort = port
            }
        }
        guard !api.isEmpty else {
            p.terminate()
            throw SocketError("irisgw serve did not start: \(text)", code: EINVAL)
        }
        return Gateway(process: p, api: api, key: "bench", directory: dir, sipPort: sipPort)
    }

    /// What an irisgw child (`serve`, `carrier-sim`) printed up to its `ready` line (all of it
    /// when it exits first; killed when not ready in 60 s: a cluster node waiting on Redis must
    /// not hang the bench). Its output is drained from then on so it never blocks on a full
    /// pipe; with `logEnvironment`=FILE in the environment it goes to FILE (appended).
    static func readyLines(_ p: Process, _ h: FileHandle, logEnvironment: String) -> String {
        let ready = Atomic<Bool>(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            if !ready.load(ordering: .acquiring), p.isRunning { kill(p.processIdentifier, SIGKILL) }
        }
        var text = ""
        while !text.contains("ready\n") {
            let d = h.availableData
            if d.isEmpty { break }
            text += String(decoding: d, as: UTF8.self)
        }
        ready.store(true, ordering: .releasing)
        let log = ProcessInfo.processInfo.environment[logEnvironment].flatMap { path -> FileHandle? in
            if !FileManager.default.fileExists(atPath: path) {
                FileManager.default.createFile(atPath: path, contents: nil)
            }
            let f = FileHandle(forWritingAtPath: path)
            f?.seekToEndOfFile()
            return f
        }
        log?.write(Data(text.utf8))
        Thread {
            while true {
                let d = h.availableData
                if d.isEmpty { break }
                log?.write(d)
            }
        }.start()
        return text
    }

    /// SIPp's built-in `uas` on `port`, RTP echoed; `arguments` are added (a message trace ...).
    static func startCarrier(port: Int, timeout: Int = 600, arguments: [String] = []) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
        p.arguments =
            [
                "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-nostdin", "-rtp_echo",
                "-mp", String(CallRateBench.freeUDPPort() ?? 45_000), "-timeout", "\(timeout)s"
            ] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        usleep(300_000)
        return p
    }

    /// Waits for events of routing id "bench" and hands each room's to its waiter; `observe`
    /// sees each event with the wall-clock time it came (Unix ms), on the reading thread.
    final class EventRouter: @unchecked Sendable {  // `seen` only under `condition` (waited on: no Mutex)
        private let condition = NSCondition()
        private var seen: [String: [SessionEvent]] = [:]
        private let ws: WebSocketClient
        init(api: String, key: String, observe: (@Sendable (SessionEvent, Double) -> Void)? = nil) throws {
            ws = try WebSocketClient(
                url: api.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events?routingId=bench",
                headers: ["Authorization": "Bearer " + key])
            Thread { [self] in
                while true {
                    // A quiet minute (the soak between phases) is not the end of the stream.
                    let text: String?
                    do { text = try ws.receive(timeout: 60) } catch let e as IrisTransportError where e.isTimeout {
                        continue
                    } catch { break }
                    guard let text else { break }
                    let arrived = Date().timeIntervalSince1970 * 1000
                    guard let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8)) else { continue }
                    observe?(e, arrived)
                    condition.lock()
                    seen[e.roomId, default: []].append(e)
                    condition.broadcast()
                    condition.unlock()
                }
            }.start()
        }
        /// Waits (without polling) until an event of `room` meets `condition`.
        func wait(_ room: String, timeout: Double, _ matches: (SessionEvent) -> Bool) -> Bool {
            let end = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while true {
                if seen[room]?.contains(where: matches) ?? false { return true }
                if !condition.wait(until: end) { return seen[room]?.contains(where: matches) ?? false }
            }
        }
        /// Drops what was kept of `room` (a long run would otherwise keep every event).
        func forget(_ room: String) {
            condition.lock()
            seen[room] = nil
            condition.unlock()
        }
        func close() { ws.close() }
    }

    static func offer(port: Int) -> String {
        let opus = RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48_000, channels: 2)
        let media = MediaDescription(
            media: "audio", port: UInt16(port), formats: ["111"], attributes: [.rtpmap(opus), .ptime(20)])
        return SessionDescription.single(media, host: "127.0.0.1", sessionID: "1", version: 1).serialize()
    }

    static func create(
        _ client: HTTPClient, mediaPort: Int, profile: String? = nil, targetTN: String = "+15551230001"
    ) -> SessionResponse? {
        try? creating(client, mediaPort: mediaPort, profile: profile, targetTN: targetTN).get()
    }

    /// Why a create did not give a session: the transport error, or the status and body.
    struct CreateRefusal: Error, CustomStringConvertible {
        var description: String
    }

    /// `create`, with why it failed.
    static func creating(
        _ client: HTTPClient, mediaPort: Int, profile: String? = nil, targetTN: String = "+15551230001"
    ) -> Result<SessionResponse, CreateRefusal> {
        var body = CreateSessionRequest(
            targetTN: targetTN, sourceTN: "+15557654321", routingId: "bench",
            media: MediaBody(sdp: offer(port: mediaPort)))
        body.profile = profile
        return creating(client, body)
    }

    /// `POST /v1/sessions` with `body` (an agent's WebSocket, recording ...), with why it failed.
    static func creating(_ client: HTTPClient, _ body: CreateSessionRequest) -> Result<SessionResponse, CreateRefusal> {
        do {
            let r = try client.request(
                method: "POST", path: "/v1/sessions", body: Array(try JSONEncoder().encode(body)), timeout: 10)
            guard r.status == 201 else {
                return .failure(CreateRefusal(description: "\(r.status) \(String(decoding: r.body, as: UTF8.self))"))
            }
            return .success(try JSONDecoder().decode(SessionResponse.self, from: Data(r.body)))
        } catch {
            return .failure(CreateRefusal(description: "\(error)"))
        }
    }

    /// How `close` ended.
    enum CloseOutcome: Sendable, Equatable {
        /// 202: the gateway took the close; `onSessionEnded` follows.
        case accepted
        /// 409: the session had ended already (an earlier attempt went through, its answer was lost).
        case alreadyEnded
        /// Another status, or no answer until the deadline.
        case failed(String)

        /// The session is closed (or was already over): its end is the gateway's to deliver.
        var closed: Bool { self == .accepted || self == .alreadyEnded }
    }

    /// `DELETE /v1/sessions/{roomId}` until the gateway answers it. A transport error is
    /// retried: a connection reset at accept (the API's `maxConnectionsPerSource`, when many
    /// workers close at once) never reached the gateway, and a close that did and lost its
    /// answer gets 409 the next time. Given up, the call would live on, closed by nobody.
    /// `onRetry` sees each error that is retried.
    static func close(
        _ client: HTTPClient, roomId: String, within seconds: Double = 30, retryDelay: Double = 0.2,
        onRetry: (String) -> Void = { _ in }
    ) -> CloseOutcome {
        let end = EventLoop.now() + seconds
        while true {
            let why: String
            do {
                let r = try client.request(
                    method: "DELETE", path: "/v1/sessions/\(roomId)", timeout: max(1, min(10, end - EventLoop.now())))
                switch r.status {
                case 202: return .accepted
                case 409: return .alreadyEnded
                // Every worker busy, or the request queue full: not taken, try again.
                case 503: why = "503"
                default: return .failed("DELETE: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
                }
            } catch {
                guard error.kind == .connection || error.kind == .timeout else { return .failed("DELETE: \(error)") }
                why = "\(error)"
            }
            guard EventLoop.now() + retryDelay < end else {
                return .failed("DELETE not answered within \(Int(seconds)) s: \(why)")
            }
            onRetry(why)
            usleep(UInt32(retryDelay * 1e6))
        }
    }

    /// Runs `body` with a SIPp carrier (`-sn uas`, RTP echoed), a gateway routed to it and
    /// its event stream; all stop after. `profile` builds the trunk profile from the carrier's
    /// port; `config` is a serve configuration.
    /// `carrierTimeout`: seconds SIPp lives; `beforeRemoval` sees the data directory once the
    /// gateway has stopped.
    static func withBridge<T>(
        irisgw: String, profile: ((Int) -> String)? = nil, config: String? = nil, carrierTimeout: Int = 600,
        beforeRemoval: (URL) -> Void = { _ in }, _ body: (Gateway, EventRouter) throws -> T
    ) throws -> T {
        let carrierPort = CallRateBench.freeUDPPort() ?? 45_060
        let carrier = try startCarrier(port: carrierPort, timeout: carrierTimeout)
        defer { carrier.terminate(); carrier.waitUntilExit() }
        let gw = try startGateway(
            irisgw: irisgw, carrierPort: carrierPort, profile: profile?(carrierPort), config: config)
        defer { gw.stop(beforeRemoval: beforeRemoval) }
        let router = try EventRouter(api: gw.api, key: gw.key)
        defer { router.close() }
        return try body(gw, router)
    }

    /// Sessions per second through the API: create, wait for Connected, close, wait for the end.
    static func setupRate(irisgw: String, sessions: Int = 400, workers: Int = 16) throws -> (rate: Double, failed: Int)
    {
        try withBridge(irisgw: irisgw) { gw, router in setupRate(gw, router, sessions: sessions, workers: workers) }
    }

    /// Setup rates through two profiles of one gateway, `rounds` rounds of `sessions` each,
    /// interleaved so load from other processes hits both alike: sessions per second over
    /// all rounds for each, and the failures of both.
    static func interleavedRates(
        _ gw: Gateway, _ router: EventRouter, profiles: (String, String), sessions: Int, workers: Int,
        rounds: Int
    ) -> (first: Double, second: Double, failed: Int) {
        var seconds = (0.0, 0.0), failed = 0
        for _ in 0..<rounds {
            let a = setupRate(gw, router, sessions: sessions, workers: workers, profile: profiles.0)
            let b = setupRate(gw, router, sessions: sessions, workers: workers, profile: profiles.1)
            seconds.0 += Double(sessions) / a.rate
            seconds.1 += Double(sessions) / b.rate
            failed += a.failed + b.failed
        }
        return (Double(sessions * rounds) / seconds.0, Double(sessions * rounds) / seconds.1, failed)
    }

    /// `sessions` outbound sessions through a running gateway, `workers` at a time: create,
    /// wait for Connected, close, wait for the end. Sessions per second and how many failed;
    /// `durations` (when given) gets each successful session's phases: the create request,
    /// from its answer to Connected, and from the close to the end.
    static func setupRate(
        _ gw: Gateway, _ router: EventRouter, sessions: Int, workers: Int, profile: String? = nil,
        durations: (@Sendable (SessionPhases) -> Void)? = nil
    ) -> (rate: Double, failed: Int) {
        setupRate([(gw, router)], sessions: sessions, workers: workers, profile: profile, durations: durations)
    }

    /// The same over several gateways (a cluster's nodes): session `i` goes to `targets[i % count]`,
    /// each waited for on that gateway's own event stream.
    static func setupRate(
        _ targets: [(Gateway, EventRouter)], sessions: Int, workers: Int, profile: String? = nil,
        durations: (@Sendable (SessionPhases) -> Void)? = nil
    ) -> (rate: Double, failed: Int) {
        let next = Atomic<Int>(0), failed = Atomic<Int>(0)
        let start = Date()
        // One thread per worker: these workers mostly wait.
        runOnThreads(workers) { _ in work() }
        return (Double(sessions) / Date().timeIntervalSince(start), failed.load(ordering: .relaxed))

        @Sendable func work() {
            let clients = targets.compactMap { gw, _ in
                try? HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
            }
            guard clients.count == targets.count else { return }
            while case let index = next.add(1, ordering: .relaxed).oldValue, index < sessions {
                let client = clients[index % clients.count], router = targets[index % targets.count].1
                switch session(client, router, profile: profile) {
                case .success(let phases): durations?(phases)
                case .failure: failed.add(1, ordering: .relaxed)
                }
            }
        }
    }

    /// The step at which a session of `session(_:_:profile:)` failed.
    enum SessionStep: String, Error {
        case create, connect, end
    }

    /// One session through `client`'s gateway, waited for on `router`: create, `Connected`,
    /// close, `onSessionEnded`; where its time went, or the step that failed (one not
    /// connected in 10 s is left to its ring timeout).
    static func session(
        _ client: HTTPClient, _ router: EventRouter, profile: String? = nil
    ) -> Result<SessionPhases, SessionStep> {
        let began = Date()
        guard let s = create(client, mediaPort: 9, profile: profile) else { return .failure(.create) }
        defer { router.forget(s.roomId) }
        let created = Date()
        // A call that failed (its trunk unreachable ...) ends without Connected: counted at once,
        // not after the 10 s.
        guard router.wait(s.roomId, timeout: 10, { $0.status == .connected || $0.event == .onSessionEnded }),
            router.wait(s.roomId, timeout: 0, { $0.status == .connected })
        else { return .failure(.connect) }
        let connected = Date()
        guard close(client, roomId: s.roomId).closed,
            router.wait(s.roomId, timeout: 10, { $0.event == .onSessionEnded })
        else { return .failure(.end) }
        return .success(
            SessionPhases(
                create: created.timeIntervalSince(began), connect: connected.timeIntervalSince(created),
                end: Date().timeIntervalSince(connected)))
    }

    /// Where a legitimate session's time went, in seconds.
    struct SessionPhases: Sendable {
        var create: Double, connect: Double, end: Double
        var total: Double { create + connect + end }
    }

    /// Full-duplex transcoded calls through the whole gateway: channels per core from the
    /// gateway's CPU time (all its threads) over `seconds` of steady state.
    static func mediaRun(
        irisgw: String, calls: Int = 100, seconds: Double = 4
    ) throws -> (channelsPerCore: Double, received: Int, sent: Int) {
        try withBridge(irisgw: irisgw) { gw, router in
            let client = try HTTPClient(baseURL: gw.api, defaultHeaders: ["Authorization": "Bearer " + gw.key])
            let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 16 << 20)
            var targets: [RawSocketAddress] = []
            var rooms: [String] = []
            for _ in 0..<calls {
                guard let s = create(client, mediaPort: socket.local.port),
                    router.wait(s.roomId, timeout: 10, { $0.status == .connected }),
                    let sdp = s.media?.sdp, let p = BenchSDP.audioStream(sdp)?.port,
                    let raw = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: p))
                else {
                    throw SocketError("a bench call did not connect", code: EIO)
                }
                targets.append(raw)
                rooms.append(s.roomId)
            }
            let (_, opusFrames) = try MediaBench.payloads()
            let timer = try PeriodicTimer(interval: 0.020)
            var packet = [UInt8](repeating: 0, count: 1500)
            let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { rx.deallocate() }
            var from = RawSocketAddress()
            var received = 0, sent = 0
            let warmup = 25, ticks = warmup + Int(seconds * 50)
            var cpu0 = 0.0, wall0 = 0.0
            var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
            for tick in 0..<ticks {
                if tick == warmup { cpu0 = gw.cpuSeconds; wall0 = EventLoop.now() }
                while poll(&pfd, 1, 100) == 0 {}
                _ = timer.read()
                for (i, to) in targets.enumerated() {
                    let payload = opusFrames[tick % opusFrames.count]
                    packet.withUnsafeMutableBytes {
                        _ = try? RTPHeader(
                            payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: tick),
                            timestamp: UInt32(tick) &* 960,
                            ssrc: UInt32(i + 1)
                        ).write(into: $0)
                    }
                    for (j, b) in payload.enumerated() { packet[12 + j] = b }
                    packet.withUnsafeBytes {
                        if socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<(12 + payload.count)]), to: to) {
                            sent += 1
                        }
                    }
                }
                while socket.receive(into: rx, from: &from) != nil { received += 1 }
            }
            let cpu = gw.cpuSeconds - cpu0, wall = EventLoop.now() - wall0
            for room in rooms { _ = try? client.request(method: "DELETE", path: "/v1/sessions/\(room)") }
            return (cpu > 0 ? Double(calls) * wall / cpu : 0, received, sent)
        }
    }
}
