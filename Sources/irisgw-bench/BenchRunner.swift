import Foundation
import Glibc
import Synchronization

/// One bench of `make bench` (docs/benchmarks.md, "How a run goes").
struct BenchEntry: Sendable {
    /// What `irisgw-bench NAME` and `BENCH_ARGS` pick it by; its lines say `BENCH NAME...`.
    let name: String
    /// Run by a bare `irisgw-bench` (`make bench`); the others only when named, or with `all`.
    let inDefaultSet: Bool
    /// Seconds after which its whole process group is stopped and it counts as skipped.
    let deadline: Double
    /// The field of its lines the summary table shows.
    let keyFigure: String
    /// Executables it cannot run without: one missing, it is skipped with the reason.
    var requires: [String] = []
    /// Aims (`target_..._min/max=`) for its lines that do not print their own, by line name.
    var aims: [String: String] = [:]
    /// The bench itself, run in the child (`irisgw-bench --run-one NAME ARGS`); `arguments` are
    /// the words that followed its name.
    var run: @Sendable (_ arguments: [String]) throws -> Void = { _ in }
}

/// A bench that cannot run here (a tool missing, not root ...): its line says skipped, and
/// the run goes on.
struct BenchUnavailable: Error, CustomStringConvertible {
    var description: String
}

/// `make bench`: each bench a child process of its own in its own process group, stopped
/// with everything it started at its deadline or when the runner is told to stop; its
/// BENCH lines passed on with their aim and `pass=`, then a summary.
final class BenchRunner: @unchecked Sendable {  // used from one thread; `stopSignal` is atomic
    /// How a bench ended.
    enum Outcome: String, Sendable {
        case ran, skipped, crashed
    }

    struct Record: Sendable {
        var name: String
        var outcome: Outcome
        var seconds: Double
        /// `true`, `false` or `n/a` over its lines.
        var pass: String
        /// `key=value` of the entry's key figure, or why it was skipped / crashed.
        var figure: String
    }

    /// The environment variable every process of a bench inherits, so one that left the
    /// process group (`setsid`, a daemon) is still found and stopped.
    static let tokenVariable = "IRISGW_BENCH_RUN"
    /// Seconds between SIGTERM and SIGKILL.
    let grace: Double
    /// Where lines go (stdout in `make bench`).
    let output: (String) -> Void
    /// A signal asked the runner to stop (0: none).
    let stopSignal = Atomic<Int32>(0)
    private(set) var records: [Record] = []
    private var sequence = 0

    init(
        grace: Double = 5,
        output: @escaping (String) -> Void = {
            print($0); fflush(nil)
        }
    ) {
        self.grace = grace
        self.output = output
    }

