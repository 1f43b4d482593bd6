// The server's parsing pieces without sockets: targets and paths, per-source keys (the
// request grammar itself is tested in HTTPTests).

import Testing

@testable import ControlAPI

@Suite struct HTTPParserUnitTests {
    @Test func targetsAndPaths() throws {
        #expect(
            try HTTPTarget.parse("/a/b/../c/./d?x=1&y=%20") == HTTPTarget(path: "/a/c/d", query: ["x": "1", "y": " "]))
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
