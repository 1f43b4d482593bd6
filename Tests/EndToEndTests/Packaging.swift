import Foundation
import Glibc
import TestSupport

/// What the packaging tests share: the repository, `make` run in it, a scratch folder, and
/// files' modes and owners as the tests check them.
enum Packaging {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A new empty folder under the temporary directory; the caller removes it.
    static func scratch(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `make ARGUMENTS` in the repository, with `environment` added. The flags of a `make test`
    /// around the suite stay out: its jobserver's descriptors are not this make's.
    static func make(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Result {
        var env = ProcessInfo.processInfo.environment
        for key in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"] { env[key] = nil }
        env.merge(environment) { _, new in new }
        return try await ChildProcess.run(
            "/usr/bin/make", ["-s", "--no-print-directory", "-C", repository.path] + arguments, environment: env,
            timeout: 60)
    }

    /// A file's permission bits, nil when it does not exist (a symbolic link is not followed).
    static func mode(_ path: String) -> Int? {
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        return Int(s.st_mode & 0o7777)
    }

    /// A file's owner and group ids, nil when it does not exist.
    static func owner(_ path: String) -> (uid: UInt32, gid: UInt32)? {
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        return (s.st_uid, s.st_gid)
    }

    /// `key=` lines of a systemd unit (the first of each key).
    static func unitValue(_ key: String, in unit: String) -> String? {
        unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    /// Every regular file under `root`, as paths relative to it.
    static func files(under root: URL) -> Set<String> {
        guard let walk = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var found: Set<String> = []
        while let path = walk.nextObject() as? String {
            var s = stat()
            if lstat(root.path + "/" + path, &s) == 0, s.st_mode & S_IFMT == S_IFREG { found.insert(path) }
        }
        return found
    }

    static let systemdAnalyze = "/usr/bin/systemd-analyze"

    /// `systemd-analyze verify` of `units` after `replacing` their paths (verify wants the binary
    /// ExecStart names to exist: the staged one stands in for the installed one), their
    /// `Documentation=man:` page looked up in `manPath` (the staged pages). Output empty and
    /// status 0 when systemd has nothing to say.
    static func verify(units: [URL], replacing: [String: String], manPath: String) async throws -> ChildProcess.Result {
        let folder = try scratch("unit")
        defer { try? FileManager.default.removeItem(at: folder) }
        var copies: [String] = []
        for unit in units {
            var text = try String(contentsOf: unit, encoding: .utf8)
            for (from, to) in replacing { text = text.replacingOccurrences(of: from, with: to) }
            let copy = folder.appendingPathComponent(unit.lastPathComponent)
            try text.write(to: copy, atomically: true, encoding: .utf8)
            copies.append(copy.path)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["MANPATH"] = manPath
        return try await ChildProcess.run(
            systemdAnalyze, ["verify"] + copies, environment: environment, timeout: 60)
    }

    /// A placeholder of packaging's templates (install.sh fills them) left in `text`, nil when none is.
    static func placeholder(in text: String) -> String? {
        ["@BINDIR@", "@SYSCONFDIR@"].first { text.contains($0) }
    }
}
