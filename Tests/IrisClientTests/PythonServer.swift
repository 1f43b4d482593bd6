import Foundation
import Glibc
import TestSupport

/// A Python 3 (stdlib only) server run by a test: the script is written to a temporary
/// file, binds port 0 and prints the port on its first stdout line. `stop()` (call it in a
/// `defer`) ends the process (SIGTERM, then SIGKILL), reaps it and removes the file.
final class PythonServer: @unchecked Sendable {
    static let python =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "/usr/local/bin/python3"

    let port: Int
    private let process: ChildProcess
    private let script: URL

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `source` and waits (suspended) up to `timeout` seconds for its port.
    init(source: String, timeout: Double = 10) async throws {
        script = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iris-client-test-\(UUID().uuidString.prefix(8)).py")
        try source.write(to: script, atomically: true, encoding: .utf8)
        do {
            process = try ChildProcess(Self.python, ["-u", script.path])
        } catch {
            try? FileManager.default.removeItem(at: script)
            throw error
        }
        let child = process
        func firstLine() -> String? {
            let text = child.output
            guard let end = text.firstIndex(of: "\n") else { return nil }
            return String(text[..<end]).trimmingCharacters(in: .whitespaces)
        }
        _ = await eventually(timeout: timeout) { firstLine() != nil || !child.isRunning }
        guard let line = firstLine(), let port = Int(line) else {
            let said = child.output
            child.stop()
            try? FileManager.default.removeItem(at: script)
            throw StartError(description: "the Python server did not print its port within \(timeout) s: \(said)")
        }
        self.port = port
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// SIGTERM (SIGKILL 2 s later) without waiting; the script goes once it has exited.
    func stop() {
        let script = script
        process.stop(grace: 2) { try? FileManager.default.removeItem(at: script) }
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
