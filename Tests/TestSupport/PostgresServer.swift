import Foundation
import Glibc

/// A throwaway PostgreSQL server for a test: `initdb` into a temporary directory owned by the
/// `postgres` user (the server refuses to run as root), then `postgres` on 127.0.0.1 at a port
/// from `freePort()` with its Unix socket in the same directory, trust authentication (any
/// password in a URL is accepted and ignored). Start it with `start()`, make databases with
/// `createDatabase()`, and end it with `stop()` (in a `defer`), which removes the directory.
/// `pause()` and `restart()` take the server down and up on the same data and port, for
/// outage tests.
///
/// Debian's binaries by default (`/usr/lib/postgresql/15/bin`, `IRISGW_POSTGRES_BIN` to
/// change). As root the tools run through `setpriv` as `postgres`; as anyone else, as that user.
public final class PostgresServer: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The directory holding `data/` and the socket.
    public let directory: URL
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The directory of the Unix socket (`?host=` in a URL).
    public var socketDirectory: String { directory.path }
    private let binaries: String
    private let child = LockedChild()

    private final class LockedChild: @unchecked Sendable {  // every access holds `lock`
        private let lock = NSLock()
        private var value: ChildProcess?
        func swap(_ new: ChildProcess?) -> ChildProcess? {
            lock.lock()
            defer { lock.unlock() }
            let old = value
            value = new
            return old
        }
        var current: ChildProcess? {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    /// Runs `initdb` (a few seconds) and starts the server; returns once it accepts
    /// connections. Throws (having cleaned up) when it does not within `timeout` seconds.
    public static func start(timeout: Double = 60) async throws -> PostgresServer {
        let server = try PostgresServer()
        do {
            try await server.initialize(timeout: timeout)
            try await server.restart(timeout: timeout)
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    private init() throws {
        binaries = ProcessInfo.processInfo.environment["IRISGW_POSTGRES_BIN"] ?? "/usr/lib/postgresql/15/bin"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try freePort()
        let owner: [FileAttributeKey: Any] =
            getuid() == 0 ? [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"] : [:]
        try FileManager.default.setAttributes(
            owner.merging([.posixPermissions: 0o700]) { a, _ in a }, ofItemAtPath: directory.path)
    }

    private var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// `tool` with `arguments`, as `postgres` when we are root (the server refuses root).
    private func asPostgres(_ tool: String, _ arguments: [String]) -> (String, [String]) {
        guard getuid() == 0 else { return (binaries + "/" + tool, arguments) }
        return (
            "/usr/bin/setpriv",
            ["--reuid=postgres", "--regid=postgres", "--init-groups", binaries + "/" + tool] + arguments
        )
    }

    private func initialize(timeout: Double) async throws {
        let (tool, arguments) = asPostgres(
            "initdb", ["-D", dataDirectory, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        let result = try await ChildProcess.run(tool, arguments, timeout: timeout)
        guard result.status == 0 else { throw Failure(description: "initdb failed: \(result.output)") }
    }

    /// A URL to database `database` over TCP; with `password` in its user info (trust
    /// authentication ignores it).
    public func url(database: String = "postgres", password: String? = nil) -> String {
        "postgres://postgres\(password.map { ":" + $0 } ?? "")@127.0.0.1:\(port)/\(database)"
    }

    /// Creates a new empty database and returns its name.
    public func createDatabase() async throws -> String {
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try await psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs `sql` with `psql` in `database`; returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let (tool, arguments) = asPostgres(
            "psql",
            [
                "-h", socketDirectory, "-p", String(port), "-U", "postgres", "-d", database, "-X", "-A", "-t", "-v",
                "ON_ERROR_STOP=1",
                "-c", sql
            ])
        let result = try await ChildProcess.run(tool, arguments, timeout: 30)
        guard result.status == 0 else { throw Failure(description: "psql \(sql): \(result.output)") }
        return result.output
    }

    /// True when the server answers (`pg_isready`).
    public func isAccepting() async -> Bool {
        let (tool, arguments) = asPostgres("pg_isready", ["-q", "-h", socketDirectory, "-p", String(port)])
        return (try? await ChildProcess.run(tool, arguments, timeout: 10))?.status == 0
    }

    /// Takes the server down (fast shutdown: sessions are ended) and keeps its data.
    public func pause() async {
        if let running = child.swap(nil) {
            await running.stopped(signal: SIGINT, grace: 20)
            running.stop()
        }
    }

    /// Starts the server (again) on the same data and port; returns once it accepts.
    public func restart(timeout: Double = 60) async throws {
        await pause()
        let (tool, arguments) = asPostgres(
            "postgres", ["-D", dataDirectory, "-p", String(port), "-k", socketDirectory, "-h", "127.0.0.1", "-F"])
        let started = try ChildProcess(tool, arguments)
        _ = child.swap(started)
        let up = await eventually(timeout: timeout, pollInterval: 0.1) {
            !started.isRunning ? true : await isAccepting()
        }
        guard up, started.isRunning else {
            throw Failure(description: "postgres did not start: \(started.output)")
        }
    }

    /// Stops the server and removes its directory.
    public func stop() async {
        await pause()
        try? FileManager.default.removeItem(at: directory)
    }
}
