import Foundation

/// One `BENCH NAME key=value ...` line: its aim (`target_X_min=`, `target_X_max=`, or
/// `target_X=` for a value to meet within 5 %) and `pass=true|false|n/a` judged against the
/// line's own figure X (or the one field ending in `_X`: `max_cps` for `target_cps_min`).
struct BenchLine: Sendable, Equatable {
    var name: String
    var fields: [(key: String, value: String)]

    static func == (a: BenchLine, b: BenchLine) -> Bool { a.text == b.text }

    /// Parses a line starting `BENCH `; nil for any other output. A value may be quoted
    /// (`reason="deadline 120 s"`); a word without `=` is kept as a key with no value.
    init?(_ text: String) {
        guard text.hasPrefix("BENCH ") else { return nil }
        var words: [String] = []
        var current = "", quoted = false
        for c in text.dropFirst(6) {
            if c == "\"" { quoted.toggle() }
            if c == " " && !quoted {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { words.append(current) }
        guard let first = words.first else { return nil }
        name = first
        fields = words.dropFirst().map { word in
            guard let eq = word.firstIndex(of: "=") else { return (word, "") }
            var value = String(word[word.index(after: eq)...])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            return (String(word[..<eq]), value)
        }
        // The older form `BENCH NAME skipped="why"`.
        if let i = fields.firstIndex(where: { $0.key == "skipped" && !$0.value.isEmpty }) {
            self = BenchLine(name: name, skippedBecause: fields[i].value)
        }
    }

    /// `BENCH NAME skipped reason="why"` (`crashed` instead of `skipped` with `crashed`).
    init(name: String, skippedBecause reason: String, crashed: Bool = false) {
        self.name = name
        fields = [(crashed ? "crashed" : "skipped", ""), ("reason", reason)]
    }

    /// A `skipped` or `crashed` line: no figures.
    var isSkipped: Bool { ["skipped", "crashed"].contains(fields.first?.key) && fields.first?.value == "" }

    func field(_ key: String) -> String? { fields.first { $0.key == key }?.value }

    var text: String {
        "BENCH \(name)"
            + fields.map { f in
                f.value.isEmpty && ["skipped", "crashed"].contains(f.key)
                    ? " \(f.key)" : " \(f.key)=\(f.key == "reason" ? Self.quoted(f.value) : f.value)"
            }.joined()
    }

    /// `"text"`, its own quotes made single.
    static func quoted(_ s: String) -> String { "\"" + s.replacingOccurrences(of: "\"", with: "'") + "\"" }

    /// Adds the aim `aims[name]` gives when the line has none of its own, then `pass=` when
    /// the line has none. Skipped lines stay as they are.
    mutating func complete(aims: [String: String]) {
        guard !isSkipped else { return }
        if !fields.contains(where: { $0.key.hasPrefix("target_") }), let aim = aims[name],
            let extra = BenchLine("BENCH \(name) \(aim)")
        {
            fields += extra.fields
        }
        if field("pass") == nil { fields.append(("pass", judged)) }
    }

    /// `true` when every aim of the line is met, `false` when one is not (or its figure is
    /// not a number: `-`, not measured), `n/a` when it has none whose figure it prints.
    var judged: String {
        var verdict = "n/a"
        for (key, value) in fields where key.hasPrefix("target_") {
            var subject = String(key.dropFirst(7))
            var bound = "="
            for suffix in ["_min", "_max"] where subject.hasSuffix(suffix) {
                subject.removeLast(4)
                bound = suffix
            }
            guard let aim = Double(value.trimmingCharacters(in: CharacterSet(charactersIn: "%"))) else { continue }
            let measured = figures(subject).map { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: "%"))) }
            guard !measured.isEmpty else { continue }
            for value in measured {
                guard let value else { return "false" }
                let met =
                    switch bound {
                    case "_min": value >= aim
                    case "_max": value <= aim
                    default: abs(value - aim) <= abs(aim) * 0.05
                    }
                if !met { return "false" }
            }
            verdict = "true"
        }
        return verdict
    }

    /// The figures an aim on `subject` is about: the field of that name, else every field
    /// whose name ends in `_subject` (`human_accuracy` and `machine_accuracy` for `accuracy`).
    private func figures(_ subject: String) -> [String] {
        if let v = field(subject) { return [v] }
        return fields.filter { $0.key.hasSuffix("_" + subject) && !$0.key.hasPrefix("target_") }.map(\.value)
    }
}
