import Testing

@testable import Media

@Suite struct SIPInfoDTMFTests {
    struct Good: Sendable, CustomTestStringConvertible {
        let contentType: String
        let body: String
        let digit: DTMFDigit
        let durationMs: Int?
        var testDescription: String { "\(contentType): \(body.debugDescription)" }
    }

    static let good: [Good] = [
        Good(
            contentType: "application/dtmf-relay", body: "Signal=5\r\nDuration=160\r\n", digit: .five, durationMs: 160),
        Good(contentType: "application/dtmf-relay", body: "Signal=5\r\nDuration=160", digit: .five, durationMs: 160),
        Good(contentType: "application/dtmf-relay", body: "Signal=1\r\n", digit: .one, durationMs: nil),
        Good(contentType: "application/dtmf-relay", body: "signal=*\nduration=250\n", digit: .star, durationMs: 250),
        Good(
            contentType: "application/dtmf-relay", body: "Signal = #\r\nDuration = 100\r\n", digit: .pound,
            durationMs: 100),
        Good(contentType: "Application/DTMF-Relay; charset=utf-8", body: "SIGNAL=a\r\n", digit: .a, durationMs: nil),
        Good(
            contentType: "application/dtmf-relay", body: "Duration=300\r\nSignal=D\r\nVolume=10\r\n", digit: .d,
            durationMs: 300),
        Good(
            contentType: "application/dtmf-relay", body: "Signal=11\r\nDuration=200\r\n", digit: .pound, durationMs: 200
        ),
        Good(contentType: "application/dtmf-relay", body: "\r\nSignal=0\r\n\r\n", digit: .zero, durationMs: nil),
        Good(contentType: "application/dtmf", body: "7", digit: .seven, durationMs: nil),
        Good(contentType: "application/dtmf", body: "#\r\n", digit: .pound, durationMs: nil),
        Good(contentType: " application/dtmf ", body: " * ", digit: .star, durationMs: nil),
        Good(contentType: "application/dtmf", body: "10", digit: .star, durationMs: nil),
        Good(contentType: "application/dtmf", body: "c", digit: .c, durationMs: nil)
    ]

    @Test(arguments: good)
    func parsesGoodBodies(_ item: Good) throws {
        let info = try SIPInfoDTMF.parse(contentType: item.contentType, body: Array(item.body.utf8))
        #expect(info.digit == item.digit)
        #expect(info.durationMs == item.durationMs)
        let ms = item.durationMs ?? SIPInfoDTMF.defaultDurationMs
        #expect(Array(info.events) == [.began(item.digit), .ended(item.digit, durationMs: ms)])
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let contentType: String
        let body: [UInt8]
        let error: SIPInfoDTMFError
        var testDescription: String { "\(contentType): \(error)" }
    }

    static let bad: [Bad] = [
        Bad(contentType: "text/plain", body: Array("Signal=5".utf8), error: .unsupportedContentType("text/plain")),
        Bad(contentType: "application/sdp", body: [], error: .unsupportedContentType("application/sdp")),
        Bad(contentType: "application/dtmf-relay", body: [], error: .missingSignal),
        Bad(contentType: "application/dtmf-relay", body: Array("Duration=160\r\n".utf8), error: .missingSignal),
        Bad(contentType: "application/dtmf-relay", body: Array("Signal=\r\n".utf8), error: .missingSignal),
        Bad(contentType: "application/dtmf-relay", body: Array("Signal=E\r\n".utf8), error: .invalidSignal("E")),
        Bad(contentType: "application/dtmf-relay", body: Array("Signal=16\r\n".utf8), error: .invalidSignal("16")),
        Bad(
            contentType: "application/dtmf-relay", body: Array("Signal=12345678901234567890\r\n".utf8),
            error: .invalidSignal("12345678901234567890")),
        Bad(
            contentType: "application/dtmf-relay", body: Array("Signal=5\r\nDuration=abc\r\n".utf8),
            error: .invalidDuration("abc")),
        Bad(
            contentType: "application/dtmf-relay", body: Array("Signal=5\r\nDuration=-5\r\n".utf8),
            error: .invalidDuration("-5")),
        Bad(
            contentType: "application/dtmf-relay", body: Array("Signal=5\r\nDuration=0\r\n".utf8),
            error: .invalidDuration("0")),
        Bad(contentType: "application/dtmf-relay", body: [0x53, 0xFF, 0xFE], error: .notText),
        Bad(contentType: "application/dtmf", body: Array("  \r\n".utf8), error: .missingSignal),
        Bad(contentType: "application/dtmf", body: Array("55".utf8), error: .invalidSignal("55")),
        Bad(contentType: "application/dtmf", body: Array("Signal=5".utf8), error: .invalidSignal("Signal=5"))
    ]

    @Test(arguments: bad)
    func badBodiesThrowClassified(_ item: Bad) {
        #expect(throws: item.error) { try SIPInfoDTMF.parse(contentType: item.contentType, body: item.body) }
        #expect(
            item.error.kind
                == (item.error == .unsupportedContentType(item.contentType) ? .unsupportedContentType : .malformedBody))
    }

    @Test func serializeRoundTrips() throws {
        let info = SIPInfoDTMF(digit: .pound, durationMs: 160)
        #expect(String(decoding: info.serialize(), as: UTF8.self) == "Signal=#\r\nDuration=160\r\n")
        #expect(try SIPInfoDTMF.parse(contentType: "application/dtmf-relay", body: info.serialize()) == info)
        #expect(String(decoding: SIPInfoDTMF(digit: .b).serialize(as: .dtmf), as: UTF8.self) == "B")
        #expect(String(decoding: SIPInfoDTMF(digit: .b).serialize(), as: UTF8.self) == "Signal=B\r\n")
    }
}
