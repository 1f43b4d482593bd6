import Foundation
import Glibc

/// Where the tools the tests check the files against (tshark, sngrep) are, and a folder for
/// what they write. They run as TestSupport's `ChildProcess` with no signal blocked (sngrep
/// saves its pcap only when SIGTERM ends it cleanly), awaited without holding a thread of
/// the cooperative pool; every process is stopped by its test and every wait has a deadline.
enum CaptureTools {
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
}
