import Formats
import Testing

/// The YAML subset docs/openapi.yaml is written in (`YAMLSubsetReader`), read into the same
/// tree as JSON5; ControlAPITests compares the whole document with PyYAML's reading.
@Test func yamlSubsetReaderReadsBlockStyle() throws {
    let text = """
        # a comment
        title: irisgw  # after a value
        quoted: 'it''s "here"'
        escaped: "a\\tb\\u00e9 \\"c\\""
        numbers: [1, -103, 2.5, 'x', "y"]
        flows: [{$ref: '#/a'}, {k: [], e: {}}, [b, c]]
        empty: []
        nothing: {}
        flags:
          yes1: true
          no1: false
          none: null
          tilde: ~
        list:
          - http://example.net/a#b c:d
          - name: a
            in: path
          -
            nested: 1
        sameIndent:
        - one
        - - two
          - three
        literal: |
          line one
            indented

          after a blank
        folded: >-
          joined
          into one

          paragraph two
        '200': ok
        /v1/sessions/{roomId}: path
        """
    let value = try YAMLSubsetReader.parse(text)
    let expected: JSON5Value = .object([
        .init(key: "title", value: .string("irisgw")),
        .init(key: "quoted", value: .string("it's \"here\"")),
        .init(key: "escaped", value: .string("a\tb\u{e9} \"c\"")),
        .init(
            key: "numbers", value: .array([.integer(1), .integer(-103), .number(2.5), .string("x"), .string("y")])),
        .init(
            key: "flows",
            value: .array([
                .object([.init(key: "$ref", value: .string("#/a"))]),
                .object([.init(key: "k", value: .array([])), .init(key: "e", value: .object([]))]),
                .array([.string("b"), .string("c")])
            ])),
        .init(key: "empty", value: .array([])),
        .init(key: "nothing", value: .object([])),
        .init(
            key: "flags",
            value: .object([
                .init(key: "yes1", value: .bool(true)), .init(key: "no1", value: .bool(false)),
                .init(key: "none", value: .null), .init(key: "tilde", value: .null)
            ])),
        .init(
            key: "list",
            value: .array([
                .string("http://example.net/a#b c:d"),
                .object([.init(key: "name", value: .string("a")), .init(key: "in", value: .string("path"))]),
                .object([.init(key: "nested", value: .integer(1))])
            ])),
        .init(key: "sameIndent", value: .array([.string("one"), .array([.string("two"), .string("three")])])),
        .init(key: "literal", value: .string("line one\n  indented\n\nafter a blank\n")),
        .init(key: "folded", value: .string("joined into one\nparagraph two")),
        .init(key: "200", value: .string("ok")),
        .init(key: "/v1/sessions/{roomId}", value: .string("path"))
    ])
    #expect(value == expected)
}

/// Anything outside the subset, or a plain value YAML 1.1 reads as another type, is an
/// error naming its line: never a silent difference from a full YAML reader.
@Test(arguments: [
    ("a: &anchor 1", 1, "indicator"),
    ("a: *alias", 1, "indicator"),
    ("a: !tag x", 1, "indicator"),
    ("a: yes", 1, "YAML 1.1"),
    ("a: On", 1, "YAML 1.1"),
    ("a: +15551230001", 1, "YAML 1.1"),
    ("a: 0755", 1, "YAML 1.1"),
    ("a: 1e3", 1, "YAML 1.1"),
    ("a: 2024-01-01", 1, "YAML 1.1"),
    ("a: .inf", 1, "YAML 1.1"),
    ("200: ok", 1, "quote it"),
    ("on: 1", 1, "quote it"),
    ("a: 1\na: 2", 2, "duplicate key"),
    ("a:\n\tb: 1", 2, "tab"),
    ("a: first\n  continued", 2, "unexpected indentation"),
    ("a: b: c", 1, "`: `"),
    ("a: 'open", 1, "end on its line"),
    ("a: [1, [2]", 1, "end on its line"),
    ("a: {b: 1, b: 2}", 1, "duplicate key"),
    ("a: {b 1}", 1, "expected `: `"),
    ("a: [x #y]", 1, "quote the value"),
    ("a: |+\n  x", 1, "block scalar header"),
    ("a: >\n  x\n    more", 3, "folded"),
    ("? complex\n: key", 1, "complex keys"),
    ("a: \"\\x41\"", 1, "escape"),
    ("", 1, "empty document")
])
func yamlSubsetReaderRefuses(_ text: String, line: Int, message: String) {
    #expect {
        try YAMLSubsetReader.parse(text)
    } throws: { error in
        guard let e = error as? YAMLSubsetError else { return false }
        return e.line == line && e.message.contains(message)
    }
}

@Test func yamlSubsetReaderWritesJSON() throws {
    let tree = try YAMLSubsetReader.parse("a:\n  - 1\n  - 'x\"y'\nb: 2.5\nc: null\n")
    #expect(JSON5Document.json(tree) == #"{"a":[1,"x\"y"],"b":2.5,"c":null}"#)
}
