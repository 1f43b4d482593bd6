import Testing

@testable import Media

@Suite struct TelephoneEventTests {
    struct WireCase: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let report: TelephoneEvent
        var testDescription: String { bytes.map { String($0, radix: 16) }.joined(separator: " ") }
    }

    static let wireCases: [WireCase] = [
        WireCase(bytes: [0x05, 0x0A, 0x00, 0xA0], report: TelephoneEvent(event: 5, volume: 10, duration: 160)),
        WireCase(
            bytes: [0x0B, 0x8A, 0x03, 0x20], report: TelephoneEvent(event: 11, isEnd: true, volume: 10, duration: 800)),
        WireCase(bytes: [0x00, 0x00, 0x00, 0x00], report: TelephoneEvent(event: 0, volume: 0, duration: 0)),
        WireCase(
            bytes: [0x0F, 0xFF, 0xFF, 0xFF],
            report: TelephoneEvent(event: 15, isEnd: true, reserved: true, volume: 63, duration: 0xFFFF)),
        WireCase(
            bytes: [0x10, 0x40, 0x12, 0x34],
            report: TelephoneEvent(event: 16, reserved: true, volume: 0, duration: 0x1234))
    ]

    @Test(arguments: wireCases)
    func parseAndSerializeRoundTrip(_ wire: WireCase) throws {
        let parsed = try TelephoneEvent.parse(wire.bytes)
        #expect(parsed == wire.report)
        #expect(parsed.serialize() == wire.bytes)
        var buffer = [UInt8](repeating: 0xEE, count: 6)
        let written = buffer.withUnsafeMutableBytes { parsed.serialize(into: $0) }
        #expect(written == 4)
        #expect(Array(buffer.prefix(4)) == wire.bytes)
        #expect(buffer[4] == 0xEE)
    }

    @Test func parseReadsOnlyTheFirstReportOfALongerPayloadAndSlices() throws {
        let bytes: [UInt8] = [0xFF, 0x01, 0x8A, 0x01, 0x40, 0x02, 0x0A, 0x00, 0x50]
        #expect(
            try TelephoneEvent.parse(bytes.dropFirst())
                == TelephoneEvent(event: 1, isEnd: true, volume: 10, duration: 0x140))
    }

    @Test(arguments: [0, 1, 3])
    func shortPayloadThrowsTruncated(count: Int) {
        #expect(throws: TelephoneEventError.truncated(byteCount: count)) {
            try TelephoneEvent.parse([UInt8](repeating: 0, count: count))
        }
    }

    @Test func volumeAboveSixBitsIsMaskedAndSmallBufferIsRefused() {
        #expect(TelephoneEvent(event: 1, volume: 0xFF, duration: 1).serialize() == [0x01, 0x3F, 0x00, 0x01])
        var small = [UInt8](repeating: 0, count: 3)
        #expect(small.withUnsafeMutableBytes { TelephoneEvent(event: 1, duration: 1).serialize(into: $0) } == 0)
    }

    static let keys: [(Character, UInt8)] = [
        ("0", 0), ("1", 1), ("2", 2), ("3", 3), ("4", 4), ("5", 5), ("6", 6), ("7", 7), ("8", 8), ("9", 9),
        ("*", 10), ("#", 11), ("A", 12), ("B", 13), ("C", 14), ("D", 15)
    ]

    @Test(arguments: keys)
    func digitsMapToEventCodes(character: Character, code: UInt8) throws {
        let digit = try #require(DTMFDigit(character))
        #expect(digit.event == code)
        #expect(digit.character == character)
        #expect(DTMFDigit(event: code) == digit)
        #expect(TelephoneEvent(digit: digit, duration: 1).digit == digit)
    }

    @Test func lowercaseLettersAndBadCharactersAndCodesAbove15() throws {
        #expect(DTMFDigit("a") == .a)
        #expect(DTMFDigit("d") == .d)
        #expect(DTMFDigit("E") == nil)
        #expect(DTMFDigit("x") == nil)
        #expect(DTMFDigit(event: 16) == nil)
        #expect(try DTMFDigit.digits("12*#ab") == [.one, .two, .star, .pound, .a, .b])
        #expect(throws: DTMFError.invalidDigit("x")) { try DTMFDigit.digits("12x") }
    }
}
