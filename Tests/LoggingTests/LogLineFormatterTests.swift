import Foundation
import Logging
import Testing

/// The two formats of a line: the fixed keys, the fields in order, the escaping of anything a
/// message or a field may carry, and the text format's old wording.
struct LogLineFormatterTests {
    static let time = LogTime(seconds: 1_700_000_000, nanoseconds: 123_456_789)

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        #expect(bytes.last == 0x0A && bytes.dropLast().allSatisfy { $0 != 0x0A }, "one line, newline last")
        let any = try JSONSerialization.jsonObject(with: Data(bytes.dropLast()))
        return try #require(any as? [String: Any])
    }

    @Test func jsonHasTheFixedKeysThenTheFieldsInOrder() throws {
        let record = LogRecord(
            time: Self.time, level: .notice, component: .calls, message: "call ended",
            fields: [
                LogField("roomId", "r1"), LogField("traceId", "t1"), LogField("sipStatus", 486),
                LogField("durationMs", .int(1234)), LogField("early", true), LogField("jitter", 1.5),
                LogField("nan", .double(.nan))
            ])
        let line = LogLineFormatter.json(record)
        let text = String(decoding: line, as: UTF8.self)
        #expect(
            text == #"{"time":"2023-11-14T22:13:20.123Z","level":"notice","component":"calls","msg":"call ended","#
                + #""roomId":"r1","traceId":"t1","sipStatus":486,"durationMs":1234,"early":true,"jitter":1.5,"nan":null}"#
                + "\n")
        let o = try Self.object(line)
        #expect(o["sipStatus"] as? Int == 486 && o["jitter"] as? Double == 1.5 && o["nan"] is NSNull)
    }

    @Test func jsonEscapesEveryStringWhereverItIs() throws {
        // Quotes, backslashes, every C0 control, DEL, C1, the Unicode line breaks, non-ASCII.
        let nasty = "a\"b\\c\n\r\t\u{8}\u{C}\u{0}\u{1}\u{1F}\u{7F}\u{85}\u{2028}\u{2029}é€😀 /"
        let record = LogRecord(
            time: Self.time, level: .warning, component: .sip, message: nasty,
            fields: [LogField(nasty, .string(nasty)), LogField("time", "not the time")])
        let line = LogLineFormatter.json(record)
        let text = String(decoding: line, as: UTF8.self)
        #expect(
            text.contains(
                #""a\"b\\c\n\r\t\b\f\u0000\u0001\u001f\u007f\u0085\u2028\u2029é€😀 /""#), "\(text)")
        let o = try Self.object(line)
        #expect(o["msg"] as? String == nasty)
        #expect(o[nasty] as? String == nasty)
        // A field cannot replace a fixed key.
        #expect(o["time"] as? String == "2023-11-14T22:13:20.123Z" && o["field_time"] as? String == "not the time")
        #expect(!line.dropLast().contains { $0 < 0x20 }, "no raw control byte in the line")
    }

    @Test func bytesThatAreNotUTF8BecomeReplacementCharacters() throws {
        // A Call-ID with a lone continuation byte, an overlong NUL and a truncated sequence.
        let wire: [UInt8] = Array("id-".utf8) + [0x80, 0xC0, 0x80, 0x41, 0xE2, 0x82]
        let record = LogRecord(
            time: Self.time, level: .info, component: .calls, message: "m",
            fields: [LogField("callId", .init(bytes: wire))])
        let line = LogLineFormatter.json(record)
        #expect(String(validatingUTF8: line.dropLast().map { CChar(bitPattern: $0) } + [0]) != nil, "valid UTF-8")
        let o = try Self.object(line)
        let callId = try #require(o["callId"] as? String)
        #expect(callId.hasPrefix("id-\u{FFFD}") && callId.contains("A") && !callId.contains("\u{0}"), "\(callId)")
    }

    @Test func textKeepsTheOldWordingAndStaysOneLine() {
        let plain = LogRecord(
            time: Self.time, level: .warning, component: .records, message: "journal_mode is delete, not wal\n",
            fields: [LogField("path", "/x")], textPrefix: "irisgw: call records /x: ")
        #expect(
            String(decoding: LogLineFormatter.text(plain), as: UTF8.self)
                == "irisgw: call records /x: journal_mode is delete, not wal\n")
        let forged = LogRecord(
            time: Self.time, level: .warning, component: .tls,
            message: "TLS from 10.0.0.1:5061: bad\nirisgw: fake\u{1B}[2J")
        #expect(
            String(decoding: LogLineFormatter.text(forged), as: UTF8.self)
                == "irisgw: TLS from 10.0.0.1:5061: bad\\nirisgw: fake\\u{1b}[2J\n")
    }

    @Test func timeIsRFC3339InUTCWithMilliseconds() {
        #expect(LogTime(seconds: 0, nanoseconds: 0).rfc3339 == "1970-01-01T00:00:00.000Z")
        #expect(LogTime(seconds: 951_782_400, nanoseconds: 999_999_999).rfc3339 == "2000-02-29T00:00:00.999Z")
        #expect(LogTime(seconds: 4_102_444_799, nanoseconds: 1_000_000).rfc3339 == "2099-12-31T23:59:59.001Z")
        let now = LogTime.now()
        #expect(now.rfc3339.count == 24 && now.rfc3339.hasSuffix("Z"))
    }
}
