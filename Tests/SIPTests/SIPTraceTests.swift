import SIP
import Testing

/// `SIPTrace`: credentials redacted, retransmissions marked, bounds that keep a call's
/// setup and end.
struct RedactionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var header: String
    var expected: String
    var testDescription: String { name }
}

let redactionCases: [RedactionCase] = [
    RedactionCase(
        name: "Digest Authorization keeps who and where, loses the response",
        header:
            "Authorization: Digest username=\"gw\", realm=\"carrier.example\", nonce=\"abc\", uri=\"sip:+15551230001@carrier.example\", response=\"0123456789abcdef\", algorithm=MD5, cnonce=\"x\", qop=auth, nc=00000001",
        expected:
            "Authorization: Digest username=\"gw\", realm=\"carrier.example\", uri=\"sip:+15551230001@carrier.example\", algorithm=MD5, [credentials redacted]"
    ),
    RedactionCase(
        name: "Proxy-Authorization, lower case, compact spacing",
        header: "proxy-authorization:Digest username=\"trunk1\",response=\"deadbeef\",nonce=\"n\"",
        expected: "proxy-authorization: Digest username=\"trunk1\", [credentials redacted]"),
    RedactionCase(
        name: "a Bearer token is gone whole", header: "Authorization: Bearer eyJhbGciOi.secret.sig",
        expected: "Authorization: Bearer [credentials redacted]"),
    RedactionCase(
        name: "other headers are untouched", header: "WWW-Authenticate: Digest realm=\"r\", nonce=\"n\"",
        expected: "WWW-Authenticate: Digest realm=\"r\", nonce=\"n\"")
]

@Suite struct SIPTraceTests {
    static func invite(_ extra: String) -> String {
        "INVITE sip:+15551230001@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1\r\nCSeq: 2 INVITE\r\n\(extra)\r\nContent-Length: 0\r\n\r\n"
    }

    @Test(arguments: redactionCases)
    func credentialsAreRedacted(_ c: RedactionCase) {
        let out = SIPTrace.redact(Self.invite(c.header))
        #expect(out.contains(c.expected + "\r\n"), "\(out)")
        #expect(out.hasPrefix("INVITE sip:+15551230001@127.0.0.1 SIP/2.0\r\n"))
        #expect(!out.contains("0123456789abcdef") && !out.contains("deadbeef") && !out.contains("secret"))
    }

    /// A body line that happens to start with "Authorization:" is content, not a header.
    @Test func bodiesAreNotRedacted() {
        let text =
            "MESSAGE sip:a@b SIP/2.0\r\nCSeq: 1 MESSAGE\r\n\r\nAuthorization: Digest response=\"in-the-body\"\r\n"
        #expect(SIPTrace.redact(text) == text)
    }

    @Test func retransmissionsAreMarkedAndTheFirstLineRead() {
        var trace = SIPTrace()
        let invite = Self.invite("From: <sip:a@b>;tag=1")
        trace.record(
            time: 1, direction: .sent, transport: "UDP", local: "127.0.0.1:5060", remote: "127.0.0.1:5090", text: invite
        )
        trace.record(
            time: 1.5, direction: .sent, transport: "UDP", local: "127.0.0.1:5060", remote: "127.0.0.1:5090",
            text: invite)
        trace.record(
            time: 1.6, direction: .received, transport: "UDP", local: "127.0.0.1:5060", remote: "127.0.0.1:5090",
            text: "SIP/2.0 100 Trying\r\nCSeq: 2 INVITE\r\n\r\n")
        #expect(trace.entries.map(\.retransmission) == [false, true, false])
        #expect(
            trace.entries.map { String($0.firstLine) } == [
                "INVITE sip:+15551230001@127.0.0.1 SIP/2.0", "INVITE sip:+15551230001@127.0.0.1 SIP/2.0",
                "SIP/2.0 100 Trying"
            ])
    }

    /// Past its bounds a trace drops messages from the middle: the INVITE and the BYE stay.
    @Test(arguments: [(10, 1 << 20), (1000, 2048)])
    func boundsKeepTheSetupAndTheEnd(maxEntries: Int, maxBytes: Int) {
        var trace = SIPTrace(maxEntries: maxEntries, maxBytes: maxBytes)
        trace.record(time: 0, direction: .sent, transport: "UDP", local: "l", remote: "r", text: Self.invite(""))
        for n in 1...50 {
            trace.record(
                time: Double(n), direction: .received, transport: "UDP", local: "l", remote: "r",
                text: "OPTIONS sip:gw SIP/2.0\r\nCSeq: \(n) OPTIONS\r\n\r\n")
        }
        trace.record(
            time: 99, direction: .sent, transport: "UDP", local: "l", remote: "r",
            text: "BYE sip:x SIP/2.0\r\nCSeq: 3 BYE\r\n\r\n")
        #expect(trace.entries.count <= maxEntries)
        #expect(trace.entries.reduce(0) { $0 + $1.text.utf8.count } <= max(maxBytes, 1024) + 200)
        #expect(trace.entries.first?.firstLine.hasPrefix("INVITE") == true)
        #expect(trace.entries.last?.firstLine.hasPrefix("BYE") == true)
        #expect(trace.dropped + trace.entries.count == 52)
    }
}
