import Testing

@testable import SIP

/// Wire bytes from text; `\n` stays as written so LF-only messages can be built too.
private func wire(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A request with `body` and a Content-Length header spelled `lengthHeader`.
private func request(body: String, lengthHeader: String = "Content-Length", eol: String = "\r\n") -> String {
    let lines = [
        "INVITE sip:bob@example.com SIP/2.0",
        "Via: SIP/2.0/TCP 192.0.2.1:5060;branch=z9hG4bK74bf9",
        "From: <sip:alice@example.com>;tag=9fxced76sl",
        "To: <sip:bob@example.com>",
        "Call-ID: 3848276298220188511@example.com",
        "CSeq: 1 INVITE",
        "\(lengthHeader): \(body.utf8.count)"
    ]
    return lines.joined(separator: eol) + eol + eol + body
}

private let sdpBody =
    "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"

/// Messages a stream can carry, each of which must come out of the framer byte for byte.
private let framedMessages: [(String, String)] = [
    ("CRLF with SDP body", request(body: sdpBody)),
    ("empty body", request(body: "")),
    ("compact l:", request(body: "hello", lengthHeader: "l")),
    ("upper-case compact L with space before colon", request(body: "hello", lengthHeader: "L ")),
    ("lower-case long name", request(body: "abc", lengthHeader: "content-length")),
    ("body holding CRLFCRLF", request(body: "a\r\n\r\nb\r\n\r\n")),
    ("body holding LFLF", request(body: "x\n\ny")),
    ("LF-only line ends", request(body: "hi\n", eol: "\n")),
    ("LF-only, empty body", request(body: "", eol: "\n")),
    ("response", "SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\nContent-Length: 4\r\n\r\nbody")
]

struct SIPStreamFramerUnitTests {
    @Test("a message split at every byte boundary reassembles", arguments: framedMessages)
    func everySplit(_ name: String, _ text: String) throws {
        let bytes = wire(text)
        for cut in 0...bytes.count {
            var framer = SIPStreamFramer()
            let first = try framer.append(bytes[..<cut])
            let second = try framer.append(bytes[cut...])
            #expect(first + second == [bytes], "cut at \(cut)")
            #expect(first.isEmpty == (cut < bytes.count), "cut at \(cut)")
            #expect(framer.pending == 0)
        }
    }

    @Test("a message fed one byte at a time comes out once, at its last byte", arguments: framedMessages)
    func byteByByte(_ name: String, _ text: String) throws {
        let bytes = wire(text)
        var framer = SIPStreamFramer()
        for (i, b) in bytes.enumerated() {
            let out = try framer.append([b])
            if i == bytes.count - 1 {
                #expect(out == [bytes])
            } else {
                #expect(out.isEmpty, "early output at byte \(i)")
                #expect(framer.pending == i + 1)
            }
        }
    }

    @Test func severalMessagesWithKeepAlivesInOneRead() throws {
        let a = wire(request(body: sdpBody))
        let b = wire(request(body: "", lengthHeader: "l"))
        let c = wire(request(body: "a\r\n\r\nb"))
        // RFC 5626 §3.5.1: CRLFCRLF ping and CRLF pong between messages.
        let stream = wire("\r\n\r\n") + a + wire("\r\n") + b + wire("\r\n\r\n\r\n") + c + wire("\r\n\r\n")
        var framer = SIPStreamFramer()
        #expect(try framer.append(stream) == [a, b, c])
        #expect(framer.pending == 0)
        // Three double-CRLF runs want a pong each; the lone CRLF after `a` is a pong itself.
        #expect(framer.pings == 3)
    }

    @Test(
        "double-CRLF pings are told from single-CRLF pongs",
        arguments: [
            ("\r\n\r\n", 1), ("\r\n", 0), ("\n\n", 1), ("\r", 0), ("\r\n\r\n\r\n\r\n", 1)
        ])
    func pings(_ text: String, _ expected: Int) throws {
        var framer = SIPStreamFramer()
        _ = try framer.append(wire(text))
        #expect(framer.pings == expected)
        _ = try framer.append(wire(request(body: "")))
        #expect(framer.pings == 0)
    }

    @Test func keepAlivesAloneProduceNothingAndAreNotBuffered() throws {
        var framer = SIPStreamFramer()
        for ping in ["\r\n\r\n", "\r\n", "\n", "\r"] {
            #expect(try framer.append(wire(ping)).isEmpty)
            #expect(framer.pending == 0)
        }
    }

    @Test func partialTailStaysPendingUntilCompleted() throws {
        let a = wire(request(body: "one"))
        let b = wire(request(body: "second body"))
        var framer = SIPStreamFramer()
        let half = b.count / 2
        #expect(try framer.append(a + b[..<half]) == [a])
        #expect(framer.pending == half)
        #expect(try framer.append(b[half...]) == [b])
        #expect(framer.pending == 0)
    }

    @Test func headerOnlyWaitsForTheWholeBody() throws {
        let bytes = wire(request(body: "0123456789"))
        var framer = SIPStreamFramer()
        #expect(try framer.append(bytes.dropLast(10)).isEmpty)
        #expect(try framer.append(bytes.suffix(10).dropLast()).isEmpty)
        #expect(try framer.append(bytes.suffix(1)) == [bytes])
    }

    @Test(
        "bad or missing Content-Length is an error",
        arguments: [
            (
                "no Content-Length", "INVITE sip:b@h SIP/2.0\r\nCall-ID: x\r\n\r\n",
                SIPStreamFramer.FramingError.missingContentLength
            ),
            (
                "X- prefixed name is not Content-Length", "INVITE sip:b@h SIP/2.0\r\nX-Content-Length: 0\r\n\r\n",
                .missingContentLength
            ),
            ("negative", "INVITE sip:b@h SIP/2.0\r\nContent-Length: -5\r\n\r\n", .badContentLength),
            ("minus zero", "INVITE sip:b@h SIP/2.0\r\nContent-Length: -0\r\n\r\n", .badContentLength),
            ("plus sign", "INVITE sip:b@h SIP/2.0\r\nContent-Length: +5\r\n\r\nhello", .badContentLength),
            ("garbage", "INVITE sip:b@h SIP/2.0\r\nContent-Length: abc\r\n\r\n", .badContentLength),
            ("empty", "INVITE sip:b@h SIP/2.0\r\nContent-Length:\r\n\r\n", .badContentLength),
            ("two numbers", "INVITE sip:b@h SIP/2.0\r\nContent-Length: 5 5\r\n\r\n", .badContentLength),
            ("hex", "INVITE sip:b@h SIP/2.0\r\nl: 0x10\r\n\r\n", .badContentLength),
            (
                "overflows Int", "INVITE sip:b@h SIP/2.0\r\nContent-Length: 99999999999999999999\r\n\r\n",
                .badContentLength
            ),
            ("twice", "INVITE sip:b@h SIP/2.0\r\nContent-Length: 0\r\nl: 0\r\n\r\n", .badContentLength)
        ])
    func contentLengthErrors(_ name: String, _ text: String, _ expected: SIPStreamFramer.FramingError) {
        var framer = SIPStreamFramer()
        #expect(throws: expected) { try framer.append(wire(text)) }
    }

    @Test func foldedHeaderLineIsNotReadAsContentLength() throws {
        // ` l: 9` continues Subject; only the real Content-Length frames the message.
        let bytes = wire("MESSAGE sip:b@h SIP/2.0\r\nSubject: note\r\n l: 9\r\nContent-Length: 2\r\n\r\nhi")
        var framer = SIPStreamFramer()
        #expect(try framer.append(bytes) == [bytes])
    }

    @Test func headerOverTheLimitFailsBeforeItsEndArrives() throws {
        var framer = SIPStreamFramer(maxHeaderBytes: 64)
        let line = wire("INVITE sip:bob@example.com SIP/2.0\r\nSubject: ")
        #expect(try framer.append(line).isEmpty)
        // Up to the limit we keep waiting; one byte past it (still no empty line) is an error.
        #expect(try framer.append([UInt8](repeating: 0x61, count: 64 - line.count)).isEmpty)
        #expect(framer.pending == 64)
        #expect(throws: SIPStreamFramer.FramingError.headerTooLarge) { try framer.append([0x61]) }
    }

    @Test func completeHeaderOverTheLimitIsTooLarge() {
        let bytes = wire(request(body: ""))
        var framer = SIPStreamFramer(maxHeaderBytes: bytes.count - 1)
        #expect(throws: SIPStreamFramer.FramingError.headerTooLarge) { try framer.append(bytes) }
        var exact = SIPStreamFramer(maxHeaderBytes: bytes.count)
        #expect((try? exact.append(bytes)) == [bytes])
    }

    @Test("body limit", arguments: [(100, true), (101, false)])
    func bodyLimit(_ length: Int, _ fits: Bool) throws {
        let head = wire("INFO sip:b@h SIP/2.0\r\nContent-Length: \(length)\r\n\r\n")
        var framer = SIPStreamFramer(maxBodyBytes: 100)
        if fits {
            #expect(try framer.append(head).isEmpty)
            #expect(try framer.append([UInt8](repeating: 0x42, count: length)).count == 1)
        } else {
            // Refused from the header alone, before any of the body is buffered.
            #expect(throws: SIPStreamFramer.FramingError.bodyTooLarge(length)) { try framer.append(head) }
        }
    }

    @Test func framedMessageParsesAsAStreamMessage() throws {
        var framer = SIPStreamFramer()
        let out = try framer.append(wire(request(body: sdpBody)))
        let message = try SIPMessage.parse(try #require(out.first), framing: .stream)
        #expect(message.body == wire(sdpBody))
        #expect(message.method == "INVITE")
    }
}

/// Bytes that cannot start a SIP message end the stream at once (a TLS ClientHello on the
/// SIP TCP port used to wait forever).
@Suite struct SIPStreamFramerNotSIPTests {
    @Test(
        "refused at once",
        arguments: [
            ("TLS ClientHello", [0x16, 0x03, 0x01, 0x00, 0xf8, 0x01] as [UInt8]),
            ("binary", [0x00, 0x01, 0x02]),
            ("HTTP request line", Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
            ("no start line within 4 KiB", Array(String(repeating: "A", count: 4096).utf8))
        ])
    func refused(_ name: String, _ bytes: [UInt8]) {
        var framer = SIPStreamFramer()
        #expect(throws: SIPStreamFramer.FramingError.notSIP, "\(name)") { _ = try framer.append(bytes) }
    }

    @Test(
        "a SIP start line in pieces is waited for",
        arguments: [
            "INVITE sip:bob@example.com SIP/2.0\r\n", "SIP/2.0 200 OK\r\n", "OPTIONS sip:x SIP/7.0\r\n"
        ])
    func waited(_ line: String) throws {
        var framer = SIPStreamFramer()
        let bytes = Array(line.utf8)
        #expect(try framer.append(bytes.prefix(5)).isEmpty)
        #expect(try framer.append(bytes.dropFirst(5)).isEmpty)
        #expect(framer.pending == bytes.count)
    }
}
