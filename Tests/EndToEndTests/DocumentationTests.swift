import Foundation
import Gateway
import TestSupport
import Testing

/// The docs keep one reference per contract, and these tests hold each to the code: every
/// flag the docs give a command is in that command's `--help`, the serve table of
/// docs/operations.md has every serve flag and every settings key (and nothing else), and
/// the metrics table of docs/api.md names every metric a running gateway exposes.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let commands = ["serve", "call", "answer", "test", "sip-lint", "sip-endpoint", "carrier-sim"]

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// README.md and every docs/*.md.
    static func documents() throws -> [(name: String, text: String)] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return try (["README.md"] + docs).map { ($0, try text($0)) }
    }

    /// The `--flag` words of `text`.
    static func flags(_ text: some StringProtocol) -> Set<String> {
        var found = Set<String>()
        var rest = Substring(text)
        while let r = rest.range(of: "--") {
            let name = rest[r.upperBound...].prefix { $0.isLowercase || $0.isNumber || $0 == "-" }
            if let first = name.first, first.isLowercase { found.insert("--" + name) }
            rest = rest[r.upperBound...]
        }
        return found
    }

    static func help(_ command: String) async throws -> String {
        let r = try await ChildProcess.run(GatewayProcess.binary, [command, "--help"], discardingErrors: false)
        return r.output
    }

    /// The rows of the markdown table that follows the line containing `heading` in `text`.
    static func tableRows(_ text: String, after heading: String) -> [[String]] {
        guard let start = text.range(of: heading) else { return [] }
        var rows: [[String]] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            // `\|` is a bar inside a cell.
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(
                separator: "|", omittingEmptySubsequences: false
            ).dropFirst().dropLast()
                .map { $0.replacingOccurrences(of: "\u{1}", with: "|").trimmingCharacters(in: .whitespaces) }
            // The separator row: the row before it was the header.
            if cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) {
                if !rows.isEmpty { rows.removeLast() }
                continue
            }
            rows.append(cells)
        }
        return rows
    }

    /// The words in backquotes in `cell`.
    static func quoted(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    @Test func everyFlagTheDocsGiveACommandIsInItsHelp() async throws {
        var helps: [String: Set<String>] = [:]
        for c in Self.commands { helps[c] = Self.flags(try await Self.help(c)) }
        var unknown: [String] = []
        for (name, text) in try Self.documents() {
            for line in text.split(separator: "\n") {
                for c in Self.commands {
                    guard let r = line.range(of: "irisgw \(c) ") ?? line.range(of: "irisgw \(c)`") else { continue }
                    // Up to the end of the command: a backquote, or the line's end in a block.
                    let invocation = line[r.upperBound...].prefix { $0 != "`" }
                    for flag in Self.flags(invocation).subtracting(helps[c] ?? []) where flag != "--help" {
                        unknown.append("\(name): irisgw \(c) \(flag)")
                    }
                }
            }
        }
        #expect(
            unknown.isEmpty, "flags the docs give that --help does not have:\n\(unknown.joined(separator: "\n"))")
    }

    /// docs/operations.md's serve table: its first column is every serve flag, its second
    /// every settings key.
    static func serveTable() throws -> [[String]] {
        tableRows(try Self.text("docs/operations.md"), after: "| flag | config key | default |")
    }

    @Test func theServeTableHasEveryServeFlag() async throws {
        let table = Set(try Self.serveTable().flatMap { Self.flags($0.first ?? "") })
        let help = Self.flags(try await Self.help("serve")).subtracting(["--help"])
        #expect(
            help.subtracting(table).isEmpty,
            "serve flags missing from the table: \(help.subtracting(table).sorted())")
        #expect(
            table.subtracting(help).isEmpty, "table flags serve does not have: \(table.subtracting(help).sorted())")
    }

    @Test func theServeTableHasEverySettingsKey() throws {
        let rows = try Self.serveTable()
        let documented = Set(
            rows.flatMap { row in
                row.count > 1 ? Self.quoted(row[1]).map { String($0.prefix { $0 != "." && $0 != " " }) } : []
            }.filter { $0.first?.isLetter == true && $0.allSatisfy { $0.isLetter || $0.isNumber } })
        let keys = Set(ServeConfiguration.keys)
        #expect(
            keys.subtracting(documented).isEmpty,
            "keys missing from the table: \(keys.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(keys).isEmpty,
            "table keys serve refuses: \(documented.subtracting(keys).sorted())")
    }

    /// The string literals of every key list the profile loader checks objects against
    /// (`keys: [...]`, `...Keys = [...]`, `static let keys = [...]`).
    static func profileKeysInTheCode() throws -> Set<String> {
        let files =
            ["Sources/IrisAPI/OpusOptions.swift"]
            + (try FileManager.default.contentsOfDirectory(
                atPath: root.appendingPathComponent("Sources/Gateway/Profiles").path
            ).filter { $0.hasSuffix(".swift") }.map { "Sources/Gateway/Profiles/" + $0 })
        var keys = Set<String>()
        for file in files {
            var rest = Substring(try text(file))
            while let open = ["keys: [", "Keys = [", "keys = ["].compactMap({ rest.range(of: $0) })
                .min(by: { $0.lowerBound < $1.lowerBound })
            {
                let list = rest[open.upperBound...].prefix { $0 != "]" }
                keys.formUnion(
                    list.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter {
                        $0.offset % 2 == 1
                    }.map { String($0.element) })
                rest = rest[open.upperBound...]
            }
        }
        return keys
    }

    @Test func theProfileTablesHaveEveryProfileKey() throws {
        let doc = try Self.text("docs/sip-profiles.md")
        var documented = Set<String>()
        var rest = Substring(doc)
        while let r = rest.range(of: "| key | type | default | meaning |") {
            for row in Self.tableRows(String(rest[r.lowerBound...]), after: "| key | type | default | meaning |") {
                guard let path = Self.quoted(row.first ?? "").first else { continue }
                documented.formUnion(
                    path.split(whereSeparator: { ".[]".contains($0) }).map(String.init).filter { !$0.isEmpty })
            }
            rest = rest[r.upperBound...]
        }
        let code = try Self.profileKeysInTheCode()
        #expect(
            code.subtracting(documented).isEmpty,
            "profile keys missing from docs/sip-profiles.md: \(code.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(code).isEmpty,
            "documented profile keys the loader refuses: \(documented.subtracting(code).sorted())")
    }

    /// Every metric name in the metrics tables (docs/api.md, "Metrics"; the cluster's in
    /// docs/operations.md).
    static func documentedMetrics() throws -> Set<String> {
        let rows =
            tableRows(try text("docs/api.md"), after: "### Metrics")
            + tableRows(try text("docs/operations.md"), after: "| metric | type |")
        return Set(rows.flatMap { Self.quoted($0.first ?? "") })
    }
}

