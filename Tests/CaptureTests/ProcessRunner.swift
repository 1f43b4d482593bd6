import Foundation
import Glibc

/// Runs tools the tests check the files against (tshark, sngrep): every process is stopped
/// by the test and every wait has a deadline.
///
/// Processes are started with posix_spawn and an empty signal mask: test code runs on
/// Dispatch worker threads, which block SIGTERM, and a child inheriting that mask would
/// ignore the SIGTERM `stop` sends (Foundation's `Process` passes the mask on).
enum ProcessRunner {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
        var timedOut: Bool
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    /// The absolute path of `tool` on PATH (or the usual sbin/bin directories), nil when absent.
    static func find(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        for directory in directories {
            let candidate = directory + "/" + tool
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// A fresh directory under the system temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A started process whose output goes to files, stopped with `stop(grace:)`.
    final class Running {
        let pid: pid_t
        let outputPath: String
        let errorPath: String
        private var exitStatus: Int32?

        init(_ executable: String, _ arguments: [String], in directory: URL) throws {
            outputPath = directory.appendingPathComponent("\(UUID().uuidString).out").path
            errorPath = directory.appendingPathComponent("\(UUID().uuidString).err").path

            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var empty = sigset_t()
            sigemptyset(&empty)
            posix_spawnattr_setsigmask(&attributes, &empty)
            var all = sigset_t()
            sigfillset(&all)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
            guard rc == 0 else { throw SpawnError(description: "posix_spawn \(executable): error \(rc)") }
            self.pid = pid
        }

        deinit { _ = stop(grace: 1) }

        var isRunning: Bool {
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                // Exit code, or 128 + the signal that ended it.
                let signal = status & 0x7F
                exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
                return false
            }
            if rc < 0 { exitStatus = -1 }
            return rc == 0
        }

        /// Waits until the process exits by itself, at most `timeout` seconds.
        func wait(timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while isRunning {
                if Date() >= deadline { return false }
                usleep(20_000)
            }
            return true
        }

        /// SIGTERM, then SIGKILL when it has not exited within `grace` seconds; returns the result.
        func stop(grace: Double = 5) -> Result {
            var timedOut = false
            if isRunning {
                kill(pid, SIGTERM)
                if !wait(timeout: grace) {
                    timedOut = true
                    kill(pid, SIGKILL)
                    _ = wait(timeout: grace)
                }
            }
            return collect(timedOut: timedOut)
        }

        func collect(timedOut: Bool) -> Result {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            return Result(status: isRunning ? -1 : exitStatus ?? -1, output: output, errors: errors, timedOut: timedOut)
        }
    }

    /// Runs `executable` to completion within `timeout` seconds (then SIGTERM / SIGKILL).
    static func run(_ executable: String, _ arguments: [String], in directory: URL, timeout: Double) throws -> Result {
        let running = try Running(executable, arguments, in: directory)
        if running.wait(timeout: timeout) { return running.collect(timedOut: false) }
        var result = running.stop()
        result.timedOut = true
        return result
    }
}
