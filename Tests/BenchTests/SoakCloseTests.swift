// How the soak bench closes its calls. Its 200 workers all sent DELETE at the same moment
// when the run ended; the API resets connections beyond `maxConnectionsPerSource` (64) at
// accept, the bench took the error as a failed call and never asked again, and 137 calls
// nobody had closed stayed up until shutdown (reported as stuck sessions).

import ControlAPI
import Foundation
import Gateway
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing
import WebClient

@testable import irisgw_bench

@Suite struct SoakCloseTests {
    @Test func aCloseResetAtThePerSourceCapIsRetriedUntilTheAPITakesIt() async throws {
        let deletes = Atomic<Int>(0)
        let (server, port) = try startAPI(perSourceCap: 1) { request in
            guard request.method == "DELETE" else { return .json(404, []) }
            deletes.add(1, ordering: .relaxed)
            return .json(202, Array(#"{"roomId":"r1"}"#.utf8))
        }
        defer { server.stop() }
        // One idle connection takes the only slot: the next one is reset at accept.
        let held = try HeldConnection(port: port)
        #expect(await eventually(timeout: 5) { server.statistics.openConnections == 1 })

        var retried: [String] = []
        let outcome = BridgeBench.close(try client(port), roomId: "r1", within: 30, retryDelay: 0.05) { why in
            retried.append(why)
            held.close()
        }
        #expect(outcome == .accepted)
        #expect(retried.count >= 1)
        #expect(server.statistics.refusals(.perSourceCap) >= 1)
        #expect(deletes.load(ordering: .relaxed) == 1)
    }

    @Test func everyWorkerClosingAtOnceAboveTheCapClosesEverySession() async throws {
        let rooms = (0..<24).map { "room\($0)" }
        let deleted = Mutex<Set<String>>([])
        let (server, port) = try startAPI(perSourceCap: 2) { request in
            guard request.method == "DELETE", let room = request.path.split(separator: "/").last else {
                return .json(404, [])
            }
            deleted.withLock { _ = $0.insert(String(room)) }
            return .json(202, [])
        }
        defer { server.stop() }
        let api = try client(port)
        let outcomes = Mutex<[String: BridgeBench.CloseOutcome]>([:])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for room in rooms {
            done.enter()
            Thread {
                defer { done.leave() }
                start.wait()  // on its own thread: every worker starts at once
                let outcome = BridgeBench.close(api, roomId: room, within: 60, retryDelay: 0.01)
                outcomes.withLock { $0[room] = outcome }
            }.start()
        }
        for _ in rooms { start.signal() }
        // The workers are threads of their own (the bench's close waits); polled, no thread held here.
        #expect(await eventually(timeout: 90) { done.wait(timeout: .now()) == .success })
        #expect(outcomes.withLock { $0 }.filter { $0.value != .accepted }.isEmpty)
        #expect(deleted.withLock { $0 } == Set(rooms))
    }

    @Test func aSessionThatHadEndedCountsAsClosedWithoutRetrying() throws {
        let requests = Atomic<Int>(0)
        let (server, port) = try startAPI(perSourceCap: 64) { _ in
            requests.add(1, ordering: .relaxed)
            return .json(409, Array(#"{"error":{"message":"session r1 has ended"}}"#.utf8))
        }
        defer { server.stop() }
        let outcome = BridgeBench.close(try client(port), roomId: "r1", retryDelay: 0.01)
        #expect(outcome == .alreadyEnded && outcome.closed)
        #expect(requests.load(ordering: .relaxed) == 1)
    }

    @Test func anUnknownSessionFailsWithoutRetrying() throws {
        let requests = Atomic<Int>(0)
        let (server, port) = try startAPI(perSourceCap: 64) { _ in
            requests.add(1, ordering: .relaxed)
            return .json(404, Array(#"{"error":{"message":"no session r1"}}"#.utf8))
        }
        defer { server.stop() }
        let outcome = BridgeBench.close(try client(port), roomId: "r1", retryDelay: 0.01)
        #expect(!outcome.closed)
        #expect(requests.load(ordering: .relaxed) == 1)
    }

    @Test func aBusyAPIIsAskedAgain() throws {
        let requests = Atomic<Int>(0)
        let (server, port) = try startAPI(perSourceCap: 64) { _ in
            requests.add(1, ordering: .relaxed).oldValue == 0 ? .json(503, []) : .json(202, [])
        }
        defer { server.stop() }
        #expect(BridgeBench.close(try client(port), roomId: "r1", retryDelay: 0.01) == .accepted)
        #expect(requests.load(ordering: .relaxed) == 2)
    }

    /// The soak's gateway takes every worker's close at once, plus the sampler and the
    /// event WebSocket, whatever `--calls` is.
    @Test(arguments: [1, 200, 2000])
    func theSoaksGatewayLetsEveryWorkerCloseAtOnce(calls: Int) throws {
        let config = try ServeConfiguration.parse(
            SoakBench.serveConfig(calls: calls, realtimePriority: 10), file: "serve.json5")
        let limits = try APIListenerSettings(serve: config).limits
        #expect((limits?.maxConnectionsPerSource ?? 0) >= calls + 2)
        #expect((limits?.maxConnections ?? 0) >= calls + 2)
        #expect(config.mediaRealtimePriority == 10)
        #expect(
            try ServeConfiguration.parse(
                SoakBench.serveConfig(calls: calls, realtimePriority: nil), file: "serve.json5"
            )
            .mediaRealtimePriority == nil)
    }
}

/// An API server on 127.0.0.1, port from the OS, with `perSourceCap` connections per address.
private func startAPI(
    perSourceCap: Int, _ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
) throws -> (HTTPServer, Int) {
    var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0", threads: 4)
    configuration.maxConnectionsPerSource = perSourceCap
    let server = HTTPServer(
        configuration: configuration, handler: handler, webSocket: { _ in .accept(group: "test") },
        onWebSocketOpen: { _ in }, onWebSocketClose: { _ in })
    return (server, try server.start())
}

private func client(_ port: Int) throws -> HTTPClient { try HTTPClient(baseURL: "http://127.0.0.1:\(port)") }

/// A TCP connection to 127.0.0.1 that sends nothing: it holds one of the server's slots.
private final class HeldConnection {
    private var fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, rc == 0 else { throw SocketError("connect to port \(port)", code: errno) }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
