import Foundation
import Glibc
import IOCore

/// A child process the bench talks to in lines over its stdin and stdout.
final class LineChild {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []
    private var stopped = false
    let label: String

    init(_ executable: String, _ arguments: [String], label: String, stderr: FileHandle? = nil) throws {
        self.label = label
        // A child that is gone must not take the bench with it when we write to it.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        if let stderr { process.standardError = stderr }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// `command` pinned to `cpu` (`taskset`) at nice -10 (`nice`; both exec it, so its pid is
    /// the child's), engines and generator alike; without root, at normal priority. Not
    /// SCHED_RR: rtpengine's several threads then wait for each other on its one CPU (in one
    /// test at 28 transcoded calls: p99 lateness 25 ms under RR, 4 ms at nice -10), which is
    /// not how it is run.
    static func pinned(cpu: Int, _ command: [String]) -> [String] {
        let pin = ["/usr/bin/taskset", "-c", "\(cpu)"] + command
        // `nice -n` adds to the caller's niceness (`nice -n 19 make bench` would give 9).
        let adjustment = -10 - Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        return geteuid() == 0 ? ["/usr/bin/nice", "-n", "\(adjustment)"] + pin : pin
    }

    convenience init(pinnedTo cpu: Int, _ command: [String], label: String, stderr: FileHandle? = nil) throws {
        let line = Self.pinned(cpu: cpu, command)
        try self.init(line[0], Array(line.dropFirst()), label: label, stderr: stderr)
    }

    func send(_ line: String) {
        guard !stopped else { return }
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        let fd = input.fileHandleForWriting.fileDescriptor
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// The next line the child prints, waiting up to `timeout` seconds.
    func readLine(timeout: Double) throws -> String {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = EventLoop.now() + timeout
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeFirst(nl + 1)
                return line
            }
            let remaining = deadline - EventLoop.now()
            guard remaining > 0 else { throw Failure(description: "\(label): no answer in \(Int(timeout)) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { throw Failure(description: "\(label): exited") }
            buffer += chunk[0..<n]
        }
    }

    /// Closes its stdin (our children stop at its end), waits up to `timeout` seconds, then kills it.
    func stop(timeout: Double = 8) {
        guard !stopped else { return }
        stopped = true
        try? input.fileHandleForWriting.close()
        let deadline = EventLoop.now() + timeout
        while process.isRunning && EventLoop.now() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The scheduler's autogroup of this session (`/proc/self/autogroup`): with autogroups on,
/// `nice` only weighs processes of one session against each other, and a build in another
/// session shares a CPU half and half with the engine under test. The comparison raises its
/// session's autogroup to nice -10 while it runs (root only; restored after), for both engines alike.
enum SessionPriority {
    static func current() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/autogroup", encoding: .utf8),
            let value = text.split(separator: " ").last
        else { return nil }
        return Int(value.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @discardableResult
    static func set(_ nice: Int) -> Bool {
        guard let fh = FileHandle(forWritingAtPath: "/proc/self/autogroup") else { return false }
        defer { try? fh.close() }
        return (try? fh.write(contentsOf: Data("\(nice)".utf8))) != nil
    }

    /// Runs `body` with the session at nice -10, then puts it back.
    static func raised<T>(_ body: () throws -> T) rethrows -> T {
        let before = current()
        if before != nil { set(-10) }
        defer { if let before { set(before) } }
        return try body()
    }
}

/// Where the generator sends one call: the engine's trunk port, platform port, and the payload
/// type the platform leg expects.
struct CallTarget {
    var trunk: Int
    var platform: Int
    var payloadType: UInt8
}

/// A media server under test: its own process, pinned to CPU 0.
protocol MediaServerUnderTest: AnyObject {
    var name: String { get }
    /// The process whose CPU time (all threads) is measured.
    var pid: Int32 { get }
    /// Opens one call per generator (trunk, platform) port pair.
    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget]
    /// Closes the calls; returns what the engine counted for them when it says ("key=value ...", or "").
    @discardableResult
    func closeAll() throws -> String
    func stop()
}

/// irisgw's media engine in `irisgw-bench media-server`, on CPU 0 (`LineChild.pinned`).
final class IrisgwMediaServer: MediaServerUnderTest {
    let name = "irisgw"
    private let child: LineChild
    var pid: Int32 { child.pid }

    /// `budget`: admission at this load budget, per cent (refused calls get no media).
    init(binary: String, complexity: Int32, budget: Int? = nil) throws {
        child = try LineChild(
            pinnedTo: 0,
            [binary, "media-server", "--complexity", "\(complexity)"] + (budget.map { ["--budget", "\($0)"] } ?? []),
            label: "media-server")
        let hello = try child.readLine(timeout: 20)
        guard hello == "ready" else { throw LineChild.Failure(description: "media-server said \(hello)") }
    }

    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget] {
        child.send("open \(mode.rawValue) " + generator.map { "\($0.0),\($0.1)" }.joined(separator: " "))
        let line = try child.readLine(timeout: 120)
        guard line.hasPrefix("ok") else { throw LineChild.Failure(description: "media-server: \(line)") }
        return line.split(separator: " ").dropFirst().compactMap { item in
            let v = item.split(separator: ",").compactMap { Int($0) }
            return v.count == 3
                ? CallTarget(trunk: v[0], platform: v[1], payloadType: UInt8(truncatingIfNeeded: v[2])) : nil
        }
    }

    func closeAll() throws -> String {
        child.send("close")
        let line = try child.readLine(timeout: 60)
        guard line.hasPrefix("ok") else { throw LineChild.Failure(description: "media-server: \(line)") }
        return String(line.dropFirst(3))
    }

    func stop() {
        child.send("quit")
        child.stop()
    }
}

/// Debian's rtpengine (`rtpengine-daemon`), userspace only (`--table=-1`), one worker thread,
/// run by the bench itself on CPU 0 like irisgw (`LineChild.pinned`; never as the Debian service), driven over the
/// ng control protocol. A small `sh` stays between the bench and rtpengine: when its stdin
/// closes (the bench stopped it, or the bench died) it stops rtpengine.
final class RTPEngineServer: MediaServerUnderTest {
    static let binary = "/usr/bin/rtpengine"
    /// Below the ephemeral ports, apart from irisgw's (`MediaServer.portRange`).
    static let portMin = 15_000, portMax = 19_999
    let name = "rtpengine"
    private let wrapper: LineChild
    private let ng: NGClient
    let pid: Int32
    let version: String
    let logPath: String
    let arguments: [String]
    private var opened: [(callID: String, fromTag: String)] = []
    private var session = 0

    /// The codec rtpengine is told to transcode the platform side to: Opus at 48 kHz, mono,
    /// 32 kb/s (`encoding/clock/channels/bitrate`). Told `opus/48000/2` (what browsers' SDP
    /// says), rtpengine 10.5 encodes two channels.
    static let opusCodec = "opus/48000/1/32000"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Unavailable(
                description: "rtpengine not installed (make bench installs rtpengine-daemon; it failed or was not root)"
            )
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: Self.binary)
        probe.arguments = ["--version"]
        let out = Pipe()
        probe.standardOutput = out
        probe.standardError = out
        try probe.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        version =
            text.split(separator: "\n").first(where: { $0.contains("Version") }).map {
                String($0.split(separator: " ").last ?? "")
            } ?? "unknown"

        // An ng port from the OS (bound, read, released).
        let ngPort = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0)).local.port
        arguments = [
            "--config-file=none", "--foreground", "--table=-1", "--interface=127.0.0.1",
            "--listen-ng=127.0.0.1:\(ngPort)", "--port-min=\(Self.portMin)", "--port-max=\(Self.portMax)",
            "--num-threads=1", "--log-stderr", "--log-level=4", "--delete-delay=0", "--timeout=60"
        ]
        logPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-rtpengine-\(getpid()).log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        let script = """
            "$@" >/dev/null </dev/null & p=$!; echo "pid $p"; cat >/dev/null; kill -TERM $p 2>/dev/null; \
            i=0; while kill -0 $p 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL $p 2>/dev/null; wait $p
            """
        wrapper = try LineChild(
            "/bin/sh", ["-c", script, "sh"] + LineChild.pinned(cpu: 0, [Self.binary] + arguments),
            label: "rtpengine", stderr: log)
        let line = try wrapper.readLine(timeout: 10)
        guard line.hasPrefix("pid "), let p = Int32(line.dropFirst(4)) else {
            throw Unavailable(description: "rtpengine wrapper said \(line)")
        }
        pid = p
        ng = try NGClient(server: SocketAddress(host: "127.0.0.1", port: ngPort))
        // Up when it answers ping.
        let deadline = EventLoop.now() + 15
        while true {
            if (try? ng.request("ping", timeout: 0.3, attempts: 1))?["result"]?.stringValue == "pong" { break }
            guard EventLoop.now() < deadline, kill(pid, 0) == 0 else {
                wrapper.stop()
                throw Unavailable(description: "rtpengine did not start: \(lastLog())")
            }
        }
    }

    /// The end of rtpengine's log (stderr), one line.
    func lastLog() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(2).joined(separator: " | ").replacingOccurrences(of: "\"", with: "'")
    }

    /// Per call: an offer from the trunk side (PCMU at the generator's trunk socket; for
    /// transcoding with `codec: {transcode: [opus], mask: [PCMU]}` so the platform side is
    /// offered Opus only and PCMU is still accepted from the trunk), then the platform side's
    /// answer (Opus, or PCMU, at the generator's platform socket). The offer's reply says
    /// where the platform side sends; the answer's, where the trunk side sends.
    func open(_ mode: LoadMode, generator: [(Int, Int)]) throws -> [CallTarget] {
        session += 1
        var targets: [CallTarget] = []
        for (i, ports) in generator.enumerated() {
            let callID = "irisgw-bench-\(getpid())-\(session)-\(i)"
            var offer: [String: Bencode] = [
                "call-id": .string(callID), "from-tag": .string("trunk-\(i)"),
                "sdp": .string(BenchSDP.audio(port: ports.0, payloadType: 0, rtpmap: "PCMU/8000", session: 2 * i + 1))
            ]
            if mode == .transcode {
                offer["codec"] = .dict(["transcode": .list([.string(Self.opusCodec)]), "mask": .list([.string("PCMU")])]
                )
            }
            let offered = try ng.request("offer", offer)
            opened.append((callID, "trunk-\(i)"))
            guard let offerSDP = offered["sdp"]?.stringValue, let toPlatform = BenchSDP.audioStream(offerSDP) else {
                throw Unavailable(description: "rtpengine offer without SDP: \(offered)")
            }
            let pt: UInt8
            let answerSDP: String
            if mode == .transcode {
                guard let opus = BenchSDP.payloadType(of: "opus", in: offerSDP) else {
                    throw Unavailable(
                        description:
                            "rtpengine offered no Opus to transcode to: \(offerSDP.replacingOccurrences(of: "\r\n", with: " "))"
                    )
                }
                pt = opus
                answerSDP = BenchSDP.audio(
                    port: ports.1, payloadType: pt, rtpmap: "opus/48000/1", fmtp: "useinbandfec=1", session: 2 * i + 2)
            } else {
                pt = 0
                answerSDP = BenchSDP.audio(port: ports.1, payloadType: 0, rtpmap: "PCMU/8000", session: 2 * i + 2)
            }
            let answered = try ng.request(
                "answer",
                [
                    "call-id": .string(callID), "from-tag": .string("trunk-\(i)"), "to-tag": .string("platform-\(i)"),
                    "sdp": .string(answerSDP)
                ])
            guard let toTrunk = answered["sdp"]?.stringValue.flatMap(BenchSDP.audioStream) else {
                throw Unavailable(description: "rtpengine answer without SDP")
            }
            if mode == .relay && toTrunk.payloadTypes.first != 0 {
                throw Unavailable(description: "rtpengine answered \(toTrunk.payloadTypes) for PCMU")
            }
            targets.append(CallTarget(trunk: toTrunk.port, platform: toPlatform.port, payloadType: pt))
        }
        return targets
    }

    func closeAll() throws -> String {
        defer { opened.removeAll() }
        for c in opened {
            _ = try? ng.request("delete", ["call-id": .string(c.callID), "from-tag": .string(c.fromTag)])
        }
        return ""
    }

    func stop() {
        try? closeAll()
        wrapper.stop(timeout: 10)
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
