import Formats
import Testing

@Test func json5ReaderReadsTheJSON5Extensions() throws {
    let text = """
        \u{FEFF}// line comment
        {
          unquoted: 'single',  /* block
          comment */ "double": "a\\tb\\u00e9\\x41\\
        c",
          $id_1: [1, -2, +3, 0x1F, -0xa, .5, 5., 1e3, Infinity, -Infinity,],
          flags: { yes: true, no: false, nothing: null, },
          emoji: "\\uD83D\\uDE00",
        }
        """
    let value = try JSON5Reader.parse(text)
    guard case .object(let members) = value else {
        Issue.record("expected an object, got \(value)")
        return
    }
    #expect(members.map(\.key) == ["unquoted", "double", "$id_1", "flags", "emoji"])  // document order
    #expect(members[0].value == .string("single"))
    #expect(members[1].value == .string("a\tb\u{e9}Ac"))
    #expect(
        members[2].value
            == .array([
                .integer(1), .integer(-2), .integer(3), .integer(31), .integer(-10),
                .number(0.5), .number(5), .number(1000), .number(.infinity), .number(-.infinity)
            ]))
    #expect(
        members[3].value
            == .object([
                JSON5Member(key: "yes", value: .bool(true)),
                JSON5Member(key: "no", value: .bool(false)),
                JSON5Member(key: "nothing", value: .null)
            ]))
    #expect(members[4].value == .string("\u{1F600}"))
}

@Test(arguments: [
    ("", 1, 1, "", "empty document: expected a value"),
    ("// nothing\n", 2, 1, "", "empty document: expected a value"),
    ("{a: 1} x", 1, 8, "", "unexpected 'x' after the end of the document"),
    ("{a: 'open\n}", 1, 10, "a", "unterminated string (a line break inside a string must be escaped)"),
    ("{a: 1 /* open", 1, 7, "", "unterminated /* comment"),
    ("{a: [1, 2,, 3]}", 1, 11, "a[2]", "unexpected ',': expected a value"),
    ("{a: 012}", 1, 5, "a", "numbers cannot have leading zeros"),
    ("{a: 12abc}", 1, 7, "a", "malformed number"),
    ("{a: 0x}", 1, 7, "a", "expected hexadecimal digits after 0x"),
    ("{a: \"\\u12\"}", 1, 10, "a", "expected 4 hexadecimal digits in escape"),
    ("{a: \"\\uDC00\"}", 1, 12, "a", "unpaired surrogate in \\u escape"),
    ("{a: {b: [{c: }]}}", 1, 14, "a.b[0].c", "unexpected '}': expected a value"),
    ("{a 1}", 1, 4, "a", "expected ':' after the key, found '1'"),
    ("{é: 1, é: 2}", 1, 8, "é", "duplicate key"),
    ("{a: 1", 1, 6, "", "expected ',' or '}' after the value of 'a', found end of input")
])
func json5ReaderReportsWhereAndWhat(_ text: String, _ line: Int, _ column: Int, _ keyPath: String, _ message: String) {
    let error = #expect(throws: JSON5SyntaxError.self) { try JSON5Reader.parse(text) }
    #expect(error == JSON5SyntaxError(line: line, column: column, keyPath: keyPath, message: message))
}

@Test func json5ReaderLimitsNesting() {
    let deep = String(repeating: "[", count: 10_000)
    let error = #expect(throws: JSON5SyntaxError.self) { try JSON5Reader.parse(deep) }
    #expect(error?.message == "nesting deeper than 64 levels")
}

@Test func json5ReaderKeepsBigIntegersAsNumbers() throws {
    #expect(try JSON5Reader.parse("99999999999999999999") == .number(1e20))
    #expect(try JSON5Reader.parse("-0") == .integer(0))
    #expect(try JSON5Reader.parse("0xFFFFFFFFFFFFFFFFF") == .number(0x1p68))
}

@Test func json5ReaderRefusesADocumentOverItsSizeLimit() {
    let text = "[" + String(repeating: "1,", count: JSON5Reader.maxBytes / 2) + "]"
    #expect(throws: JSON5SyntaxError.self) { try JSON5Reader.parse(text) }
}
