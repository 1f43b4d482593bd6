// A small JSON5 reader for trunk profiles, the serve configuration and carrier test suites.
//
// Foundation on Linux (Swift 6.3.1) has no `JSONSerialization` `.json5Allowed`, and
// `JSONDecoder.allowsJSON5` drops key order, silently keeps one of two duplicate keys and
// reports syntax errors without a position. Profiles need all three, so they are read here
// into a `JSON5Value` tree first and checked against the schema afterwards.

/// One value of a JSON5 document, objects keeping their keys in document order.
package enum JSON5Value: Equatable, Sendable {
    case null
    case bool(Bool)
    /// An integer literal (decimal or hexadecimal) that fits in `Int`.
    case integer(Int)
    /// Any other number, including `Infinity` and `NaN`.
    case number(Double)
    case string(String)
    case array([JSON5Value])
    case object([JSON5Member])

    /// How the value is named in a type error: "a string", "number 1.5", "an array".
    package var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return "boolean \(b)"
        case .integer(let i): return "number \(i)"
        case .number(let d): return "number \(d)"
        case .string(let s): return "string \"\(s)\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A key and its value inside a JSON5 object.
package struct JSON5Member: Equatable, Sendable {
    package var key: String
    package var value: JSON5Value

    package init(key: String, value: JSON5Value) {
        self.key = key
        self.value = value
    }
}

/// A JSON5 syntax error: where, inside which key path, and what was expected.
package struct JSON5SyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the offending character.
    package var line: Int
    /// 1-based column, counted in Unicode scalars.
    package var column: Int
    /// The key path of the value being read when the error was found ("" at the top).
    package var keyPath: String
    package var message: String

    package init(line: Int, column: Int, keyPath: String, message: String) {
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    /// `JSON5 syntax error at line 3, column 7: <message>`, as profile and suite errors say it.
    package var description: String { "JSON5 syntax error at line \(line), column \(column): \(message)" }
}

/// Reads a JSON5 document (https://spec.json5.org) into a `JSON5Value`.
///
/// ```
/// JSON5Value  = JSON5Null / JSON5Boolean / JSON5String / JSON5Number / JSON5Object / JSON5Array
/// JSON5Object = "{" [ JSON5Member *( "," JSON5Member ) [ "," ] ] "}"
/// JSON5Member = ( IdentifierName / JSON5String ) ":" JSON5Value
/// JSON5String = DQ *char DQ / SQ *char SQ        ; \x, \u, \0, line continuation
/// JSON5Number = [ "+" / "-" ] ( "Infinity" / "NaN" / HexIntegerLiteral / DecimalLiteral )
/// ```
/// Comments (`//`, `/* */`) count as white space. Deviations, on the strict side: a key
/// repeated in one object is an error (JSON5 lets the last one win, which hides typos in a
/// config file), unquoted keys cannot contain `\u` escapes, nesting is limited to 64 levels and a
/// document to 1 MiB (profiles and suites are a few KiB; the limits keep a hostile file from
/// exhausting the stack or memory).
package struct JSON5Reader {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var path: [PathStep] = []

    private enum PathStep {
        case key(String)
        case index(Int)
    }

    private static let maxDepth = 64
    package static let maxBytes = 1 << 20

    /// Parses a whole document; anything after the top-level value other than white space
    /// and comments is an error.
    package static func parse(_ text: String) throws(JSON5SyntaxError) -> JSON5Value {
        guard text.utf8.count <= maxBytes else {
            throw JSON5SyntaxError(
                line: 1, column: 1, keyPath: "",
                message: "the document is \(text.utf8.count) bytes, more than the \(maxBytes) allowed")
        }
        var reader = JSON5Reader(bytes: Array(text.utf8))
        return try reader.document()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func document() throws(JSON5SyntaxError) -> JSON5Value {
        // A UTF-8 byte order mark is allowed before the document.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3; lineStart = 3 }
        try skipSpace()
        guard index < bytes.count else { throw error("empty document: expected a value") }
        let value = try readValue()
        try skipSpace()
        guard index >= bytes.count else { throw error("unexpected \(describeNext()) after the end of the document") }
        return value
    }

    // MARK: Values

    private mutating func readValue() throws(JSON5SyntaxError) -> JSON5Value {
        guard let byte = peek() else { throw error("unexpected end of input: expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return .string(try readString())
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "I"), UInt8(ascii: "N"):
            return try readNumber()
        default:
            let start = index
            let word = readIdentifier()
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default:
                index = start
                if word.isEmpty { throw error("unexpected \(describeNext()): expected a value") }
                throw error("unexpected word '\(word)': expected a value (strings need quotes)")
            }
        }
    }

    private mutating func readObject() throws(JSON5SyntaxError) -> JSON5Value {
        guard path.count < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        index += 1  // "{"
        var members: [JSON5Member] = []
        var seen = Set<String>()
        while true {
            try skipSpace()
            guard let byte = peek() else { throw error("unexpected end of input: expected a key or '}'") }
            if byte == UInt8(ascii: "}") { index += 1; return .object(members) }
            let keyLine = line, keyColumn = column(at: index)
            let key: String
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try readString()
            } else {
                key = readIdentifier()
                if key.isEmpty { throw error("unexpected \(describeNext()): expected a key or '}'") }
            }
            path.append(.key(key))
            guard seen.insert(key).inserted else {
                throw JSON5SyntaxError(
                    line: keyLine, column: keyColumn, keyPath: pathString,
                    message: "duplicate key")
            }
            try skipSpace()
            guard peek() == UInt8(ascii: ":") else {
                throw error("expected ':' after the key, found \(describeNext())")
            }
            index += 1
            try skipSpace()
            let value = try readValue()
            path.removeLast()
            members.append(JSON5Member(key: key, value: value))
            try skipSpace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error("expected ',' or '}' after the value of '\(key)', found \(describeNext())")
            }
        }
    }

    private mutating func readArray() throws(JSON5SyntaxError) -> JSON5Value {
        guard path.count < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        index += 1  // "["
        var elements: [JSON5Value] = []
        while true {
            try skipSpace()
            guard let byte = peek() else { throw error("unexpected end of input: expected a value or ']'") }
            if byte == UInt8(ascii: "]") { index += 1; return .array(elements) }
            path.append(.index(elements.count))
            elements.append(try readValue())
            path.removeLast()
            try skipSpace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw error("expected ',' or ']' after element \(elements.count - 1), found \(describeNext())")
            }
        }
    }

    /// An ECMAScript IdentifierName, ASCII letters, digits, `_` and `$`, plus any non-ASCII
    /// character (accepted rather than checked against Unicode ID_Start/ID_Continue).
    private mutating func readIdentifier() -> String {
        let start = index
        while let byte = peek() {
            let isLetter =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard isLetter || (isDigit && index > start) else { break }
            if byte >= 0x80, isSpecialSpace(at: index) { break }
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func readString() throws(JSON5SyntaxError) -> String {
        let quote = bytes[index]
        index += 1
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated string") }
            if byte == quote { index += 1; break }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                throw error("unterminated string (a line break inside a string must be escaped)")
            }
            if byte != UInt8(ascii: "\\") { out.append(byte); index += 1; continue }
            index += 1
            guard let escaped = peek() else { throw error("unterminated string") }
            index += 1
            switch escaped {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "v"): out.append(0x0B)
            case UInt8(ascii: "0"):
                if let next = peek(), next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                    index -= 1
                    throw error("octal escapes are not allowed")
                }
                out.append(0)
            case UInt8(ascii: "1")...UInt8(ascii: "9"):
                index -= 1
                throw error("octal escapes are not allowed")
            case UInt8(ascii: "x"):
                let value = try readHex(count: 2)
                appendScalar(value, to: &out)
            case UInt8(ascii: "u"):
                var value = try readHex(count: 4)
                if (0xD800...0xDBFF).contains(value) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    index += 2
                    let low = try readHex(count: 4)
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(value) {
                    throw error("unpaired surrogate in \\u escape")
                }
                appendScalar(value, to: &out)
            case UInt8(ascii: "\n"):
                newLine(at: index)
            case UInt8(ascii: "\r"):
                if peek() == UInt8(ascii: "\n") { index += 1 }
                newLine(at: index)
            default:
                // Any other character stands for itself (\' \" \\ \/ and the rest).
                out.append(escaped)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func readHex(count: Int) throws(JSON5SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let byte = peek(), let digit = hexValue(byte) else {
                throw error("expected \(count) hexadecimal digits in escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private func appendScalar(_ value: UInt32, to out: inout [UInt8]) {
        let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
        out.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private mutating func readNumber() throws(JSON5SyntaxError) -> JSON5Value {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") {
            negative = peek() == UInt8(ascii: "-")
            index += 1
        }
        if peek() == UInt8(ascii: "I") || peek() == UInt8(ascii: "N") {
            let word = readIdentifier()
            switch word {
            case "Infinity": return .number(negative ? -.infinity : .infinity)
            case "NaN": return .number(.nan)
            default:
                index = start
                throw error("unexpected word '\(word)': expected a value (strings need quotes)")
            }
        }
        if peek() == UInt8(ascii: "0"), index + 1 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "x") {
            index += 2
            var magnitude: UInt64 = 0
            var approximate: Double = 0  // used when the value does not fit in Int
            var digits = 0
            var overflow = false
            while let byte = peek(), let digit = hexValue(byte) {
                let (shifted, o1) = magnitude.multipliedReportingOverflow(by: 16)
                let (sum, o2) = shifted.addingReportingOverflow(UInt64(digit))
                overflow = overflow || o1 || o2
                magnitude = sum
                approximate = approximate * 16 + Double(digit)
                digits += 1
                index += 1
            }
            guard digits > 0 else { throw error("expected hexadecimal digits after 0x") }
            try expectNumberEnd()
            if !overflow, magnitude <= UInt64(Int.max) {
                return .integer(negative ? -Int(magnitude) : Int(magnitude))
            }
            return .number(negative ? -approximate : approximate)
        }
        let integerDigits = readDigits()
        if integerDigits.count > 1, integerDigits.first == UInt8(ascii: "0") {
            index = start
            throw error("numbers cannot have leading zeros")
        }
        var fractionDigits: [UInt8] = []
        var hasPoint = false
        if peek() == UInt8(ascii: ".") {
            hasPoint = true
            index += 1
            fractionDigits = readDigits()
        }
        guard !integerDigits.isEmpty || !fractionDigits.isEmpty else {
            index = start
            throw error("malformed number")
        }
        var exponent = ""
        if let byte = peek(), byte | 0x20 == UInt8(ascii: "e") {
            index += 1
            var sign = ""
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") {
                sign = String(UnicodeScalar(bytes[index]))
                index += 1
            }
            let digits = readDigits()
            guard !digits.isEmpty else { throw error("expected digits in the exponent") }
            exponent = "e" + sign + String(decoding: digits, as: UTF8.self)
        }
        try expectNumberEnd()
        let integerText = integerDigits.isEmpty ? "0" : String(decoding: integerDigits, as: UTF8.self)
        if !hasPoint, exponent.isEmpty, let value = Int((negative ? "-" : "") + integerText) {
            return .integer(value)
        }
        let fractionText = fractionDigits.isEmpty ? "0" : String(decoding: fractionDigits, as: UTF8.self)
        guard let value = Double((negative ? "-" : "") + integerText + "." + fractionText + exponent) else {
            index = start
            throw error("malformed number")
        }
        return .number(value)
    }

    private mutating func readDigits() -> [UInt8] {
        let start = index
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return Array(bytes[start..<index])
    }

    /// A number must not run straight into a letter or digit ("12abc", "0x1g").
    private func expectNumberEnd() throws(JSON5SyntaxError) {
        guard let byte = peek() else { return }
        let isWordByte =
            (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte == UInt8(ascii: ".")
        if isWordByte { throw error("malformed number") }
    }

    // MARK: White space and comments

    private mutating func skipSpace() throws(JSON5SyntaxError) {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), 0x09, 0x0B, 0x0C:
                index += 1
            case UInt8(ascii: "\n"):
                index += 1
                newLine(at: index)
            case UInt8(ascii: "\r"):
                index += 1
                if peek() == UInt8(ascii: "\n") { index += 1 }
                newLine(at: index)
            case UInt8(ascii: "/"):
                guard index + 1 < bytes.count else { throw error("unexpected '/'") }
                if bytes[index + 1] == UInt8(ascii: "/") {
                    while let b = peek(), b != UInt8(ascii: "\n"), b != UInt8(ascii: "\r") { index += 1 }
                } else if bytes[index + 1] == UInt8(ascii: "*") {
                    let openLine = line, openColumn = column(at: index)
                    index += 2
                    while true {
                        guard let b = peek() else {
                            throw JSON5SyntaxError(
                                line: openLine, column: openColumn, keyPath: pathString,
                                message: "unterminated /* comment")
                        }
                        if b == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                            index += 2
                            break
                        }
                        index += 1
                        if b == UInt8(ascii: "\n") || (b == UInt8(ascii: "\r") && peek() != UInt8(ascii: "\n")) {
                            newLine(at: index)
                        }
                    }
                } else {
                    throw error("unexpected '/'")
                }
            default:
                guard byte >= 0x80, isSpecialSpace(at: index) else { return }
                index += byte == 0xC2 ? 2 : 3
            }
        }
    }

    /// U+00A0, U+FEFF, U+2028 and U+2029, the non-ASCII white space JSON5 names.
    private func isSpecialSpace(at i: Int) -> Bool {
        let rest = bytes[i...]
        return rest.starts(with: [0xC2, 0xA0]) || rest.starts(with: [0xEF, 0xBB, 0xBF])
            || rest.starts(with: [0xE2, 0x80, 0xA8]) || rest.starts(with: [0xE2, 0x80, 0xA9])
    }

    // MARK: Positions and errors

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func newLine(at start: Int) {
        line += 1
        lineStart = start
    }

    private func column(at i: Int) -> Int {
        // Count scalars, not bytes: skip UTF-8 continuation bytes.
        bytes[lineStart..<min(i, bytes.count)].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    private var pathString: String {
        var out = ""
        for step in path {
            switch step {
            case .key(let key): out += out.isEmpty ? key : "." + key
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }

    private func describeNext() -> String {
        guard let byte = peek() else { return "end of input" }
        if byte >= 0x20, byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { return "end of line" }
        return "byte 0x" + String(byte, radix: 16)
    }

    private func error(_ message: String) -> JSON5SyntaxError {
        JSON5SyntaxError(line: line, column: column(at: index), keyPath: pathString, message: message)
    }
}

private func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
    default: return nil
    }
}
