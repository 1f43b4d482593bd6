import Foundation

/// The reports of a monitored suite's last N runs in one folder:
/// `<yyyyMMddTHHmmssZ>-<suite>.html`, `.json` and `.xml`; older runs' files are deleted.
/// Only files named so (for this suite) are ever touched.
public struct ReportArchive: Sendable {
    public let directory: String
    public let suite: String
    public let keep: Int

    public init(directory: String, suite: String, keep: Int) {
        self.directory = directory
        self.suite = suite
        self.keep = keep
    }

    /// The suite's name as it goes into file names: letters, digits, `.`, `_`, `-`.
    public var fileSuite: String {
        String(suite.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }

    static let extensions = ["html", "json", "xml"]

    /// `20250102T030405Z` for `date` (UTC).
    public static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return f.string(from: date)
    }

    /// The stamp of `name` when it is one of this archive's files.
    func stamp(of name: String) -> String? {
        let chars = Array(name)
        guard chars.count > 16 else { return nil }
        let digits = { (r: Range<Int>) in chars[r].allSatisfy { $0.isASCII && $0.isNumber } }
        guard chars[8] == "T", chars[15] == "Z", digits(0..<8), digits(9..<15) else { return nil }
        let stamp = String(chars[0..<16])
        guard Self.extensions.contains(where: { name == stamp + "-" + fileSuite + "." + $0 }) else { return nil }
        return stamp
    }

    /// Whether `name` is a file of this archive (what `GET /reports/NAME` may serve).
    public func isReport(_ name: String) -> Bool { stamp(of: name) != nil }

    /// Writes one run's three reports and deletes all but the newest `keep` runs' files.
    /// Returns the names written.
    @discardableResult
    public func save(startedAt: Date, html: String, json: String, junit: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = Self.stamp(startedAt) + "-" + fileSuite
        var names: [String] = []
        for (ext, text) in [("html", html), ("json", json), ("xml", junit)] {
            let name = base + "." + ext
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
            names.append(name)
        }
        prune()
        return names
    }

    /// The runs kept, newest first: each stamp with its file names.
    public func runs() -> [(stamp: String, files: [String])] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var byStamp: [String: [String]] = [:]
        for n in names { if let s = stamp(of: n) { byStamp[s, default: []].append(n) } }
        return byStamp.keys.sorted(by: >).map { ($0, byStamp[$0]!.sorted()) }
    }

    func prune() {
        for run in runs().dropFirst(keep) {
            for f in run.files { try? FileManager.default.removeItem(atPath: directory + "/" + f) }
        }
    }
}
