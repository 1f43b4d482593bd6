// HTTP/1.1 on the wire: pipelining, Connection: close, HTTP/1.0, what is refused as
// malformed (the smuggling-prone cases), and paths whose escapes are unsafe.

import ControlAPI
import Glibc
import Testing

@Sendable private func echoPath(_ request: HTTPRequest) -> HTTPResponse {
    .text(200, request.method + " " + request.path + " " + String(decoding: request.body, as: UTF8.self))
}

@Suite struct HTTPProtocolTests {
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let (server, port, _) = try startServer(handler: { request in
            // The first one is the slowest: answers must still come in request order.
            if request.path == "/1" { usleep(50_000) }  // on the server's worker thread: the slow handler under test
            return echoPath(request)
        })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.write(
            "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody"
                + "PUT /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                + "HEAD /4 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try await socket.readResponse().text == "GET /1 ")
        #expect(try await socket.readResponse().text == "POST /2 body")
        #expect(try await socket.readResponse().text == "PUT /3 abc")
        let head = try await socket.readResponse(head: true)
        #expect(head.headers["content-length"] == "8")
        let last = try await socket.readResponse()
        #expect(last.text == "GET /5 ")
        #expect(last.headers["connection"] == "close")
        #expect(await socket.isClosedByPeer())
    }

    @Test func connectionCloseAndHTTP10CloseAfterTheResponse() async throws {
        let (server, port, _) = try startServer(handler: echoPath)
        defer { server.stop() }

        let closing = try TestSocket(port: port)
        try await closing.sendRequest("GET", "/bye", headers: [("Connection", "close")])
        let response = try await closing.readResponse()
        #expect(response.status == 200 && response.headers["connection"] == "close")
        #expect(response.headers["date"]?.hasSuffix(" GMT") == true)
        #expect(await closing.isClosedByPeer())

        let old = try TestSocket(port: port)
        try await old.write("GET /old HTTP/1.0\r\n\r\n")
        #expect(try await old.readResponse().headers["connection"] == "close")
        #expect(await old.isClosedByPeer())

        let oldKeepAlive = try TestSocket(port: port)
        try await oldKeepAlive.write("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try await oldKeepAlive.readResponse().headers["connection"] == "keep-alive")
        try await oldKeepAlive.write("GET /b HTTP/1.0\r\n\r\n")
        #expect(try await oldKeepAlive.readResponse().text == "GET /b ")
    }

    @Test func handlerMayAskToClose() async throws {
        let (server, port, _) = try startServer(handler: { _ in
            HTTPResponse(
                status: 200, headers: [("Connection", "close"), ("Content-Length", "999")], body: Array("x".utf8))
        })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.sendRequest("GET", "/")
        let response = try await socket.readResponse()
        // The server's own framing wins over the handler's.
        #expect(response.headers["content-length"] == "1" && response.headers["connection"] == "close")
        #expect(await socket.isClosedByPeer())
    }

    @Test(arguments: [
        ("obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n", 400),
        (
            "both lengths",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400
        ),
        (
            "conflicting lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            400
        ),
        ("bad length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400),
        ("NUL in a value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", 400),
        ("control byte in a value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{7}b\r\n\r\n", 400),
        ("bare LF", "GET / HTTP/1.1\nHost: x\r\nX-A: 1\r\n\r\n", 400),
        ("space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("no Host", "GET / HTTP/1.1\r\nX-A: 1\r\n\r\n", 400),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("bad method", "G(E)T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("two spaces", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("raw byte in the target", "GET /caf\u{E9} HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("target not a path", "GET calls HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("not HTTP", "GET / SIP/2.0\r\nHost: x\r\n\r\n", 400),
        ("HTTP/2", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("gzip coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        ("bad chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("other expectation", "POST / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 1\r\n\r\na", 417)
    ])
    func malformedRequestIsRefusedAndClosed(name: String, raw: String, status: Int) async throws {
        let (server, port, events) = try startServer(handler: echoPath)
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.write(raw)
        let response = try await socket.readResponse()
        #expect(response.status == status, "\(name)")
        #expect(response.headers["content-type"] == "application/json", "\(name)")
        #expect(response.text.hasPrefix(#"{"error":{"code":-103,"message":"#), "\(name)")
        #expect(await socket.isClosedByPeer(), "\(name)")
        #expect(events.handledRequests.isEmpty, "\(name)")
        #expect(server.statistics.refusals(.badRequest) == 1, "\(name)")
    }

    @Test(arguments: ["/v1/sessions/%00", "/a%2Fb", "/a%2fb", "/a%5Cb", "/a\\b", "/v1/%0Asessions", "/x%7F", "/%1b[31m"]
    )
    func unsafePathIs404WithoutTheHandler(target: String) async throws {
        let (server, port, events) = try startServer(handler: echoPath)
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.sendRequest("GET", target)
        let response = try await socket.readResponse()
        #expect(response.status == 404)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.text == #"{"error":{"code":-103,"message":"no such path"}}"#)
        #expect(events.handledRequests.isEmpty)
        #expect(server.statistics.refusals(.unsafePath) == 1)
        // Not a protocol error: the connection goes on.
        try await socket.sendRequest("GET", "/fine")
        #expect(try await socket.readResponse().text == "GET /fine ")
    }

    @Test func unsafePathOnAWebSocketUpgradeIs404() async throws {
        let (server, port, events) = try startServer()
        defer { server.stop() }

        guard case .refused(let response) = try await TestWebSocket.connect(port: port, path: "/events%00") else {
            Issue.record("upgrade on an unsafe path was accepted")
            return
        }
        #expect(response.status == 404)
        #expect(events.openedConnections.isEmpty)
    }

    @Test func pathsAreDecodedWithoutDotSegments() async throws {
        let (server, port, events) = try startServer(handler: echoPath)
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        for target in ["/a/./b/../c", "/a/%2E%2E/b", "/../../etc", "/caf%C3%A9+x", "http://example.net/abs?q=1"] {
            try await socket.sendRequest("GET", target)
            #expect(try await socket.readResponse().status == 200)
        }
        #expect(events.handledRequests.map(\.path) == ["/a/c", "/b", "/etc", "/café+x", "/abs"])
        #expect(events.handledRequests.last?.query == ["q": "1"])
    }
}
