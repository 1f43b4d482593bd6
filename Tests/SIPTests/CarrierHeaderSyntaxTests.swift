import Testing

@testable import SIP

/// Privacy (RFC 3323), telephone-subscriber parameters (verstat, RFC 8224 / ATIS-1000074)
/// and the field checks that keep outside input from injecting headers.
@Suite struct CarrierHeaderSyntaxTests {
    @Test(arguments: [
        ("id", "id", true),
        ("none", "none", false),
        ("ID; Critical", "id;critical", true),
        ("header;session;user", "header;session;user", true),
        ("session", "session", false),
        ("session;critical", "session;critical", false)
    ])
    func privacyValuesReadAndWrite(text: String, written: String, hides: Bool) throws {
        let p = try PrivacyHeader.parse(text)
        #expect(p.description == written)
        #expect(p.hidesIdentity == hides)
    }

    @Test(arguments: [
        ("", "an empty priv-value"),
        ("id;", "an empty priv-value"),
        ("anonymous", "unknown priv-value \"anonymous\""),
        ("id;id", "\"id\" is given twice"),
        ("none;id", "\"none\" asks for no privacy"),
        ("critical", "\"critical\" alone asks for nothing"),
        ("id\r\nX-Injected: 1", "unknown priv-value")
    ])
    func privacyRefusals(text: String, reason: String) {
        #expect(throws: PrivacyHeader.Invalid.self) { try PrivacyHeader.parse(text) }
        do { _ = try PrivacyHeader.parse(text) } catch { #expect(error.description.contains(reason), "\(error)") }
    }

    @Test(
        arguments: [
            (
                "sip:+15551234567;verstat=TN-Validation-Passed@carrier.example;user=phone", "+15551234567",
                "TN-Validation-Passed"
            ),
            ("tel:+15551234567;verstat=No-TN-Validation", "+15551234567", "No-TN-Validation"),
            ("sip:+15551234567@carrier.example", "+15551234567", nil),
            ("sip:5551234567;npdi;rn=+15559990000@carrier.example", "5551234567", nil),
            ("tel:+15551234567;VERSTAT=TN-Validation-Failed;isub=12", "+15551234567", "TN-Validation-Failed")
        ] as [(String, String, String?)])
    func telephoneSubscribers(uri: String, number: String, verstat: String?) throws {
        let t = try #require(try SIPURI.parse(uri).telephoneSubscriber)
        #expect(t.number == number)
        #expect(t.verstat == verstat)
    }

    @Test func aSIPURIWithoutUserHasNoTelephoneSubscriber() throws {
        #expect(try SIPURI.parse("sip:carrier.example").telephoneSubscriber == nil)
    }

    @Test(
        arguments: [
            ("plain text", nil), ("bar\r\nVia: SIP/2.0/UDP evil", 0x0D), ("bar\nX: y", 0x0A), ("a\u{0}b", 0x00),
            ("tab\there", 0x09), ("del\u{7F}", 0x7F), ("ünïcödé ok", nil)
        ] as [(String, UInt8?)])
    func valueBytes(value: String, forbidden: UInt8?) {
        #expect(HeaderFieldSyntax.forbiddenByte(inValue: value) == forbidden)
    }

    @Test(arguments: [("X-Foo", true), ("X Foo", false), ("X-Foo:", false), ("", false), ("P-Charging-Vector", true)])
    func headerNames(name: String, ok: Bool) {
        #expect(HeaderFieldSyntax.isToken(name) == ok)
    }

    /// A guesser is banned after `limit` failures in the window; a success forgets them.
    @Test func authFailuresBanAfterTheLimit() {
        var counter = AuthFailureCounter(limit: 3, window: 60)
        var verdicts: [Bool] = []
        for (source, at) in [
            ("192.0.2.1", 0.0), ("192.0.2.1", 1), ("192.0.2.1", 2), ("192.0.2.2", 2), ("192.0.2.1", 3), ("192.0.2.1", 4)
        ] {
            verdicts.append(counter.failed(source, now: at))
        }
        // The fourth failure of .1 within the window bans; .2 is counted apart; after a ban
        // the count starts again.
        #expect(verdicts == [false, false, false, false, true, false])
        counter.succeeded("192.0.2.2")
        let afterSuccess = (5...7).map { counter.failed("192.0.2.2", now: Double($0)) }
        #expect(afterSuccess == [false, false, false], "a success forgets earlier failures")
        // The window passes: old failures are forgotten.
        var slow = AuthFailureCounter(limit: 2, window: 10)
        let spread = [0.0, 5, 11, 12, 13].map { slow.failed("198.51.100.1", now: $0) }
        #expect(spread == [false, false, false, false, true])
    }

    @Test func authFailureTableIsBounded() {
        var counter = AuthFailureCounter(limit: 5, window: 60, capacity: 100)
        for i in 0..<1000 { _ = counter.failed("10.0.\(i / 256).\(i % 256)", now: Double(i) / 100) }
        #expect(counter.trackedCount <= 100)
    }
}
