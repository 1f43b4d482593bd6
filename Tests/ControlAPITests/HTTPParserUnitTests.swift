// The parsing pieces without sockets: head boundaries, chunked bodies split anywhere,
// targets and paths, per-source keys.

@testable import ControlAPI
import Testing

@Suite struct HTTPParserUnitTests {
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
        let head = try HTTPRequestParser.parseHead(Array(
            "POST /x?y=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a:  2 \r\nContent-Length: 5, 5\r\nConnection: keep-alive, Upgrade\r\n\r\n".utf8)[...])
        #expect(head.method == "POST" && head.target == "/x?y=1" && head.minorVersion == 1)
        #expect(head.headers["x-a"] == "1, 2")
        #expect(head.body == .length(5))
        #expect(head.keepAlive && !head.wantsWebSocket && !head.expectsContinue)
        let http10 = try HTTPRequestParser.parseHead(Array("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n".utf8)[...])
        #expect(!http10.keepAlive && !http10.expectsContinue)
    }

    @Test func chunkedBodyDecodesWhenSplitAtEveryByte() throws {
        let wire = Array("4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT".utf8)
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

    @Test func targetsAndPaths() throws {
        #expect(try HTTPTarget.parse("/a/b/../c/./d?x=1&y=%20") == HTTPTarget(path: "/a/c/d", query: ["x": "1", "y": " "]))
        #expect(try HTTPTarget.parse("/%7Euser/%zz") == HTTPTarget(path: "/~user/%zz", query: [:]))
        #expect(try HTTPTarget.parse("HTTP://h:80") == HTTPTarget(path: "/", query: [:]))
        #expect(try HTTPTarget.parse("/a#frag") == HTTPTarget(path: "/a", query: [:]))
        #expect(throws: HTTPTarget.Problem.unsafePath) { try HTTPTarget.parse("/a%2F..%2Fb") }
        #expect(throws: HTTPTarget.Problem.unsafePath) { try HTTPTarget.parse("/a%09b") }
        #expect(throws: HTTPTarget.Problem.malformed) { try HTTPTarget.parse("a/b") }
        #expect(HTTPTarget.removeDotSegments("/a/b/..") == "/a/")
        #expect(HTTPTarget.removeDotSegments("/../..") == "/")
    }

    @Test func sourceKeysGroupIPv6By64() {
        #expect(HTTPServerCore.sourceKey("192.0.2.7") == "192.0.2.7")
        #expect(HTTPServerCore.sourceKey("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(HTTPServerCore.sourceKey("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64")
        #expect(HTTPServerCore.clientHost("::ffff:198.51.100.1") == "198.51.100.1")
        #expect(HTTPServerCore.clientHost("::1") == "::1")
    }
}
