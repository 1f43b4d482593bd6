// The server's side of the grammar without sockets: head boundaries, fields and framing,
// refusals with their status, chunked bodies split anywhere.

import HTTP
import Testing

@Suite struct HTTPRequestParserTests {
    @Test func headLengthFindsTheBlankLineWhereverTheSearchResumes() {
        let head = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY".utf8)
        // `from`: how many bytes an earlier search looked at without finding the end.
        for from in 0..<(head.count - 4) {
            #expect(HTTPRequestParser.headLength(head[...], from: from) == head.count - 4)
        }
        #expect(HTTPRequestParser.headLength(Array("GET / HTTP/1.1\r\n\r".utf8)[...], from: 0) == nil)
        #expect(HTTPRequestParser.headLength(Array("\r\r\n\r\n".utf8)[...], from: 0) == 5)
    }

    @Test func headFieldsAreJoinedAndFramingRead() throws {
        let head = try HTTPRequestParser.parseHead(
            Array(
                "POST /x?y=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a:  2 \r\nContent-Length: 5, 5\r\nConnection: keep-alive, Upgrade\r\n\r\n"
                    .utf8)[...])
        #expect(head.method == "POST" && head.target == "/x?y=1" && head.minorVersion == 1)
        #expect(head.headers["x-a"] == "1, 2")
        #expect(head.body == .length(5))
        #expect(head.keepAlive && !head.wantsWebSocket && !head.expectsContinue)
        let http10 = try HTTPRequestParser.parseHead(Array("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n".utf8)[...])
        #expect(!http10.keepAlive && !http10.expectsContinue)
    }

    @Test func chunkedBodyDecodesWhenSplitAtEveryByte() throws {
        let wire = Array(
            "4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT".utf8)
        var decoder = ChunkedBodyDecoder(maxBodyBytes: 100, maxTrailerBytes: 100)
        var input = ByteBuffer()
        var fed = 0
        var done = false
        while !done, fed < wire.count {
            [wire[fed]].withUnsafeBytes { input.append($0) }
            fed += 1
            done = try decoder.decode(&input)
        }
        #expect(done && fed == wire.count - 4)
        // What follows the body (the next pipelined request) is left in the buffer.
        wire[fed...].withUnsafeBytes { input.append($0) }
        #expect(try decoder.decode(&input))
        #expect(String(decoding: decoder.body, as: UTF8.self) == "Wikipedia in \r\n\r\nchunks.")
        #expect(String(decoding: input.unread, as: UTF8.self) == "NEXT")

        var small = ChunkedBodyDecoder(maxBodyBytes: 3, maxTrailerBytes: 100)
        var big = ByteBuffer()
        Array("4\r\nWiki\r\n0\r\n\r\n".utf8).withUnsafeBytes { big.append($0) }
        #expect(throws: HTTPRequestError(413, "request body too large")) { try small.decode(&big) }
    }

    /// Heads the server refuses, with the status it answers (request smuggling and RFC 9112 §3.2).
    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n", 400, "obsolete line folding in a header field"),
        ("GET / HTTP/1.1\nHost: h\r\n", 400, "bare LF in the request head"),
        ("GET / HTTP/1.1\rHost: h\r\n", 400, "bare CR in the request head"),
        ("GET / HTTP/1.1\r\nHost : h\r\n", 400, "malformed header field"),
        ("GET / HTTP/1.1\r\n", 400, "missing Host header"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n", 400, "more than one Host header"),
        ("GET / HTTP/2.0\r\nHost: h\r\n", 505, "HTTP version not supported"),
        ("G@T / HTTP/1.1\r\nHost: h\r\n", 400, "malformed method"),
        (
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n", 400,
            "both Content-Length and Transfer-Encoding"
        ),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n", 501, "unsupported transfer coding"),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 2\r\n", 400, "malformed Content-Length"),
        ("POST / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\n", 417, "unsupported expectation")
    ])
    func refusedHeads(_ head: String, _ status: Int, _ message: String) {
        #expect(throws: HTTPRequestError(status, message)) {
            try HTTPRequestParser.parseHead(Array((head + "\r\n").utf8)[...])
        }
    }

    @Test func aWebSocketUpgradeIsRecognisedAndEndsKeepAlive() throws {
        let head = try HTTPRequestParser.parseHead(
            Array(
                "GET /v1/events HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
                    .utf8)[...])
        #expect(head.wantsWebSocket && !head.keepAlive)
    }
}
