// The bounds that keep unauthenticated clients from tying up the server: head and body
// timeouts, head and body sizes, connection caps, worker queue, accept back-off. Short
// configured timeouts keep these fast; every wait is for a condition.

import Dispatch
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import ControlAPI

@Suite struct HTTPBoundsTests {
    @Test func slowlorisConnectionsAreCutAfterTheHeaderTimeoutWhileOthersAreServed() async throws {
        let (server, port, events) = try startServer(
            configure: {
                $0.headerTimeout = 0.3
                $0.maxConnectionsPerSource = 1000
            }, handler: { _ in .text(200, "fast") })
        defer { server.stop() }

        let slow = try (0..<200).map { _ in try TestSocket(port: port) }
        for socket in slow { try await socket.write("G") }
        // Every one accepted (on a loaded machine the first may already be cut when the last
        // is accepted: 0.3 s is short).
        #expect(
            await eventually(timeout: 5) {
                let s = server.statistics
                return s.openConnections + s.refusals(.headerTimeout) == 200
            })

        // All 200 are open (or cut) and dribbling; a normal client is served all the same.
        let response = try await httpRequest(port: port, "GET", "/fast")
        #expect(response.status == 200 && response.text == "fast")

        // One more byte each, again and again: the head never completes, and the timeout is
        // for the whole head, not for each byte.
        let allCut = await eventually(timeout: 10, pollInterval: 0.02) {
            for socket in slow { try? await socket.write("E") }
            return server.statistics.refusals(.headerTimeout) >= 200
        }
        #expect(allCut)
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 0 })
        for socket in slow { #expect(await socket.isClosedByPeer()) }
        #expect(events.handledRequests.map(\.path) == ["/fast"])
    }

    @Test func aConnectionThatSendsNothingIsClosedAfterTheHeaderTimeout() async throws {
        let (server, port, _) = try startServer(configure: { $0.headerTimeout = 0.3 })
        defer { server.stop() }

        let silent = try TestSocket(port: port)
        #expect(await silent.isClosedByPeer())
        #expect(server.statistics.refusals(.headerTimeout) == 1)
    }

    @Test func keepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let (server, port, _) = try startServer(configure: { $0.idleTimeout = 0.3 }, handler: { _ in .text(200, "ok") })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.sendRequest("GET", "/one")
        #expect(try await socket.readResponse().headers["connection"] == "keep-alive")
        #expect(await socket.isClosedByPeer())
        #expect(server.statistics.idleClosed == 1)
        #expect(server.statistics.refusals(.headerTimeout) == 0)
    }

    @Test func stalledBodyGets408AfterTheBodyTimeout() async throws {
        let (server, port, events) = try startServer(configure: { $0.bodyTimeout = 0.3 })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.write("POST /calls HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        let response = try await socket.readResponse()
        #expect(response.status == 408)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["connection"] == "close")
        #expect(await socket.isClosedByPeer())
        #expect(server.statistics.refusals(.bodyTimeout) == 1)
        #expect(events.handledRequests.isEmpty)
    }

    @Test func oversizedHeadGets431() async throws {
        let (server, port, events) = try startServer(configure: { $0.maxHeaderBytes = 1024 })
        defer { server.stop() }

        // A head still arriving, already past the limit.
        let growing = try TestSocket(port: port)
        try await growing.write("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 2000))
        let first = try await growing.readResponse()
        #expect(first.status == 431)
        #expect(first.text.contains("request head too large"))
        #expect(await growing.isClosedByPeer())

        // A complete head over the limit.
        let complete = try await httpRequest(
            port: port, "GET", "/", headers: [("X-Big", String(repeating: "b", count: 1500))])
        #expect(complete.status == 431)
        #expect(server.statistics.refusals(.headerTooLarge) == 2)

        // Just under the limit is fine.
        #expect(
            try await httpRequest(port: port, "GET", "/", headers: [("X-Big", String(repeating: "c", count: 800))])
                .status
                == 404)
        #expect(events.handledRequests.count == 1)
    }

    @Test func oversizedBodiesAreCounted() async throws {
        let (server, port, events) = try startServer(maxBodyBytes: 100)
        defer { server.stop() }

        #expect(try await httpRequest(port: port, "POST", "/", body: [UInt8](repeating: 1, count: 101)).status == 413)
        #expect(
            try await httpRequest(port: port, "POST", "/", body: [UInt8](repeating: 1, count: 500), chunked: true)
                .status
                == 413)
        #expect(server.statistics.refusals(.bodyTooLarge) == 2)
        #expect(events.handledRequests.isEmpty)
    }

    @Test func expectContinueGets100BeforeTheBody() async throws {
        let (server, port, events) = try startServer(
            maxBodyBytes: 100,
            handler: { request in
                .text(200, "got " + String(decoding: request.body, as: UTF8.self))
            })
        defer { server.stop() }

        let socket = try TestSocket(port: port)
        try await socket.write("POST /calls HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let interim = try await socket.read(through: Array("\r\n\r\n".utf8))
        #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        try await socket.write("hello")
        let response = try await socket.readResponse()
        #expect(response.status == 200 && response.text == "got hello")

        // Too large: 413 at once, no 100, and the client never has to send the body.
        let refused = try TestSocket(port: port)
        try await refused.write(
            "POST /calls HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n")
        let tooLarge = try await refused.readResponse()
        #expect(tooLarge.status == 413)
        #expect(await refused.isClosedByPeer())
        #expect(events.handledRequests.count == 1)
    }

    @Test func perSourceCapClosesExtraConnectionsAtAccept() async throws {
        let (server, port, _) = try startServer(
            configure: { $0.maxConnectionsPerSource = 3 }, handler: { _ in .text(200, "ok") })
        defer { server.stop() }

        let held = try (0..<3).map { _ in try TestSocket(port: port) }
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 3 })
        let extra = try TestSocket(port: port)
        #expect(await extra.isClosedByPeer())
        #expect(await eventually(timeout: 5) { server.statistics.refusals(.perSourceCap) == 1 })
        #expect(server.statistics.refusals(.tooManyConnections) == 0)

        // The ones already open are served as usual.
        try await held[0].sendRequest("GET", "/")
        #expect(try await held[0].readResponse().status == 200)
    }

    @Test func perSourceCapCountsEachAddressApart() async throws {
        // A dual-stack listener: 127.0.0.1 and ::1 are two sources.
        let (server, port, _) = try startServer(listen: "[::]:0", configure: { $0.maxConnectionsPerSource = 2 })
        defer { server.stop() }

        let v4 = try (0..<2).map { _ in try TestSocket(port: port) }
        let v6 = try (0..<2).map { _ in try TestSocket(port: port, host: "::1") }
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 4 })
        #expect(try await TestSocket(port: port).isClosedByPeer())
        #expect(try await TestSocket(port: port, host: "::1").isClosedByPeer())
        #expect(await eventually(timeout: 5) { server.statistics.refusals(.perSourceCap) == 2 })
        withExtendedLifetime((v4, v6)) {}
    }

    @Test func totalCapClosesExtraConnectionsAtAccept() async throws {
        let (server, port, _) = try startServer(configure: { $0.maxConnections = 2 })
        defer { server.stop() }

        let held = try (0..<2).map { _ in try TestSocket(port: port) }
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 2 })
        #expect(try await TestSocket(port: port).isClosedByPeer())
        #expect(await eventually(timeout: 5) { server.statistics.refusals(.tooManyConnections) == 1 })

        // A freed slot is usable again.
        held[1].closeNow()
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 1 })
        #expect(try await httpRequest(port: port, "GET", "/").status == 404)
        withExtendedLifetime(held) {}
    }

    @Test func fullWorkerQueueGets503() async throws {
        let gate = Gate()
        let (server, port, _) = try startServer(
            threads: 1, configure: { $0.requestQueueLimit = 1 },
            handler: { request in
                if request.path == "/block" { gate.wait() }  // on the server's worker thread
                return .text(200, request.path)
            })
        defer { server.stop() }
        defer { gate.open() }

        // One request holds the only worker, one waits in the queue, the third finds it full.
        let holder = try TestSocket(port: port)
        try await holder.sendRequest("GET", "/block")
        // The worker has taken it out of the queue (counted is not enough: on a loaded machine
        // the next request came while this one still sat in the queue, and found it full).
        #expect(await eventually(timeout: 5) { server.statistics.requests == 1 && gate.waiting == 1 })
        let queued = try TestSocket(port: port)
        try await queued.sendRequest("GET", "/queued")
        #expect(await eventually(timeout: 5) { server.statistics.requests == 2 })
        let busy = try await httpRequest(port: port, "GET", "/busy")
        #expect(busy.status == 503)
        #expect(busy.text == #"{"error":{"code":-503,"message":"server busy, try again"}}"#)
        #expect(server.statistics.refusals(.workersBusy) == 1)

        gate.open()
        #expect(try await holder.readResponse().text == "/block")
        #expect(try await queued.readResponse().text == "/queued")
    }

    @Test func acceptOutOfDescriptorsBacksOffInsteadOfSpinning() async throws {
        let (server, port, _) = try startServer(handler: { _ in .text(200, "ok") })
        defer { server.stop() }

        server.simulateAcceptFailures([EMFILE])
        let before = server.acceptCalls
        // The first accept fails; the listener rests, then the client is taken and served.
        #expect(try await httpRequest(port: port, "GET", "/").status == 200)
        #expect(server.statistics.acceptBackoffs == 1)
        // A spinning loop would have called accept thousands of times meanwhile.
        #expect(server.acceptCalls - before < 10)
    }

    @Test func invalidConfigurationIsRefusedAtStart() {
        var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
        configuration.headerTimeout = 0
        let server = HTTPServer(
            configuration: configuration, handler: { _ in .text(200, "") },
            webSocket: { _ in .accept(group: "") }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        let error = #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(error?.message.contains("headerTimeout") == true)

        let badListen = HTTPServer(
            configuration: HTTPServerConfiguration(listen: "localhost:80"), handler: { _ in .text(200, "") },
            webSocket: { _ in .accept(group: "") }, onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
        #expect(throws: HTTPServerError.self) { try badListen.start() }
    }

    @Test func metricsTextHasEveryRefusalReason() {
        var statistics = HTTPServerStatistics()
        statistics.openConnections = 3
        statistics.openWebSockets = 2
        statistics.count(.headerTimeout)
        statistics.count(.headerTimeout)
        let text = ControlAPIServer.metricsText(statistics)
        #expect(text.contains("\nirisgw_http_connections 3\n"))
        #expect(text.contains("\nirisgw_websockets 2\n"))
        #expect(text.contains("irisgw_http_refused_total{reason=\"header_timeout\"} 2\n"))
        for reason in HTTPServerStatistics.Refusal.allCases {
            #expect(text.contains("irisgw_http_refused_total{reason=\"\(reason.rawValue)\"} "))
        }
    }
}

/// A gate a handler waits at until the test opens it (at most 10 s).
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Mutex(false)
    private let waiters = Mutex(0)

    /// Threads that have reached `wait` (a worker inside its handler, no longer in the queue).
    var waiting: Int { waiters.withLock { $0 } }

    func wait() {
        waiters.withLock { $0 += 1 }
        _ = semaphore.wait(timeout: .now() + 10)
    }

    func open() {
        let first = opened.withLock { o -> Bool in
            defer { o = true }; return !o
        }
        if first { for _ in 0..<16 { semaphore.signal() } }
    }
}