    /// Runs `entry` as `command` (its first word the executable); returns how it ended.
    @discardableResult
    func run(_ entry: BenchEntry, command: [String]) -> Record {
        let started = Date()
        var lines: [BenchLine] = []
        func finish(_ outcome: Outcome, _ reason: String? = nil) -> Record {
            if let reason {
                let line = BenchLine(name: entry.name, skippedBecause: reason, crashed: outcome == .crashed)
                lines.append(line)
                output(line.text)
            }
            let record = Record(
                name: entry.name, outcome: outcome, seconds: Date().timeIntervalSince(started),
                pass: outcome == .ran ? Self.pass(of: lines) : outcome == .crashed ? "false" : "n/a",
                figure: reason.map { "reason=\(BenchLine.quoted($0))" } ?? Self.figure(entry, lines))
            records.append(record)
            return record
        }
        if let missing = entry.requires.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) {
            return finish(.skipped, "needs \(missing), which is not installed")
        }
        if stopSignal.load(ordering: .relaxed) != 0 { return finish(.skipped, "runner stopped") }
        sequence += 1
        let token = "\(getpid())-\(sequence)-\(entry.name)"
        let child: SpawnedGroup
        do {
            child = try SpawnedGroup(command, environment: [Self.tokenVariable: token])
        } catch {
            return finish(.crashed, "could not start: \(error)")
        }
        var pending: [UInt8] = []
        func take(_ bytes: ArraySlice<UInt8>) {
            pending += bytes
            while let nl = pending.firstIndex(of: 10) {
                let text = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                guard var line = BenchLine(text) else {
                    output(text)
                    continue
                }
                line.complete(aims: entry.aims)
                lines.append(line)
                output(line.text)
            }
        }
        var status: Int32?
        var stoppedBecause: String?
        while status == nil {
            take(child.read(timeout: 0.2)[...])
            status = child.exitStatus()
            if status != nil { break }
            if Date().timeIntervalSince(started) > entry.deadline {
                stoppedBecause = "deadline \(Int(entry.deadline)) s"
            } else if case let s = stopSignal.load(ordering: .relaxed), s != 0 {
                stoppedBecause = "runner stopped by signal \(s)"
            }
            if stoppedBecause != nil {
                Self.stop(group: child.pid, token: token, grace: grace)
                status = child.waitExit()
            }
        }
        // What it left running after it ended (a child it never stopped) goes too, before the
        // rest of its output is read (one of them could hold the pipe open and write on).
        Self.stop(group: child.pid, token: token, grace: grace)
        take(child.drain()[...])
        if !pending.isEmpty { take([10][...]) }
        child.close()
        if let stoppedBecause { return finish(.skipped, stoppedBecause) }
        let code = status ?? -1
        if code != 0 {
            let why = code >= 128 ? "killed by signal \(code - 128)" : "exit status \(code)"
            return finish(.crashed, why)
        }
        let ranSomething = lines.contains { !$0.isSkipped }
        return finish(ranSomething ? .ran : .skipped)
    }

    /// `true` when no line failed and one passed; `false` when one failed; else `n/a`.
    static func pass(of lines: [BenchLine]) -> String {
        let values = lines.compactMap { $0.field("pass") }
        if values.contains("false") { return "false" }
        return values.contains("true") ? "true" : "n/a"
    }

    /// The entry's key figure from the first line that has it, with that line's aim for it.
    static func figure(_ entry: BenchEntry, _ lines: [BenchLine]) -> String {
        guard let line = lines.first(where: { $0.field(entry.keyFigure) != nil }),
            let value = line.field(entry.keyFigure)
        else { return lines.first(where: \.isSkipped).flatMap { $0.field("reason") }.map { "skipped: \($0)" } ?? "-" }
        // Its aim: `target_<figure>_min/max`, or one on the figure's last words (`target_cps_min` for `max_cps`).
        let aim = line.fields.first { field in
            guard field.key.hasPrefix("target_") else { return false }
            var subject = String(field.key.dropFirst(7))
            if subject.hasSuffix("_min") || subject.hasSuffix("_max") { subject.removeLast(4) }
            return subject == entry.keyFigure || entry.keyFigure.hasSuffix("_" + subject)
        }
        return "\(entry.keyFigure)=\(value)" + (aim.map { " (\($0.key)=\($0.value))" } ?? "")
    }

    /// The summary line and the table under it.
    func summary(seconds: Double) -> [String] {
        let ran = records.filter { $0.outcome != .skipped }
        var lines = [
            "BENCH summary ran=\(ran.count) passed=\(ran.filter { $0.pass != "false" }.count) "
                + "failed=\(ran.filter { $0.pass == "false" }.count) skipped=\(records.count - ran.count) "
                + "crashed=\(records.filter { $0.outcome == .crashed }.count) seconds=\(Int(seconds.rounded()))"
        ]
        let width = max(5, records.map(\.name.count).max() ?? 0)
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        lines.append("  \(pad("bench", width))  \(pad("pass", 7))  \(pad("seconds", 7))  key figure")
        for r in records {
            let pass = r.outcome == .ran ? r.pass : r.outcome.rawValue
            lines.append(
                "  \(pad(r.name, width))  \(pad(pass, 7))  \(pad(String(Int(r.seconds.rounded())), 7))  \(r.figure)")
        }
        return lines
    }

    /// Stops every process of the bench: its process group and whatever carries its token,
    /// SIGTERM first, SIGKILL after `grace` seconds; returns when none is left (or 5 s after
    /// the SIGKILL, for one stuck in the kernel).
    static func stop(group: pid_t, token: String, grace: Double) {
        let me = getpid()
        func alive() -> [pid_t] { Self.processes(group: group, token: token).filter { $0 != me } }
        for (signal, wait) in [(SIGTERM, grace), (SIGKILL, 5.0)] {
            var left = alive()
            if left.isEmpty { return }
            kill(-group, signal)
            for pid in left { kill(pid, signal) }
            let end = Date().addingTimeInterval(wait)
            while !left.isEmpty, Date() < end {
                usleep(20_000)
                left = alive()
            }
        }
    }

    /// Live (not zombie) processes in process group `group` or with `IRISGW_BENCH_RUN=token`
    /// in their environment (/proc).
    static func processes(group: pid_t, token: String) -> [pid_t] {
        let mark = Array("\(tokenVariable)=\(token)\0".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> pid_t? in
            guard let pid = pid_t(name),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the command: state, ppid, pgrp.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", fields[0] != "X" else { return nil }
            if pid_t(fields[2]) == group { return pid }
            guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
            return [UInt8](environ).containsSequence(mark) ? pid : nil
        }
    }
}

