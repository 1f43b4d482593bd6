import Foundation

/// JSON5 files other than profiles (carrier test suites): the text is read with the
/// project's JSON5 reader (line and column on a syntax error) and handed on as plain JSON,
/// so `Codable` types can decode it. Key checking is the decoding type's job.
public enum JSON5Document {
    /// The JSON equivalent of JSON5 `text`; the caller names its file in the error.
    package static func jsonData(fromJSON5 text: String) throws(JSON5SyntaxError) -> Data {
        let tree = try JSON5Reader.parse(text)
        return Data(json(tree).utf8)
    }

    /// `value` as compact JSON text, object members in their order (non-finite numbers as null).
    package static func json(_ value: JSON5Value) -> String {
        var out = ""
        write(value, into: &out)
        return out
    }

    private static func write(_ value: JSON5Value, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d): out += d.isFinite ? String(d) : "null"
        case .string(let s): out += quoted(s)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, m) in members.enumerated() {
                if i > 0 { out += "," }
                out += quoted(m.key) + ":"
                write(m.value, into: &out)
            }
            out += "}"
        }
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
