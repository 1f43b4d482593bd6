import Foundation
import Glibc
import Synchronization

/// A child process a test starts (SIPp, baresip, stunnel, dnsmasq, kamailio, chromium,
/// python, `irisgw serve`, `openssl` ...), awaited without holding a thread of the
/// cooperative pool: its exit arrives through `Process.terminationHandler` and resumes
/// continuations, and its output (stdout and stderr together) goes to a file that is read
/// when asked, never through a pipe a test would block on.
public final class ChildProcess: @unchecked Sendable {  // `process` is set up before `run()` and only read after
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What a finished run left: its exit status and everything it printed.
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
    }

    private struct State: Sendable {
        var status: Int32?
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var afterExit: [@Sendable () -> Void] = []
    }

    public let process = Process()
    /// The file that receives the process's stdout, and its stderr unless `errorFile` is set.
    public let outputFile: URL
    /// The file that receives the process's stderr on its own (nil: it goes to `outputFile`).
    public let errorFile: URL?
    private let ownsOutputFile: Bool
    private let state = LockedState()

    /// The state behind a lock, in a class so the termination handler can hold it.
    private final class LockedState: Sendable {
        private let mutex = Mutex(State())
        func withLock<R: Sendable>(_ body: (inout State) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    /// Starts `executable` with `arguments`. Output goes to `outputFile` (default: a new
    /// temporary file, removed by `stop()`), stderr too unless `discardingErrors` or an
    /// `errorFile` of its own (created here, left to the caller to remove); stdin is
    /// /dev/null unless `standardInput` is given. `unblockingSignals`: the child starts with
    /// no signal blocked. The test runner's threads block SIGTERM and SIGINT and a child
    /// inherits that mask, so without it a tool that does not reset its mask (sngrep,
    /// openssl) ignores the SIGTERM of `stop()` until the SIGKILL after the grace.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: URL? = nil, outputFile: URL? = nil, errorFile: URL? = nil, discardingErrors: Bool = false,
        standardInput: Any? = nil, unblockingSignals: Bool = false
    ) throws {
        self.errorFile = errorFile
        self.outputFile =
            outputFile
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("irisgw-child-\(UUID().uuidString.prefix(8)).out")
        ownsOutputFile = outputFile == nil
        guard FileManager.default.createFile(atPath: self.outputFile.path, contents: nil) else {
            throw Failure("cannot create \(self.outputFile.path)")
        }
        let out = try FileHandle(forWritingTo: self.outputFile)
        defer { try? out.close() }
        var err: FileHandle?
        if let errorFile {
            guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
                throw Failure("cannot create \(errorFile.path)")
            }
            err = try FileHandle(forWritingTo: errorFile)
        }
        defer { try? err?.close() }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardOutput = out
        process.standardError = discardingErrors ? FileHandle.nullDevice : err ?? out
        process.standardInput = standardInput ?? FileHandle.nullDevice
        process.terminationHandler = { [state] p in
            let (waiters, afterExit) = state.withLock { s in
                s.status = p.terminationStatus
                defer { s.waiters = [:]; s.afterExit = [] }
                return (Array(s.waiters.values), s.afterExit)
            }
            for w in waiters { w.resume() }
            for work in afterExit { work() }
        }
        // Foundation's Process.run is not safe to call from several threads at once (a
        // parallel suite crashed in its memcpy): one launch at a time, the rest is parallel.
        try ChildProcess.launching.withLock { _ in
            // posix_spawn hands the calling thread's mask on: empty it for the spawn alone.
            var previous = sigset_t(), empty = sigset_t()
            sigemptyset(&empty)
            if unblockingSignals { pthread_sigmask(SIG_SETMASK, &empty, &previous) }
            defer { if unblockingSignals { pthread_sigmask(SIG_SETMASK, &previous, nil) } }
            try process.run()
        }
    }

    private static let launching = Mutex<Void>(())

    /// Runs `executable` to its end (killed after `timeout` seconds) and returns its status
    /// and output.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        discardingErrors: Bool = false, unblockingSignals: Bool = false, timeout: Double = 30
    ) async throws -> Result {
        let child = try ChildProcess(
            executable, arguments, environment: environment, discardingErrors: discardingErrors,
            unblockingSignals: unblockingSignals)
        defer { child.stop() }
        guard let status = await child.exit(timeout: timeout) else {
            throw Failure(
                "\(executable) \(arguments.joined(separator: " ")) did not finish in \(timeout) s: \(child.output)")
        }
        return Result(status: status, output: child.output)
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    /// The exit status, nil while it runs.
    public var exitStatus: Int32? { state.withLock { $0.status } }
    public var isRunning: Bool { exitStatus == nil }
    /// Everything printed so far.
    public var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    /// Everything printed on stderr so far, with an `errorFile` (else "").
    public var errors: String { errorFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? "" }

    /// Waits (suspended) until the process exits; its status, or nil when `timeout` passes first.
    public func exit(timeout: Double) async -> Int32? {
        if let status = exitStatus { return status }
        guard timeout > 0 else { return nil }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.exited() }
            group.addTask { try? await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1e9)) }
            await group.next()
            group.cancelAll()
        }
        return exitStatus
    }

    /// Waits until `output` contains `text` (true), or the process exits or `timeout` passes (false).
    public func waitForOutput(containing text: String, timeout: Double) async -> Bool {
        await eventually(timeout: timeout, pollInterval: 0.02) { output.contains(text) || !isRunning }
            && output.contains(text)
    }

    /// Sends `signal` and waits up to `timeout` for the exit; the status, or nil if it still runs.
    public func signal(_ signal: Int32, timeout: Double) async -> Int32? {
        if isRunning { kill(process.processIdentifier, signal) }
        return await exit(timeout: timeout)
    }

    /// Ends the process and waits for it: `signal`, then SIGKILL after `grace` seconds.
    /// Returns the exit status; the output stays until `stop()`.
    @discardableResult
    public func stopped(signal: Int32 = SIGTERM, grace: Double = 2) async -> Int32? {
        if let status = await self.signal(signal, timeout: grace) { return status }
        kill(process.processIdentifier, SIGKILL)
        return await exit(timeout: 10)
    }

    /// Ends the process without waiting (for a `defer`): `signal` now, SIGKILL after `grace`
    /// seconds from a dispatch timer if it still runs; the output file is removed.
    /// `afterExit` runs once it has exited (at once if it already has), off the caller's thread
    /// when it had to wait: for cleaning up what the process writes to while it runs.
    public func stop(signal: Int32 = SIGTERM, grace: Double = 2, afterExit: (@Sendable () -> Void)? = nil) {
        let exited = state.withLock { s -> Bool in
            if s.status == nil, let afterExit { s.afterExit.append(afterExit) }
            return s.status != nil
        }
        if exited {
            afterExit?()
        } else {
            kill(process.processIdentifier, signal)
            DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [self] in
                if isRunning { kill(process.processIdentifier, SIGKILL) }
            }
        }
        removeOutput()
    }

    private func removeOutput() {
        if ownsOutputFile { try? FileManager.default.removeItem(at: outputFile) }
    }

    private func exited() async {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.status != nil || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
