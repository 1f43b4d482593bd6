import Foundation

/// The RFC 4475 / RFC 5118 corpus in `../shared/conformance`, beside the checkout.
enum ConformanceCorpus {
    struct Case: CustomStringConvertible, Sendable {
        let file: String
        let section: String
        let expected: String
        let path: String
        var description: String { file }
        var shouldParse: Bool { expected != "invalid" }
        var bytes: [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
    }

    static let root: String = {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/conformance").path
    }()

    /// Rows of a MANIFEST.tsv; `dir` holds the message files (rfc5118 uses its `wire/` copies).
    static func cases(_ corpus: String, dir: String? = nil) -> [Case] {
        let manifest = root + "/" + corpus + "/MANIFEST.tsv"
        guard let text = try? String(contentsOfFile: manifest, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 3 else { return nil }
            return Case(
                file: f[0], section: f[1], expected: f[2],
                path: root + "/" + corpus + "/" + (dir.map { $0 + "/" } ?? "") + f[0])
        }
    }

    static let rfc4475 = cases("rfc4475")
    static let rfc5118 = cases("rfc5118", dir: "wire")

    static func message(_ corpus: String, _ file: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: root + "/" + corpus + "/" + file) ?? Data())
    }
}
