import IrisAPI
import Testing

@Suite struct JSONLimitsTests {
    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var text: String
        var limits = JSONLimits(maxBytes: 1000, maxDepth: 4)
        var error: JSONLimitError?
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "flat object", text: #"{"a":1,"b":[1,2]}"#),
        Row(name: "at the depth limit", text: "[[[[1]]]]"),
        Row(name: "one past the limit", text: "[[[[[1]]]]]", error: .tooDeep(limit: 4)),
        Row(name: "siblings do not add up", text: "[[[[1]]],[[[2]]],[[[3]]]]"),
        Row(name: "brackets in strings do not count", text: #"["[[[[[[[[", "{{{{{{"]"#),
        Row(name: "escaped quote stays in the string", text: #"["\"[[[[[[["]"#),
        Row(name: "escaped backslash ends before the quote", text: #"["\\", [[[[1]]]]]"#, error: .tooDeep(limit: 4)),
        Row(name: "unclosed brackets still counted", text: "[[[[[", error: .tooDeep(limit: 4)),
        Row(name: "UTF-16 hides brackets from a byte count: refused", text: "[\u{0}[\u{0}[\u{0}", error: .notUTF8),
        Row(name: "too large", text: String(repeating: " ", count: 1001), error: .tooLarge(bytes: 1001, limit: 1000))
    ]

    @Test(arguments: rows) func check(_ row: Row) {
        do {
            try row.limits.check(Array(row.text.utf8))
            #expect(row.error == nil, "\(row.name): accepted")
        } catch {
            #expect(error == row.error, "\(row.name): \(error)")
        }
    }

    @Test func apiLimitRefusesWhatCrashedTheDecoder() {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(throws: JSONLimitError.self) { try JSONLimits(maxBytes: 1 << 20).check(deep) }
    }
}
