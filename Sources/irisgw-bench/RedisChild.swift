import Foundation
import Glibc

/// A `redis-server` of the bench's own on 127.0.0.1, a port from the OS, no persistence, its
/// folder temporary; ready once `redis-cli` gets PONG. `stop()` ends it and removes the folder.
final class RedisChild {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    let port: Int
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("irisgw-bench-redis-\(getpid())")

    init() throws {
        guard let port = CallRateBench.freePort(type: SOCK_STREAM) else {
            throw Failure(description: "no free TCP port for redis-server")
        }
        self.port = port
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", directory.path, "--daemonize", "no"
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard GatewayProbe.waitFor(timeout: 10, { !process.isRunning || answersPing() }), process.isRunning else {
            stop()
            throw Failure(description: "redis-server on port \(port) did not start")
        }
    }

    var url: String { "redis://127.0.0.1:\(port)" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private func answersPing() -> Bool {
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        cli.arguments = ["-h", "127.0.0.1", "-p", String(port), "ping"]
        let out = Pipe()
        cli.standardOutput = out
        cli.standardError = FileHandle.nullDevice
        guard (try? cli.run()) != nil else { return false }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        cli.waitUntilExit()
        return text.contains("PONG")
    }
}
