// Plain HTTP over real sockets on 127.0.0.1: routing, framing, body limits, start/stop.

import ControlAPI
import Testing

/// Echoes what the handler saw as a small text body: "METHOD path q=k:v,... body".
@Sendable private func echo(_ request: HTTPRequest) -> HTTPResponse {
    let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    let body = String(decoding: request.body, as: UTF8.self)
    return .text(200, "\(request.method) \(request.path) q=\(query) \(body)")
}

@Suite struct HTTPServerTests {
    @Test func getAndPostReachTheHandlerWithPathQueryAndBody() async throws {
        let (server, port, events) = try startServer(handler: echo)
        defer { server.stop() }

        // Two requests on one connection: keep-alive works when responses carry Content-Length.
        let socket = try TestSocket(port: port)
        try await socket.sendRequest(
            "GET", "/calls/42?state=ringing&name=J%C3%BCrgen+K&empty=", headers: [("X-Trace", "abc")])
        let get = try await socket.readResponse()
        #expect(get.status == 200)
        #expect(get.text == "GET /calls/42 q=empty:,name:Jürgen K,state:ringing ")
        #expect(get.headers["content-length"] == String(get.body.count))
        #expect(get.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(get.headers["connection"]?.lowercased() == "keep-alive")

        try await socket.sendRequest(
            "POST", "/calls", headers: [("Content-Type", "application/json")], body: Array(#"{"to":"+15551234"}"#.utf8))
        let post = try await socket.readResponse()
        #expect(post.status == 200)
        #expect(post.text == #"POST /calls q= {"to":"+15551234"}"#)

        let seen = events.handledRequests
        try #require(seen.count == 2)
        #expect(seen[0].headers["x-trace"] == "abc")
        #expect(seen[0].remoteAddress == "127.0.0.1")
        #expect(seen[0].remotePort > 0)
        #expect(seen[1].headers["content-type"] == "application/json")
    }

    @Test func handlerJSON404() async throws {
        let (server, port, _) = try startServer()
        defer { server.stop() }

        let response = try await httpRequest(port: port, "GET", "/no/such/thing")
        #expect(response.status == 404)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.text == #"{"error":{"code":-404,"message":"not found"}}"#)
    }

    @Test func chunkedBodyWithinTheLimitIsDecoded() async throws {
        let (server, port, _) = try startServer(handler: echo)
        defer { server.stop() }

        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 20_000)
        let response = try await httpRequest(port: port, "PUT", "/blob", body: body, chunked: true)
        #expect(response.status == 200)
        #expect(response.text == "PUT /blob q= " + String(repeating: "x", count: 20_000))
    }

    @Test func oversizedBodyGets413WithoutCallingTheHandler() async throws {
        let (server, port, events) = try startServer(maxBodyBytes: 1024, handler: echo)
        defer { server.stop() }
        let expected = #"{"error":{"code":-103,"message":"request body too large"}}"#

        // Refused on Content-Length alone.
        let byLength = try await httpRequest(port: port, "POST", "/calls", body: [UInt8](repeating: 1, count: 1025))
        #expect(byLength.status == 413)
        #expect(byLength.headers["content-type"] == "application/json")
        #expect(byLength.text == expected)
        #expect(byLength.headers["connection"]?.lowercased() == "close")

        // Chunked: no length up front, refused once the count passes the limit.
        let chunked = try await httpRequest(
            port: port, "POST", "/calls", body: [UInt8](repeating: 2, count: 50_000), chunked: true)
        #expect(chunked.status == 413)
        #expect(chunked.text == expected)

        // Exactly the limit is fine.
        let atLimit = try await httpRequest(
            port: port, "POST", "/calls", body: [UInt8](repeating: UInt8(ascii: "a"), count: 1024))
        #expect(atLimit.status == 200)
        #expect(events.handledRequests.count == 1)
    }

    @Test func headRequestGetsLengthButNoBody() async throws {
        let (server, port, _) = try startServer(handler: { _ in .text(200, "twelve bytes") })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.sendRequest("HEAD", "/status")
        let head = try await socket.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "12")
        // The next response starts right after the head: no body bytes were sent.
        try await socket.sendRequest("GET", "/status")
        #expect(try await socket.readResponse().text == "twelve bytes")
    }

    @Test func portInUseThrowsAClearError() throws {
        let (server, port, _) = try startServer()
        defer { server.stop() }

        let second = HTTPServer(
            configuration: HTTPServerConfiguration(listen: "127.0.0.1:\(port)"),
            handler: { _ in .text(200, "") }, webSocket: { _ in .accept(group: "test") },
            onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        let error = #expect(throws: HTTPServerError.self) { try second.start() }
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
        #expect(second.port == nil)
    }

    @Test func stopIsIdempotentAndFreesThePort() throws {
        let (server, port, _) = try startServer()
        #expect(server.port == port)
        server.stop()
        server.stop()
        #expect(server.port == nil)
        #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(throws: (any Error).self) { try TestSocket(port: port) }

        let neverStarted = HTTPServer(
            configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"),
            handler: { _ in .text(200, "") }, webSocket: { _ in .accept(group: "test") },
            onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        neverStarted.stop()
    }
}
