import Foundation
import IrisClient
import TestSupport
import Testing
import WebClient

/// HTTPClient against a Python http.server on 127.0.0.1.
struct HTTPClientTests {
    @Test func getReturnsJSONAndHeaders() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL + "/api", defaultHeaders: ["Authorization": "Bearer k1"])
        let response = try await client.request(method: "GET", path: "/v1/hello?x=1", timeout: 5)
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["x-iris"] == "one")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(json["hello"] == "world")
        #expect(json["path"] == "/api/v1/hello?x=1")
        #expect(json["auth"] == "Bearer k1")
        #expect(json["host"] == "127.0.0.1:\(server.port)")
    }

    @Test func postSendsBody() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL + "/api")
        let body = Array(#"{"to":"+15550100","from":"+15550199"}"#.utf8)
        let response = try await client.request(
            method: "POST", path: "/v1/calls", headers: ["Content-Type": "application/json"],
            body: body, timeout: 5)
        #expect(response.status == 201)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(json["received"] as? String == String(decoding: body, as: UTF8.self))
        #expect(json["length"] as? Int == body.count)
        #expect(json["type"] as? String == "application/json")

        // No body: still a Content-Length of 0, so the server does not wait for one.
        let empty = try await client.request(method: "POST", path: "/v1/calls/1/hangup", timeout: 5)
        #expect(empty.status == 201)
        let emptyJSON = try #require(try JSONSerialization.jsonObject(with: Data(empty.body)) as? [String: Any])
        #expect(emptyJSON["length"] as? Int == 0)
    }

    @Test func chunkedResponseIsReassembled() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL)
        let response = try await client.request(method: "GET", path: "/api/v1/chunked", timeout: 5)
        #expect(response.status == 200)
        #expect(response.headers["transfer-encoding"] == "chunked")
        #expect(
            String(decoding: response.body, as: UTF8.self) == "alpha-beta-" + String(repeating: "x", count: 5000)
                + "-omega")
    }

    @Test func clientErrorKeepsJSONBody() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL)
        let response = try await client.request(method: "GET", path: "/api/v1/calls/nope", timeout: 5)
        #expect(response.status == 404)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(json["code"] == "not_found")
    }

    @Test func connectionRefusedIsClassified() async throws {
        let port = unusedTCPPort()
        let client = try HTTPClient(baseURL: "http://127.0.0.1:\(port)")
        await #expect(throws: IrisTransportError.connectionRefused(host: "127.0.0.1", port: port)) {
            try await client.request(method: "GET", path: "/", timeout: 2)
        }
        do throws(IrisTransportError) {
            _ = try await client.request(method: "GET", path: "/", timeout: 2)
        } catch {
            #expect(error.kind == .connection)
            #expect(error.description.contains("refused"))
        }
    }

    @Test func slowServerTimesOut() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL)
        let start = Date()
        do throws(IrisTransportError) {
            _ = try await client.request(method: "GET", path: "/api/v1/slow", timeout: 0.4)
            Issue.record("the request should have timed out")
        } catch {
            #expect(error.isTimeout, "\(error)")
            #expect(error.description.contains("0.4"), "\(error)")
        }
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func badURLsAndHeadersAreRejected() async {
        // https and DNS names are taken (HTTPSServerTests, WireFormatTests); a CA file that is not there is not.
        #expect((try? HTTPClient(baseURL: "https://127.0.0.1:1")) != nil)
        #expect((try? HTTPClient(baseURL: "http://gateway.example:80")) != nil)
        #expect(throws: IrisTransportError.self) {
            try HTTPClient(baseURL: "https://127.0.0.1:1", caFile: "/nonexistent.pem")
        }
        #expect(throws: IrisTransportError.self) { try HTTPClient(baseURL: "ws://127.0.0.1:1") }
        #expect(throws: IrisTransportError.self) { try HTTPClient(baseURL: "127.0.0.1:80") }
        #expect((try? HTTPClient(baseURL: "http://[::1]:8080")) != nil)
        #expect((try? HTTPClient(baseURL: "http://localhost")) != nil)
        let client = try? HTTPClient(baseURL: "http://127.0.0.1:9")
        await #expect(throws: IrisTransportError.invalidRequest("header X-Bad has a CR, LF or NUL in its value")) {
            try await client?.request(method: "GET", path: "/", headers: ["X-Bad": "a\r\nInjected: 1"], timeout: 1)
        }
    }

    /// The async `request` holds no thread while it waits: more requests at once than the
    /// cooperative pool has threads, each answered only once all of them have reached the
    /// server, all succeed. Through the waiting `request`, one pool thread each, the ones past
    /// the pool's width would not be sent until the others had given up (504 after 10 s).
    @Test func asyncRequestsHoldNoThreadWhileTheyWait() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL)
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await client.request(method: "GET", path: "/api/v1/gather?n=\(count)", timeout: 20).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: count))
    }

    /// The waiting `request` (IrisClient's, the CLI's) gives what the async one gives; run on
    /// a dispatch thread, as a synchronous caller would.
    @Test func theWaitingRequestStillWorks() async throws {
        let server = try await PythonServer(source: ServerScripts.http)
        defer { server.stop() }
        let client = try HTTPClient(baseURL: server.baseURL)
        let waited = await offThePool { try? client.request(method: "GET", path: "/api/v1/calls/nope", timeout: 5) }
        let awaited = try await client.request(method: "GET", path: "/api/v1/calls/nope", timeout: 5)
        #expect(waited?.status == 404 && awaited.status == 404)
        #expect(waited?.body == awaited.body)
        let refused = await offThePool { () -> IrisTransportError? in
            do throws(IrisTransportError) {
                _ = try HTTPClient(baseURL: "http://127.0.0.1:\(unusedTCPPort())").request(
                    method: "GET", path: "/", timeout: 2)
                return nil
            } catch {
                return error
            }
        }
        #expect(refused?.kind == .connection, "\(String(describing: refused))")
    }
}