extension GatewaySuites {
    /// The metrics half of `DocumentationTests`: it starts a gateway, so it takes a gateway slot.
    @Suite struct DocumentationMetricsTests {
        @Test func theMetricsTableNamesEveryMetricAGatewayExposes() async throws {
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile()])
            defer { gw.stop() }
            let r = try await GatewayAPIErrorTests.request(gw, "GET", "/metrics")
            #expect(r.status == 200)
            let exposed = Set(
                r.text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
                    .map { String($0.prefix { $0 != "{" && $0 != " " }) })
            let documented = try DocumentationTests.documentedMetrics()
            #expect(
                exposed.subtracting(documented).isEmpty,
                "metrics missing from the table: \(exposed.subtracting(documented).sorted())")
            // The other way: a documented metric is named in the code (cluster metrics need a cluster).
            // Every Swift file of Sources, read once, by its path under Sources.
            let files = try FileManager.default.subpathsOfDirectory(
                atPath: DocumentationTests.root.appendingPathComponent("Sources").path
            )
            .filter { $0.hasSuffix(".swift") }
            .map { path in
                (
                    path,
                    try String(
                        contentsOf: DocumentationTests.root.appendingPathComponent("Sources/" + path), encoding: .utf8)
                )
            }
            let sources = files.map(\.1).joined()
            let stale = documented.filter { !sources.contains("\"\($0)") && !exposed.contains($0) }
            #expect(stale.isEmpty, "documented metrics no code exposes: \(stale.sorted())")
            // And a metric only some gateways expose (TLS, a cluster) is in the table too: every
            // name the metric writers hold.
            let writers = files.filter { path, _ in
                // The metric writers: the gateway's and the control API's (not in subfolders).
                ["Gateway/Metrics/", "ControlAPI/"].contains { dir in
                    path.hasPrefix(dir) && !path.dropFirst(dir.count).contains("/")
                }
            }.map(\.1).joined()
            let named = Set(
                writers.split(separator: "\"").filter {
                    $0.hasPrefix("irisgw_") && $0.count > 7 && $0.allSatisfy { $0.isLowercase || $0 == "_" }
                }.map(String.init))
            #expect(
                named.subtracting(documented).isEmpty,
                "metrics the code writes that the table misses: \(named.subtracting(documented).sorted())")
        }
    }
}
