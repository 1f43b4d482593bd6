import Foundation
import Testing

/// The conformance corpus: RFC 4475 / RFC 5118 torture messages and SIPp scenarios from
/// pjproject, Asterisk, drachtio, FreeSWITCH and SIPp. It is not part of the repository: it sits
/// beside the clone as `../shared/conformance` (as in CI), or wherever `IRISGW_CONFORMANCE` names.
/// Without it the suites that replay it are skipped, each saying what it needs.
public enum ConformanceCorpus {
    /// The corpus folder, or nil when there is none.
    public static let root: URL? = {
        // Tests/TestSupport/ConformanceCorpus.swift -> the package root -> its parent.
        let beside = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/conformance")
        let named = ProcessInfo.processInfo.environment["IRISGW_CONFORMANCE"].flatMap { $0.isEmpty ? nil : $0 }
        let candidate = named.map { URL(fileURLWithPath: $0) } ?? beside
        let present = FileManager.default.fileExists(atPath: candidate.appendingPathComponent("rfc4475").path)
        return present ? candidate : nil
    }()

    /// Whether the corpus is there.
    public static var isPresent: Bool { root != nil }

    /// The notice a skipped suite prints.
    public static let needs: Comment =
        "needs the conformance corpus at ../shared/conformance beside the clone (or IRISGW_CONFORMANCE=DIR)"

    /// The trait for a suite or test that replays the corpus.
    public static var required: ConditionTrait { .enabled(if: isPresent, needs) }

    /// A path inside the corpus (under a folder that does not exist when there is none).
    public static func path(_ relative: String) -> String {
        (root ?? URL(fileURLWithPath: "/nonexistent/shared/conformance")).appendingPathComponent(relative).path
    }

    /// One row of a torture corpus's MANIFEST.tsv.
    public struct Case: CustomStringConvertible, Sendable {
        public let corpus: String
        public let file: String
        public let section: String
        public let expected: String
        public let path: String
        public var description: String { file }
        public var shouldParse: Bool { expected != "invalid" }
        public var bytes: [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
    }

    /// Rows of `corpus`'s MANIFEST.tsv; `dir` holds the message files (rfc5118 uses `wire/`).
    public static func cases(_ corpus: String, dir: String? = nil) -> [Case] {
        guard let text = try? String(contentsOfFile: path(corpus + "/MANIFEST.tsv"), encoding: .utf8) else {
            return []
        }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 3 else { return nil }
            return Case(
                corpus: corpus, file: f[0], section: f[1], expected: f[2],
                path: path(corpus + "/" + (dir.map { $0 + "/" } ?? "") + f[0]))
        }
    }

    public static let rfc4475 = cases("rfc4475")
    public static let rfc5118 = cases("rfc5118", dir: "wire")

    /// A file of the corpus, as bytes (empty when missing).
    public static func message(_ corpus: String, _ file: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path(corpus + "/" + file)) ?? Data())
    }
}
