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
