import Foundation
import SIP
import TestSupport
import Testing

/// Each torture message goes over real UDP to a running `SIPUserAgent` with an
/// `AnsweringEndpoint`. We must answer as RFC 4475 / RFC 5118 expect (or drop what they let
/// us drop), and the agent must keep serving: an OPTIONS sent right after gets 200.
@Suite(ConformanceCorpus.required)
struct TortureOverUDPTests {
    /// The RFC 4475 / RFC 5118 torture messages.
    static let corpus = ConformanceCorpus.rfc4475 + ConformanceCorpus.rfc5118

    /// The final status we answer each message with; nil: no answer. Responses are never
    /// answered (RFC 3261 §18.1.2 drops a bad one); a request too broken to copy Call-ID,
    /// From, To and CSeq from (insuf, extra/test) is dropped, as RFC 4475 §3.3.1 allows ("must
    /// not break"). We are a user agent, not a registrar: REGISTER and MESSAGE get 405.
    static let expected: [String: Int?] = [
        // RFC 4475 §3.1.1: valid messages.
        "wsinv.sip": 481,  // INVITE with a To tag: no such dialog here
        "intmeth.sip": 501,  // unknown method
        "esc01.sip": 200,  // INVITE answered
        "escnull.sip": 405,  // REGISTER
        "esc02.sip": 501,  // RE%47IST%45R is an unknown method
        "lwsdisp.sip": 200,  // OPTIONS
        "longreq.sip": 200,  // INVITE answered
        "dblreq.sip": 405,  // REGISTER; the trailing INVITE bytes are ignored
        "semiuri.sip": 200,  // OPTIONS
        "transports.sip": 200,  // OPTIONS
        "mpart01.sip": 405,  // MESSAGE
        "unreason.sip": nil,  // a response
        "noreason.sip": nil,  // a response
        // RFC 4475 §3.1.2: invalid messages.
        "badinv01.sip": 400, "clerr.sip": 400, "ncl.sip": 400, "scalar02.sip": 400,
        "scalarlg.sip": nil,  // a response
        "quotbal.sip": 400, "ltgtruri.sip": 400, "lwsruri.sip": 400,
        "lwsstart.sip": 400, "trws.sip": 400,  // "may reject as malformed"
        "escruri.sip": 400,
        "baddate.sip": 400,  // "may reject"
        "regbadct.sip": 400, "badaspec.sip": 400, "baddn.sip": 400,
        "badvers.sip": 505,
        "mismatch01.sip": 400,
        "mismatch02.sip": 400,  // RFC 4475 §3.1.2.18: 501, "400 acceptable"
        "bigcode.sip": nil,  // a response
        // RFC 4475 §3.2-3.4: transaction layer, application layer, backward compatibility.
        "badbranch.sip": 200,  // OPTIONS; a bare magic cookie branch falls back to RFC 2543 matching
        "insuf.sip": nil,  // no Call-ID, From, To: nothing to build a response from
        "unkscm.sip": 416, "novelsc.sip": 416,
        "unksm2.sip": 405,  // REGISTER
        "bext01.sip": 420, "invut.sip": 415,
        "regaut01.sip": 405,  // REGISTER
        "multi01.sip": 400, "mcl01.sip": 400,
        "bcast.sip": nil,  // a response
        "zeromf.sip": 200,  // Max-Forwards 0 is only a proxy's concern
        "cparam01.sip": 405, "cparam02.sip": 405, "regescrt.sip": 405,  // REGISTER
        "sdp01.sip": 406,
        "inv2543.sip": 200,  // RFC 2543 INVITE answered
        "extra/test.sip": nil,  // no Via, no CSeq
        // RFC 5118.
        "ipv6-good.sip": 405, "port-ambiguous.sip": 405, "port-unambiguous.sip": 405,  // REGISTER
        "ipv6-bad.sip": 400,
        "via-received-param-with-delim.sip": 481,  // BYE outside any dialog
        "via-received-param-no-delim.sip": 200,  // OPTIONS
        "mult-ip-in-header.sip": 481,  // BYE outside any dialog
        "ipv6-in-sdp.sip": 488, "ipv4-mapped-ipv6.sip": 488,  // G726 only: no codec we take
        "mult-ip-in-sdp.sip": 200,
        "ipv6-bug-abnf-3-colons.sip": 200, "ipv6-correct-abnf-2-colons.sip": 200  // OPTIONS
    ]

    @Test func corpusIsPresent() {
        #expect(Self.corpus.count >= 61, "corpus missing under \(ConformanceCorpus.path(""))")
    }

    @Test(arguments: corpus)
    func answeredAsTheRFCExpects(_ c: ConformanceCorpus.Case) async throws {
        let message = c.bytes
        try #require(!message.isEmpty, "missing \(c.path)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        _ = await agent.answering()
        let probe = try UDPProbe()
        let target = agent.local.address.port
        probe.send(message, to: target)
        // The loop handles datagrams in order: whatever answers the torture message comes
        // before the 200 to this OPTIONS.
        let optionsCallID = "after-\(UUID().uuidString)@127.0.0.1"
        probe.send(Array(options(to: target, from: probe.port, callID: optionsCallID).utf8), to: target)
        var statuses: [Int] = []
        var optionsAnswered = false
        while !optionsAnswered, let datagram = await probe.receive(timeout: 3) {
            // Read the status line by hand: an answer to a broken request copies its broken
            // header fields, so it need not parse.
            let text = String(decoding: datagram, as: UTF8.self)
            let status = text.split(separator: "\r\n", maxSplits: 1).first?.split(separator: " ").dropFirst().first
                .flatMap { Int($0) }
            if text.contains(optionsCallID) {
                optionsAnswered = status == 200
            } else if let status {
                statuses.append(status)
            } else {
                Issue.record("\(c.file): not a response: \(text)")
            }
        }
        #expect(optionsAnswered, "\(c.file): the agent stopped serving (no 200 to OPTIONS)")
        guard let want = Self.expected[c.file] else {
            Issue.record("\(c.file): no expectation recorded; we answered \(statuses)")
            return
        }
        #expect(
            statuses.first(where: { $0 >= 200 }) == want,
            "\(c.file) (\(c.section), \(c.expected)): answered \(statuses)")
        #expect(!statuses.contains(where: { $0 < 100 || $0 > 699 }))
    }

    private func options(to port: Int, from local: Int, callID: String) -> String {
        [
            "OPTIONS sip:probe@127.0.0.1:\(port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(local);branch=z9hG4bK\(UUID().uuidString.prefix(8))",
            "Max-Forwards: 70",
            "From: <sip:probe@127.0.0.1:\(local)>;tag=probe",
            "To: <sip:probe@127.0.0.1:\(port)>",
            "Call-ID: \(callID)",
            "CSeq: 1 OPTIONS",
            "Content-Length: 0",
            "", ""
        ].joined(separator: "\r\n")
    }
}
