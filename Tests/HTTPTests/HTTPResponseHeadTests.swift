import HTTP
import Testing

/// The client's side of the grammar: response heads read, request heads written.
struct HTTPResponseHeadTests {
    @Test func responseHeadParsing() throws {
        let head = try HTTPResponseHead.parse(
            Array(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A: 1\r\nx-a: 2\r\nX-Folded: one\r\n  two\r\nContent-Length: 7, 7"
                    .utf8))
        #expect(head.status == 200)
        #expect(head.reason == "OK")
        #expect(head.headers["content-type"] == "application/json")
        #expect(head.headers["x-a"] == "1, 2")
        #expect(head.headers["x-folded"] == "one two")
        #expect(try head.contentLength() == 7)
        #expect(throws: HTTPGrammarError.self) { try HTTPResponseHead.parse(Array("SIP/2.0 200 OK".utf8)) }
        #expect(throws: HTTPGrammarError.self) { try HTTPResponseHead.parse(Array("HTTP/1.1 2000 OK".utf8)) }
        #expect(throws: HTTPGrammarError.self) { try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nno colon".utf8)) }
        let conflicting = try HTTPResponseHead.parse(
            Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2".utf8))
        #expect(throws: HTTPGrammarError.self) { try conflicting.contentLength() }
        let chunked = try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked".utf8))
        #expect(chunked.isChunked)
    }

    @Test func requestHeadsAreWrittenAndUnsafeOnesRefused() throws {
        let head = try HTTPRequestWriter.head(
            method: "POST", target: "/v1/x?a=1", host: "h:80", headers: [("Content-Length", "0")])
        #expect(
            String(decoding: head, as: UTF8.self)
                == "POST /v1/x?a=1 HTTP/1.1\r\nHost: h:80\r\nContent-Length: 0\r\n\r\n")
        #expect(throws: HTTPGrammarError.self) {
            try HTTPRequestWriter.head(method: "P OST", target: "/", host: "h", headers: [])
        }
        #expect(throws: HTTPGrammarError.self) {
            try HTTPRequestWriter.head(method: "GET", target: "x", host: "h", headers: [])
        }
        #expect(throws: HTTPGrammarError.self) {
            try HTTPRequestWriter.head(method: "GET", target: "/", host: "h", headers: [("X", "a\r\nInjected: 1")])
        }
    }

    @Test(arguments: [(200, "OK"), (413, "Content Too Large"), (505, "HTTP Version Not Supported"), (299, "Status 299")]
    )
    func reasonPhrases(_ status: Int, _ phrase: String) {
        #expect(HTTPStatus.reasonPhrase(status) == phrase)
    }
}
