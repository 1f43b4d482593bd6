import Testing

@testable import SIP

private let allow = SIPHeader(.allow, "INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO, REFER, NOTIFY")
private let acceptSDP = SIPHeader(.accept, "application/sdp")
private let sdpBody =
    "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"

/// One request and what RFC 3261 §8.2 validation answers it with (nil status: it passes).
struct ValidationCase: Sendable, CustomStringConvertible {
    var description: String
    var method = "INVITE"
    var uri = "sip:bob@example.com"
    var headers: [String] = []
    var body = ""
    var prack: SIPUserAgentConfiguration.PRACKPolicy = .supported
    var sessionTimer = true
    var status: Int?
    var responseHeaders: [SIPHeader] = []

    func request() throws -> SIPMessage {
        var lines = [
            "\(method) \(uri) SIP/2.0",
            "Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK74bf9",
            "Max-Forwards: 70",
            "From: <sip:alice@example.com>;tag=9fxced76sl",
            "To: <sip:bob@example.com>",
            "Call-ID: 3848276298220188511@example.com",
            "CSeq: 1 \(method)"
        ]
        lines += headers
        lines.append("Content-Length: \(body.utf8.count)")
        return try SIPMessage.parse(Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8))
    }
}

private let validationCases: [ValidationCase] = [
    .init(description: "plain INVITE passes", status: nil),
    .init(
        description: "INVITE with SDP passes", headers: ["Content-Type: application/sdp"], body: sdpBody, status: nil),
    .init(description: "sips passes", uri: "sips:bob@example.com", status: nil),
    .init(description: "tel passes", method: "OPTIONS", uri: "tel:+15551234", status: nil),
    .init(description: "every allowed method passes", method: "INFO", status: nil),
    // §8.2.2.1
    .init(description: "mailto is 416", uri: "mailto:bob@example.com", status: 416),
    .init(description: "urn is 416", uri: "urn:service:sos", status: 416),
    .init(description: "416 comes before 405", method: "REGISTER", uri: "im:bob@example.com", status: 416),
    // §8.2.1
    .init(
        description: "REGISTER is 405", method: "REGISTER", uri: "sip:example.com", status: 405,
        responseHeaders: [allow]),
    .init(description: "SUBSCRIBE is 405", method: "SUBSCRIBE", status: 405, responseHeaders: [allow]),
    .init(description: "REFER passes (its dialog decides, RFC 3515)", method: "REFER", status: nil),
    .init(description: "NOTIFY passes (its subscription decides)", method: "NOTIFY", status: nil),
    .init(description: "MESSAGE is 405", method: "MESSAGE", status: 405, responseHeaders: [allow]),
    .init(description: "unknown method is 501", method: "FROBNICATE", status: 501, responseHeaders: [allow]),
    .init(description: "methods are case-sensitive", method: "invite", status: 501, responseHeaders: [allow]),
    // §8.2.2.3
    .init(
        description: "Require: foo is 420", headers: ["Require: foo"], status: 420,
        responseHeaders: [SIPHeader(.unsupported, "foo")]),
    .init(
        description: "only the unknown tags are listed", headers: ["Require: foo, 100rel", "Require: bar"], status: 420,
        responseHeaders: [SIPHeader(.unsupported, "foo, bar")]),
    .init(description: "Require: 100rel, timer passes", headers: ["Require: 100rel, timer"], status: nil),
    .init(description: "option tags compare case-insensitively", headers: ["Require: TIMER, 100REL"], status: nil),
    .init(
        description: "replaces is unsupported: nothing handles Replaces", headers: ["Require: timer, replaces"],
        status: 420,
        responseHeaders: [SIPHeader(.unsupported, "replaces")]),
    .init(description: "Proxy-Require is not ours to check", headers: ["Proxy-Require: foo"], status: nil),
    .init(
        description: "100rel is unsupported when PRACK is off", headers: ["Require: 100rel"], prack: .disabled,
        status: 420,
        responseHeaders: [SIPHeader(.unsupported, "100rel")]),
    .init(
        description: "timer is unsupported without session timers", headers: ["Require: timer"], sessionTimer: false,
        status: 420, responseHeaders: [SIPHeader(.unsupported, "timer")]),
    .init(
        description: "BYE with Require: foo is 420", method: "BYE", headers: ["Require: foo"], status: 420,
        responseHeaders: [SIPHeader(.unsupported, "foo")]),
    .init(description: "CANCEL skips Require", method: "CANCEL", headers: ["Require: foo"], status: nil),
    .init(description: "ACK skips Require", method: "ACK", headers: ["Require: foo"], status: nil),
    .init(
        description: "420 comes before 415", headers: ["Require: foo", "Content-Type: text/plain"], body: "hi",
        status: 420,
        responseHeaders: [SIPHeader(.unsupported, "foo")]),
    // §8.2.3
    .init(
        description: "text/plain body is 415", headers: ["Content-Type: text/plain"], body: "hello", status: 415,
        responseHeaders: [acceptSDP]),
    .init(description: "body without Content-Type is 415", body: sdpBody, status: 415, responseHeaders: [acceptSDP]),
    .init(
        description: "UPDATE with text/plain is 415", method: "UPDATE", headers: ["Content-Type: text/plain"],
        body: "x",
        status: 415, responseHeaders: [acceptSDP]),
    .init(
        description: "INFO bodies are the application's", method: "INFO",
        headers: ["Content-Type: application/dtmf-relay"],
        body: "Signal=5\r\nDuration=160\r\n", status: nil),
    .init(
        description: "Content-Type parameters and case are ignored",
        headers: ["Content-Type: Application/SDP ; charset=utf-8"], body: sdpBody, status: nil),
    .init(description: "text/plain header without a body passes", headers: ["Content-Type: text/plain"], status: nil),
    .init(
        description: "gzip encoding is 415", headers: ["Content-Type: application/sdp", "Content-Encoding: gzip"],
        body: sdpBody, status: 415, responseHeaders: [SIPHeader("Accept-Encoding", "identity")]),
    .init(
        description: "identity encoding passes", headers: ["Content-Type: application/sdp", "e: Identity"],
        body: sdpBody,
        status: nil),
    // RFC 3261 §21.4.7
    .init(
        description: "Accept: text/html is 406", headers: ["Accept: text/html"], status: 406,
        responseHeaders: [acceptSDP]),
    .init(
        description: "Accept listing SDP passes", headers: ["Accept: text/html, application/sdp;level=1"], status: nil),
    .init(description: "Accept: application/* passes", headers: ["Accept: application/*"], status: nil),
    .init(description: "Accept: */* passes", headers: ["Accept: */*"], status: nil),
    .init(description: "Accept compares case-insensitively", headers: ["Accept: APPLICATION/SDP"], status: nil),
    .init(description: "Accept only matters for INVITE", method: "OPTIONS", headers: ["Accept: text/html"], status: nil)
]

@Suite
struct RequestValidationUnitTests {
    @Test("validationFailure", arguments: validationCases)
    func validation(_ c: ValidationCase) throws {
        var configuration = SIPUserAgentConfiguration(prack: c.prack)
        if !c.sessionTimer { configuration.sessionTimer = nil }
        // Not started: no socket is opened.
        let ua = try SIPUserAgent(configuration: configuration)
        let failure = ua.validationFailure(try c.request())
        #expect(failure?.status == c.status)
        #expect(failure?.headers ?? [] == c.responseHeaders)
        #expect(ua.localAddresses.isEmpty)
    }

    @Test func supportedOptionTagsFollowTheConfiguration() throws {
        #expect(try SIPUserAgent().supportedOptionTags == ["100rel", "timer"])
        var off = SIPUserAgentConfiguration(prack: .disabled)
        off.sessionTimer = nil
        #expect(try SIPUserAgent(configuration: off).supportedOptionTags == [])
    }
}