/// Makes C's `stdout` line-buffered (a pipe is fully buffered), so a bench's lines reach the
/// runner as they are printed, and none is lost when it is stopped. Through `dlsym`: Swift 6
/// does not let code read the C global directly.
func lineBufferStandardOutput() {
    guard let symbol = dlsym(nil, "stdout") else { return }
    setvbuf(symbol.assumingMemoryBound(to: UnsafeMutablePointer<FILE>?.self).pointee, nil, _IOLBF, 0)
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in it.
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        return (0...(count - needle.count)).contains { i in self[i..<(i + needle.count)].elementsEqual(needle) }
    }
}

/// A child started in a process group of its own (`posix_spawn`, `POSIX_SPAWN_SETPGROUP`) with
/// no signal blocked or ignored, its stdout a pipe to us, its stdin /dev/null, stderr ours.
final class SpawnedGroup {
    let pid: pid_t
    private let output: Int32
    private var status: Int32?

    init(_ command: [String], environment extra: [String: String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchUnavailable(description: "pipe: errno \(errno)") }
        // Neither end leaks into another child (only the bench gets the write end, as its stdout).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        // A test runner's threads block SIGTERM and the runner ignores it: the bench must not inherit either.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in extra { env[k] = v }
        let argv = command.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        Glibc.close(fds[1])
        guard rc == 0 else {
            Glibc.close(fds[0])
            throw BenchUnavailable(description: "posix_spawn \(command[0]): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        output = fds[0]
    }

    /// What it printed within `timeout` seconds (empty when nothing).
    func read(timeout: Double) -> [UInt8] {
        var pfd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) > 0 else { return [] }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = Glibc.read(output, &chunk, chunk.count)
        return n > 0 ? Array(chunk[0..<n]) : []
    }

    /// What is left in the pipe, without waiting for more (at most 1 MiB).
    func drain() -> [UInt8] {
        var all: [UInt8] = []
        while all.count < 1 << 20, case let bytes = read(timeout: 0), !bytes.isEmpty { all += bytes }
        return all
    }

    /// Its exit status (128 + signal when killed) once it has exited, without waiting.
    func exitStatus() -> Int32? {
        if status != nil { return status }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
        status = Self.decode(raw)
        return status
    }

    /// Waits for it to exit (after it was killed).
    func waitExit() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        status = Self.decode(raw)
        return status!
    }

    func close() { Glibc.close(output) }

    private static func decode(_ raw: Int32) -> Int32 {
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }
}
