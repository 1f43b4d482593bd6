import Foundation
import Glibc

/// A Python 3 (stdlib only) server run by a test: the script is written to a temporary
/// file, binds port 0 and prints the port on its first stdout line. `stop()` (call it in a
/// `defer`) ends the process (SIGTERM, then SIGKILL), reaps it and removes the file.
final class PythonServer: @unchecked Sendable {
    static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "/usr/local/bin/python3"

    let port: Int
    private let process = Process()
    private let script: URL
    private let stdout = Pipe()

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `source` and waits up to `timeout` seconds for its port.
    init(source: String, timeout: Double = 10) throws {
        script = FileManager.default.temporaryDirectory.appendingPathComponent("iris-client-test-\(UUID().uuidString.prefix(8)).py")
        try source.write(to: script, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-u", script.path]
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: script)
            throw error
        }
        guard let line = Self.readLine(stdout.fileHandleForReading.fileDescriptor, timeout: timeout), let port = Int(line) else {
            Self.end(process)
            try? FileManager.default.removeItem(at: script)
            throw StartError(description: "the Python server did not print its port within \(timeout) s")
        }
        self.port = port
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() {
        Self.end(process)
        try? FileManager.default.removeItem(at: script)
    }

    private static func end(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let until = Date().addingTimeInterval(2)
        while process.isRunning && Date() < until { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// One line from `fd`, waiting at most `timeout` seconds in all.
    private static func readLine(_ fd: Int32, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var bytes: [UInt8] = []
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { return nil }
            if byte == 10 { return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces) }
            bytes.append(byte)
        }
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
func unusedTCPPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            _ = bind(fd, pointer, length)
            return getsockname(fd, pointer, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
