// The control API's OpenAPI document is YAML (docs/openapi.yaml) and served as JSON; the
// toolchain has no YAML reader, so this reads the subset the document is written in.
//
// Anything outside the subset is an error with its line, never a guess: a document that
// reads here reads the same in a full YAML 1.1 reader (PyYAML), which the tests check.

/// A YAML syntax error, or YAML outside the subset `YAMLSubsetReader` reads.
package struct YAMLSubsetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the offending text.
    package var line: Int
    package var message: String

    package init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    /// `YAML error at line 3: <message>`.
    package var description: String { "YAML error at line \(line): \(message)" }
}

/// Reads a block-style YAML document into a `JSON5Value` tree (mappings keep their order).
///
/// The subset: block mappings and block sequences indented with spaces; keys plain or quoted;
/// values plain, single- or double-quoted on one line, literal (`|`, `|-`) or folded
/// (`>`, `>-`) block scalars, flow sequences and mappings on one line (`[a, "b"]`,
/// `{$ref: '#/x'}`). Comments on their own line or after a value. Not read: anchors and
/// aliases, tags, directives, several documents, multi-line plain, quoted or flow values,
/// complex keys, duplicate keys. A plain scalar is `true`, `false`, `null`, `~`, an
/// integer, a decimal or a string; one that YAML 1.1 would read as something else (`yes`,
/// `on`, `+1`, `1e3`, `0755`, `2024-01-01`, `.inf` ...) must be quoted.
package struct YAMLSubsetReader {
    private var lines: [[Unicode.Scalar]]
    private var index = 0

    package static let maxBytes = 1 << 20
    private static let maxDepth = 64

    /// Parses a whole document.
    package static func parse(_ text: String) throws(YAMLSubsetError) -> JSON5Value {
        guard text.utf8.count <= maxBytes else {
            throw YAMLSubsetError(line: 1, message: "the document is more than \(maxBytes) bytes")
        }
        var reader = YAMLSubsetReader(
            lines: text.split(separator: "\n", omittingEmptySubsequences: false).map {
                Array(($0.hasSuffix("\r") ? $0.dropLast() : $0).unicodeScalars)
            })
        reader.skipBlank()
        guard reader.index < reader.lines.count else { throw YAMLSubsetError(line: 1, message: "empty document") }
        let value = try reader.node(indent: try reader.indentation(), depth: 0)
        reader.skipBlank()
        if reader.index < reader.lines.count {
            throw reader.error("unexpected text after the document (less indented than its start?)")
        }
        return value
    }

    private init(lines: [[Unicode.Scalar]]) { self.lines = lines }

    // MARK: Lines

    private func error(_ message: String) -> YAMLSubsetError {
        YAMLSubsetError(line: index + 1, message: message)
    }

    private static func isBlank(_ line: [Unicode.Scalar]) -> Bool {
        guard let first = line.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return true }
        return line[first] == "#"
    }

    /// Moves past empty lines and lines holding only a comment.
    private mutating func skipBlank() {
        while index < lines.count, Self.isBlank(lines[index]) { index += 1 }
    }

    /// The current line's indentation in spaces (a tab there is an error).
    private func indentation() throws(YAMLSubsetError) -> Int {
        let line = lines[index]
        let n = line.prefix { $0 == " " }.count
        if n < line.count, line[n] == "\t" { throw error("a tab in the indentation: indent with spaces") }
        return n
    }

    /// Whether the text at `column` of the current line starts a sequence entry (`-` then a
    /// space or the end of the line).
    private func isDash(at column: Int) -> Bool {
        let line = lines[index]
        return column < line.count && line[column] == "-" && (column + 1 == line.count || line[column + 1] == " ")
    }

    // MARK: Nodes

    /// The block node whose first line is the current one, indented `indent`.
    private mutating func node(indent: Int, depth: Int) throws(YAMLSubsetError) -> JSON5Value {
        guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        if isDash(at: indent) { return try sequence(indent: indent, depth: depth) }
        let text = Array(lines[index][indent...])
        if try Self.keyEnd(text, line: index + 1) != nil { return try mapping(indent: indent, depth: depth) }
        // A scalar alone on its line (a sequence entry's `- value`).
        let value = try Self.inlineValue(text, line: index + 1)
        index += 1
        return value
    }

    private mutating func mapping(indent: Int, depth: Int) throws(YAMLSubsetError) -> JSON5Value {
        var members: [JSON5Member] = []
        var seen = Set<String>()
        while true {
            skipBlank()
            guard index < lines.count else { break }
            let n = try indentation()
            if n < indent { break }
            if n > indent { throw error("unexpected indentation") }
            let text = Array(lines[index][indent...])
            guard let (key, rest) = try Self.keyEnd(text, line: index + 1) else {
                if isDash(at: indent) { throw error("a sequence entry where a key was expected") }
                throw error("expected `key: value`")
            }
            guard seen.insert(key).inserted else { throw error("duplicate key \"\(key)\"") }
            let value: JSON5Value
            let after = Self.trimmed(rest)
            if after.isEmpty {
                index += 1
                value = try nested(parentIndent: indent, depth: depth)
            } else if after[0] == "|" || after[0] == ">" {
                value = .string(try blockScalar(header: after, parentIndent: indent))
            } else {
                value = try Self.inlineValue(after, line: index + 1)
                index += 1
            }
            members.append(JSON5Member(key: key, value: value))
        }
        return .object(members)
    }

    /// The value of a key written on the lines after it: a block more indented, a sequence
    /// at the key's own indentation, or nothing (null).
    private mutating func nested(parentIndent: Int, depth: Int) throws(YAMLSubsetError) -> JSON5Value {
        skipBlank()
        guard index < lines.count else { return .null }
        let n = try indentation()
        if n > parentIndent { return try node(indent: n, depth: depth + 1) }
        if n == parentIndent, isDash(at: n) { return try sequence(indent: n, depth: depth + 1) }
        return .null
    }

    private mutating func sequence(indent: Int, depth: Int) throws(YAMLSubsetError) -> JSON5Value {
        var items: [JSON5Value] = []
        while true {
            skipBlank()
            guard index < lines.count else { break }
            let n = try indentation()
            if n < indent { break }
            if n > indent { throw error("unexpected indentation") }
            guard isDash(at: indent) else { break }
            let line = lines[index]
            var column = indent + 1
            while column < line.count, line[column] == " " { column += 1 }
            if column >= line.count || line[column] == "#" {
                index += 1
                items.append(try nested(parentIndent: indent, depth: depth))
                continue
            }
            // `- key: value` or `- - x`: the entry is a node that starts at `column`; the dash
            // becomes indentation, so the lines after it line up with its first key.
            lines[index].replaceSubrange(indent..<column, with: repeatElement(" ", count: column - indent))
            if line[column] == "|" || line[column] == ">" {
                items.append(.string(try blockScalar(header: Array(line[column...]), parentIndent: indent)))
            } else {
                items.append(try node(indent: column, depth: depth + 1))
            }
        }
        return .array(items)
    }

    /// A literal (`|`) or folded (`>`) scalar: the lines after the current one that are
    /// blank or indented deeper than `parentIndent`.
    private mutating func blockScalar(header: [Unicode.Scalar], parentIndent: Int) throws(YAMLSubsetError) -> String {
        let text = String(String.UnicodeScalarView(Self.trimmed(header)))
        let literal = text.hasPrefix("|")
        guard ["|", "|-", ">", ">-"].contains(text) else {
            throw error("block scalar header \"\(text)\": only |, |-, > and >- are read")
        }
        let strip = text.hasSuffix("-")
        index += 1
        var content: [String] = []
        var contentIndent: Int?
        while index < lines.count {
            let line = lines[index]
            let n = line.prefix { $0 == " " }.count
            if n == line.count {  // blank (spaces only)
                content.append("")
                index += 1
                continue
            }
            if n <= parentIndent { break }
            if line[n] == "\t" && contentIndent == nil { throw error("a tab in the indentation: indent with spaces") }
            let first = contentIndent ?? n
            contentIndent = first
            guard n >= first else { throw error("a block scalar line less indented than its first line") }
            if !literal && n > first {
                throw error("a more indented line in a folded scalar: use a literal one (|)")
            }
            content.append(String(String.UnicodeScalarView(line[first...])))
            index += 1
        }
        // Blank lines after the last line of text belong to no scalar.
        while content.last == "" { content.removeLast() }
        guard !content.isEmpty else { return "" }
        var out = ""
        if literal {
            out = content.joined(separator: "\n")
        } else {
            // Folding: a line break between two lines of text is a space; each blank line is a break.
            var blanks = 0
            for (i, line) in content.enumerated() {
                if line.isEmpty {
                    blanks += 1
                    continue
                }
                if i > 0 { out += blanks == 0 ? " " : String(repeating: "\n", count: blanks) }
                blanks = 0
                out += line
            }
        }
        return strip ? out : out + "\n"
    }

    // MARK: Scalars

    private static func trimmed(_ text: some Collection<Unicode.Scalar>) -> [Unicode.Scalar] {
        var a = Array(text)
        while let f = a.first, f == " " { a.removeFirst() }
        while let l = a.last, l == " " { a.removeLast() }
        return a
    }

    /// The key of a `key: value` line and what follows its colon; nil when the line is not
    /// a mapping entry.
    private static func keyEnd(
        _ text: [Unicode.Scalar], line: Int
    ) throws(YAMLSubsetError) -> (String, ArraySlice<Unicode.Scalar>)? {
        guard let first = text.first else { return nil }
        if first == "\"" || first == "'" {
            let (key, end) = try quoted(text, line: line)
            var i = end
            while i < text.count, text[i] == " " { i += 1 }
            guard i < text.count, text[i] == ":", i + 1 == text.count || text[i + 1] == " " else { return nil }
            return (key, text[(i + 1)...])
        }
        if first == "?" && (text.count == 1 || text[1] == " ") {
            throw YAMLSubsetError(line: line, message: "complex keys (`? `) are not read")
        }
        if first == "[" || first == "{" { return nil }
        var i = 0
        while i < text.count {
            if text[i] == " " && i + 1 < text.count && text[i + 1] == "#" { return nil }
            if text[i] == ":" && (i + 1 == text.count || text[i + 1] == " ") {
                let raw = String(String.UnicodeScalarView(trimmed(text[..<i])))
                guard case .string(let key) = try plain(raw, line: line) else {
                    throw YAMLSubsetError(
                        line: line, message: "key \(raw) would not be a string in YAML 1.1: quote it")
                }
                return (key, text[(i + 1)...])
            }
            i += 1
        }
        return nil
    }

    /// A value on one line: quoted, a flow sequence, `{}`, or plain; a comment may follow.
    private static func inlineValue(_ text: [Unicode.Scalar], line: Int) throws(YAMLSubsetError) -> JSON5Value {
        guard let first = text.first else { return .null }
        switch first {
        case "\"", "'":
            let (s, end) = try quoted(text, line: line)
            try expectEnd(text[end...], line: line)
            return .string(s)
        case "[", "{":
            var i = 0
            let value = try flow(text, &i, line: line, depth: 0)
            try expectEnd(text[i...], line: line)
            return value
        default:
            var end = text.count
            for i in 0..<text.count {
                if text[i] == "#" && i > 0 && text[i - 1] == " " {
                    end = i
                    break
                }
                if text[i] == ":" && (i + 1 == text.count || text[i + 1] == " ") {
                    throw YAMLSubsetError(line: line, message: "`: ` inside a plain value: quote the value")
                }
            }
            return try plain(String(String.UnicodeScalarView(trimmed(text[..<end]))), line: line)
        }
    }

    /// Only spaces or a comment may follow a quoted scalar or a flow collection.
    private static func expectEnd(_ rest: ArraySlice<Unicode.Scalar>, line: Int) throws(YAMLSubsetError) {
        let r = trimmed(rest)
        guard r.isEmpty || (r[0] == "#" && rest.first == " ") else {
            throw YAMLSubsetError(line: line, message: "unexpected text after the value")
        }
    }

    /// A flow collection (`[a, "b"]`, `{key: value}`, nested) or a scalar inside one, starting
    /// at `text[i]`; `i` moves past it. Flow collections end on their line.
    private static func flow(
        _ text: [Unicode.Scalar], _ i: inout Int, line: Int, depth: Int
    ) throws(YAMLSubsetError) -> JSON5Value {
        guard depth < maxDepth else { throw YAMLSubsetError(line: line, message: "nesting too deep") }
        func skipSpaces() { while i < text.count, text[i] == " " { i += 1 } }
        func unterminated() -> YAMLSubsetError {
            YAMLSubsetError(line: line, message: "a flow collection must end on its line")
        }
        skipSpaces()
        guard i < text.count else { throw unterminated() }
        switch text[i] {
        case "[", "{":
            let mapping = text[i] == "{"
            let close: Unicode.Scalar = mapping ? "}" : "]"
            var items: [JSON5Value] = []
            var members: [JSON5Member] = []
            var seen = Set<String>()
            i += 1
            skipSpaces()
            if i < text.count, text[i] == close {
                i += 1
                return mapping ? .object([]) : .array([])
            }
            while true {
                if mapping {
                    guard case .string(let key) = try flow(text, &i, line: line, depth: depth + 1) else {
                        throw YAMLSubsetError(line: line, message: "a flow mapping's key must be a string")
                    }
                    skipSpaces()
                    guard i < text.count, text[i] == ":" else {
                        throw YAMLSubsetError(line: line, message: "expected `: ` after a flow mapping's key")
                    }
                    i += 1
                    guard seen.insert(key).inserted else {
                        throw YAMLSubsetError(line: line, message: "duplicate key \"\(key)\"")
                    }
                    members.append(JSON5Member(key: key, value: try flow(text, &i, line: line, depth: depth + 1)))
                } else {
                    items.append(try flow(text, &i, line: line, depth: depth + 1))
                }
                skipSpaces()
                guard i < text.count else { throw unterminated() }
                if text[i] == close {
                    i += 1
                    return mapping ? .object(members) : .array(items)
                }
                guard text[i] == "," else {
                    throw YAMLSubsetError(line: line, message: "expected , or \(close) in a flow collection")
                }
                i += 1
            }
        case "\"", "'":
            let (s, length) = try quoted(Array(text[i...]), line: line)
            i += length
            return .string(s)
        default:
            // A plain scalar ends at a flow indicator or at `: `.
            let start = i
            while i < text.count, !",[]{}#".unicodeScalars.contains(text[i]) {
                if text[i] == ":" && (i + 1 == text.count || text[i + 1] == " ") { break }
                i += 1
            }
            if i < text.count, text[i] == "#" {
                throw YAMLSubsetError(line: line, message: "# inside a flow collection: quote the value")
            }
            return try plain(String(String.UnicodeScalarView(trimmed(text[start..<i]))), line: line)
        }
    }

    /// A single- or double-quoted scalar at the start of `text`, and the index after it.
    private static func quoted(_ text: [Unicode.Scalar], line: Int) throws(YAMLSubsetError) -> (String, Int) {
        let q = text[0]
        var out = String.UnicodeScalarView()
        var i = 1
        while i < text.count {
            let c = text[i]
            if q == "'" {
                if c == "'" {
                    if i + 1 < text.count, text[i + 1] == "'" {
                        out.append("'")
                        i += 2
                        continue
                    }
                    return (String(out), i + 1)
                }
                out.append(c)
                i += 1
                continue
            }
            if c == "\"" { return (String(out), i + 1) }
            if c != "\\" {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < text.count else { break }
            let e = text[i + 1]
            i += 2
            switch e {
            case "\\": out.append("\\")
            case "\"": out.append("\"")
            case "/": out.append("/")
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "u":
                guard i + 4 <= text.count,
                    let v = UInt32(String(String.UnicodeScalarView(text[i..<(i + 4)])), radix: 16),
                    let scalar = Unicode.Scalar(v)
                else { throw YAMLSubsetError(line: line, message: "bad \\u escape") }
                out.append(scalar)
                i += 4
            default:
                throw YAMLSubsetError(
                    line: line, message: "escape \\\(e) is not read (\\\\ \\\" \\/ \\n \\t \\r \\uXXXX are)")
            }
        }
        throw YAMLSubsetError(line: line, message: "a quoted value must end on its line")
    }

    /// A plain scalar's value, refused where YAML 1.1 would read it as another type than
    /// this reader does.
    private static func plain(_ s: String, line: Int) throws(YAMLSubsetError) -> JSON5Value {
        switch s {
        case "", "~", "null": return .null
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: break
        }
        let u = Array(s.unicodeScalars)
        let digits = { (a: ArraySlice<Unicode.Scalar>) in !a.isEmpty && a.allSatisfy { ("0"..."9").contains($0) } }
        let body = u.first == "-" ? u.dropFirst() : u[...]
        if digits(body), body.first != "0" || body.count == 1, let n = Int(s) { return .integer(n) }
        if let dot = body.firstIndex(of: "."), digits(body[..<dot]), digits(body[(dot + 1)...]),
            body.first != "0" || dot == body.startIndex + 1, let d = Double(s)
        {
            return .number(d)
        }
        let ambiguous: Set = [
            "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "True", "TRUE", "False",
            "FALSE", "Null", "NULL", "<<", "="
        ]
        // YAML 1.1 numbers hold no space; its timestamps may (`2001-12-14 21:59:43.10 -5`).
        let date = u.count >= 5 && u[0..<4].allSatisfy { ("0"..."9").contains($0) } && u[4] == "-"
        let startsNumeric =
            (!u.contains(" ") || date) && ("0"..."9").contains(u[0])
            || (!u.contains(" ") && u.count > 1 && "+-.".unicodeScalars.contains(u[0])
                && (("0"..."9").contains(u[1]) || u[1] == "."))
            || s.lowercased().hasPrefix(".inf") || s.lowercased().hasPrefix(".nan")
            || s.lowercased().hasPrefix("-.inf") || s.lowercased().hasPrefix("+.inf")
        if ambiguous.contains(s) || startsNumeric {
            throw YAMLSubsetError(line: line, message: "plain value \(s) is read differently by YAML 1.1: quote it")
        }
        if "[]{}#&*!|>'\"%@`,".unicodeScalars.contains(u[0])
            || ("-?:".unicodeScalars.contains(u[0]) && (u.count == 1 || u[1] == " "))
        {
            throw YAMLSubsetError(line: line, message: "plain value \(s) starts with an indicator: quote it")
        }
        return .string(s)
    }
}
