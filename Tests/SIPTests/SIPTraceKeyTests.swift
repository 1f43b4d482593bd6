import SIP
import Testing

/// `SIPTrace.redact` on SDES: the keys of `a=crypto` lines (RFC 4568) never reach a trace
/// or the pcap built from it; the tag, the suite and the rest of the line stay, and the
/// message keeps its length.
@Suite struct SIPTraceKeyTests {
    static let key1 = "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz"
    static let key2 = "QUJjZGVmMTIzNDU2Nzg5QUJDREUwMTIzNDU2Nzg5"
    /// AEAD_AES_128_GCM: 16 + 12 bytes, base64 ending in one `=`.
    static let gcmKey = "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3OA="
    static let redacted40 = "REDACTEDREDACTEDREDACTEDREDACTEDREDACTED"

    static let cases: [(line: String, expected: String)] = [
        (
            "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(key1)",
            "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(redacted40)"
        ),
        (
            "a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:\(key1)|2^20|1:4;inline:\(key2)|2^20|2:4 FEC_ORDER=FEC_SRTP",
            "a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:\(redacted40)|2^20|1:4;inline:\(redacted40)|2^20|2:4 FEC_ORDER=FEC_SRTP"
        ),
        (
            "a=crypto:3 AEAD_AES_128_GCM INLINE:\(gcmKey) FEC_KEY=inline:\(key2)|2^31 KDR=23",
            "a=crypto:3 AEAD_AES_128_GCM INLINE:REDACTEDREDACTEDREDACTEDREDACTEDREDACT= FEC_KEY=inline:\(redacted40)|2^31 KDR=23"
        )
    ]

    static func invite(sdp: String, extraHeader: String = "") -> String {
        "INVITE sip:+15551230001@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK1\r\n"
            + "From: <sip:+15557654321@127.0.0.1>;tag=1\r\nTo: <sip:+15551230001@127.0.0.1>\r\nCall-ID: keys@127.0.0.1\r\n"
            + "CSeq: 1 INVITE\r\nMax-Forwards: 70\r\n"
            + extraHeader + "Content-Type: application/sdp\r\nContent-Length: \(sdp.utf8.count)\r\n\r\n" + sdp
    }

    static func sdp(_ cryptoLines: [String]) -> String {
        (["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0", "m=audio 4000 RTP/SAVP 0"]
            + cryptoLines + ["a=sendrecv"]).map { $0 + "\r\n" }.joined()
    }

    @Test(arguments: 0..<cases.count)
    func keysOfEveryInlineParameterAreRedacted(_ index: Int) throws {
        let c = Self.cases[index]
        let text = Self.invite(sdp: Self.sdp([c.line]))
        let out = SIPTrace.redact(text)
        #expect(out.contains("\r\n" + c.expected + "\r\n"), "\(out)")
        #expect(!out.contains(Self.key1) && !out.contains(Self.key2) && !out.contains(Self.gcmKey))
        #expect(out.utf8.count == text.utf8.count, "letter for letter")
    }

    /// The message stays one a SIP parser (and tshark, from the pcap) reads whole: the body
    /// keeps its length, so Content-Length stays true. Credentials go in the same pass.
    @Test func contentLengthStaysTrue() throws {
        let sdp = Self.sdp(Self.cases.map(\.line))
        let text = Self.invite(
            sdp: sdp, extraHeader: "Authorization: Digest username=\"gw\", response=\"0123456789abcdef\"\r\n")
        let out = SIPTrace.redact(text)
        #expect(!out.contains(Self.key1) && !out.contains(Self.key2) && !out.contains("0123456789abcdef"), "\(out)")
        #expect(out.contains("Authorization: Digest username=\"gw\", [credentials redacted]\r\n"))
        let m = try SIPMessage.parse(Array(out.utf8))
        let body = String(decoding: m.body, as: UTF8.self)
        #expect(
            m[.contentLength] == String(m.body.count) && m.body.count == sdp.utf8.count
                && body.hasSuffix("a=sendrecv\r\n"), "\(out)")
        #expect(body.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.redacted40)\r\n"))
    }

    /// Only the body's `a=crypto` lines: a header that happens to hold the text is not SDP,
    /// and a message without keys or credentials comes back unchanged.
    @Test func headersAndKeylessMessagesAreUntouched() {
        let header = "Subject: a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key1)\r\n"
        let text = Self.invite(sdp: Self.sdp([]), extraHeader: header)
        #expect(SIPTrace.redact(text) == text)
    }

    /// A trace and its entries hold no key, whichever way the message went.
    @Test func aRecordedTraceHoldsNoKey() {
        var trace = SIPTrace()
        let text = Self.invite(sdp: Self.sdp([Self.cases[1].line]))
        trace.record(
            time: 1, direction: .received, transport: "UDP", local: "127.0.0.1:5060", remote: "127.0.0.1:5090",
            text: text)
        trace.record(
            time: 2, direction: .sent, transport: "TLS", local: "127.0.0.1:5061", remote: "127.0.0.1:5091", text: text)
        #expect(trace.entries.count == 2)
        #expect(
            trace.entries.allSatisfy {
                !$0.text.contains(Self.key1)
                    && $0.text.contains("AES_CM_128_HMAC_SHA1_32 inline:\(Self.redacted40)|2^20|1:4")
            })
    }
}
