/// Turns a `LogRecord` into the bytes of one line, newline included. A line is always one
/// line: whatever a message or a field holds (a reason phrase off the wire), its control
/// characters are escaped, so nobody can forge a line of their own.
public enum LogLineFormatter {
    public static func line(_ record: LogRecord, format: LogFormat) -> [UInt8] {
        switch format {
        case .text: text(record)
        case .json: json(record)
        }
    }

    /// `textPrefix` and the message, as the gateway has always written them; control
    /// characters as `\n`, `\r`, `\t` or `\u{HEX}`. The fields are not written: the message
    /// says it in words.
    public static func text(_ record: LogRecord) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(record.textPrefix.utf8.count + record.message.utf8.count + 1)
        appendText(record.textPrefix, to: &out)
        appendText(trimmingNewlines(record.message), to: &out)
        out.append(0x0A)
        return out
    }

    /// `{"time":...,"level":...,"component":...,"msg":...}` and the fields after, in their
    /// order. A field named like one of the four fixed keys is written as `field_<key>`.
    public static func json(_ record: LogRecord) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96 + record.message.utf8.count + record.fields.count * 32)
        out.append(contentsOf: #"{"time":""#.utf8)
        out.append(contentsOf: record.time.rfc3339.utf8)
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: record.level.rawValue.utf8)
        out.append(contentsOf: #"","component":""#.utf8)
        out.append(contentsOf: record.component.rawValue.utf8)
        out.append(contentsOf: #"","msg":"#.utf8)
        appendJSONString(trimmingNewlines(record.message), to: &out)
        for field in record.fields {
            out.append(0x2C)
            appendJSONString(fixedKeys.contains(field.key) ? "field_" + field.key : field.key, to: &out)
            out.append(0x3A)
            appendJSONValue(field.value, to: &out)
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    static let fixedKeys: Set<String> = ["time", "level", "component", "msg"]

    /// A message handed over with its old trailing newline loses it (one line is one entry).
    static func trimmingNewlines(_ s: String) -> Substring {
        var end = s.endIndex
        while end > s.startIndex, s[s.index(before: end)] == "\n" || s[s.index(before: end)] == "\r\n" {
            end = s.index(before: end)
        }
        return s[..<end]
    }

    static func appendJSONValue(_ value: LogValue, to out: inout [UInt8]) {
        switch value {
        case .string(let s): appendJSONString(s[...], to: &out)
        case .int(let n): out.append(contentsOf: String(n).utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .double(let d): out.append(contentsOf: (d.isFinite ? jsonNumber(d) : "null").utf8)
        }
    }

    /// Swift's shortest round-trip form is a JSON number once a lone trailing `.0` goes
    /// (`1e-05` and `1.5e+20` are valid JSON).
    static func jsonNumber(_ d: Double) -> String {
        let s = d.description
        return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
    }

    /// A JSON string (RFC 8259 §7): `"` and `\` escaped, the C0 controls as `\n`, `\r`,
    /// `\t`, `\b`, `\f` or `\u00XX`; DEL, the C1 controls and U+2028/U+2029 (line breaks to
    /// some readers) as `\uXXXX`; everything else as its UTF-8.
    static func appendJSONString<S: StringProtocol>(_ s: S, to out: inout [UInt8]) {
        out.append(0x22)
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0x08: out.append(contentsOf: [0x5C, 0x62])
            case 0x0C: out.append(contentsOf: [0x5C, 0x66])
            case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029: appendUnicodeEscape(scalar.value, to: &out)
            case 0x20..<0x7F: out.append(UInt8(scalar.value))
            default: UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(0x22)
    }

    /// The text format's escaping: only what would break the line or the terminal.
    static func appendText<S: StringProtocol>(_ s: S, to out: inout [UInt8]) {
        // Nearly every line is plain: copied as it is.
        if !s.unicodeScalars.contains(where: isControl) {
            out.append(contentsOf: s.utf8)
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case _ where isControl(scalar): out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".utf8)
            default: UTF8.encode(scalar) { out.append($0) }
            }
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    static func appendUnicodeEscape(_ value: UInt32, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(contentsOf: [0x5C, 0x75])
        for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int((value >> UInt32(shift)) & 0xF)]) }
    }
}
