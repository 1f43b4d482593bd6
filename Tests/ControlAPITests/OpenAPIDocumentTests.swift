// docs/openapi.yaml as the server serves it (`GET /v1/openapi.json`): the same document a
// full YAML reader sees, valid OpenAPI 3.1, listing exactly the routes the dispatcher
// serves; and every 503 it documents answered while the gateway is starting. The other
// documented errors are reached against a real gateway (EndToEndTests, OpenAPIContractTests).

import ControlAPI
import Foundation
import TestSupport
import Testing

@Suite struct OpenAPIDocumentTests {
    /// An API server without a gateway (every keyed request is 503 "the gateway is starting").
    static func unattached() throws -> (ControlAPIServer, Int) {
        let api = ControlAPIServer(key: "k", configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"))
        return (api, try api.start())
    }

    static func get(_ port: Int, _ method: String, _ path: String, key: String? = nil) async throws -> TestResponse {
        let socket = try TestSocket(port: port)
        try await socket.sendRequest(method, path, headers: key.map { [("Authorization", "Bearer " + $0)] } ?? [])
        return try await socket.readResponse()
    }

    /// The served document, fetched without a key.
    static func served() async throws -> OpenAPIDocument {
        let (api, port) = try unattached()
        defer { api.stop() }
        let r = try await get(port, "GET", "/v1/openapi.json")
        guard r.status == 200, r.headers["content-type"] == "application/json" else {
            throw TestSocketError("GET /v1/openapi.json: \(r.status) \(r.text.prefix(300))")
        }
        return try OpenAPIDocument(json: r.body)
    }

    @Test func theServedJSONIsTheYAMLAsPyYAMLReadsIt() async throws {
        let document = try await Self.served()
        #expect(document.json["openapi"] as? String == "3.1.0")
        guard let python = await OpenAPIDocument.pythonWithYAML() else {
            Issue.record("no python3 with PyYAML (Debian python3-yaml; `make deps` installs it)")
            return
        }
        let difference = try await document.differenceFromYAML(python: python)
        #expect(difference == nil, "the served JSON is not docs/openapi.yaml: \(difference ?? "")")
    }

    /// Both ways: a route the document leaves out, or an operation no route serves, fails.
    @Test func theRoutesAreTheDocumentsOperations() async throws {
        let documented = try await Self.served().operations
        let served = Set(ControlAPIRoutes.all.map(\.description))
        #expect(served.count == ControlAPIRoutes.all.count, "a route listed twice")
        #expect(served.subtracting(documented).isEmpty, "served, not in docs/openapi.yaml")
        #expect(documented.subtracting(served).isEmpty, "in docs/openapi.yaml, not served")
    }

    @Test(
        .enabled(
            if: PythonVenv.has("openapi_spec_validator"), "openapi-spec-validator is not in .build/pyenv (make deps)"))
    func theDocumentIsValidOpenAPI() async throws {
        let document = try await Self.served()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "irisgw-openapi-\(UUID().uuidString.prefix(8)).json")
        try Data(document.bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await ChildProcess.run(PythonVenv.python, ["-m", "openapi_spec_validator", file.path], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
    }

    /// What the dispatcher sends where: a path it serves with another method is 405, a path
    /// it does not serve 404, both only after the key; the dialer page's folder needs none.
    @Test func unmatchedRequestsAre405Or404AfterTheKey() async throws {
        let (api, port) = try Self.unattached()
        defer { api.stop() }
        for (method, path, key, status) in [
            ("PUT", "/v1/sessions", nil, 401), ("PUT", "/v1/sessions", "k", 405),
            ("GET", "/v1/sessions/0123456789abcdef01234567/hold", "k", 405),
            ("GET", "/v2/things", nil, 401), ("GET", "/v2/things", "k", 404),
            ("POST", "/v1/sessions/x/dance", "k", 404), ("POST", "/app", nil, 405), ("GET", "/app/a/b", nil, 404),
            ("GET", "/v1//openapi.json/", nil, 200)
        ] as [(String, String, String?, Int)] {
            let r = try await Self.get(port, method, path, key: key)
            #expect(r.status == status, "\(method) \(path): \(r.status) \(r.text.prefix(200))")
        }
    }

    /// Every operation that documents 503 answers it while the gateway is starting (the other
    /// causes of a 503 are the gateway's: limits, draining, a cluster's holder away).
    @Test func everyDocumented503IsAnsweredWhileTheGatewayStarts() async throws {
        let document = try await Self.served()
        let (api, port) = try Self.unattached()
        defer { api.stop() }
        var checked = 0
        for operation in document.operations.sorted() where document.statuses(of: operation).contains(503) {
            let parts = operation.split(separator: " ").map(String.init)
            let path = parts[1].replacingOccurrences(of: "{roomId}", with: "0123456789abcdef01234567")
                .replacingOccurrences(of: "{streamId}", with: "MZ0123456789abcdef0123456789abcdef")
            let socket = try TestSocket(port: port)
            try await socket.sendRequest(
                parts[0], path, headers: [("Authorization", "Bearer k")],
                body: document.hasBody(operation) ? Array("{}".utf8) : [])
            let r = try await socket.readResponse()
            #expect(r.status == 503, "\(operation): \(r.status) \(r.text.prefix(200))")
            checked += 1
        }
        #expect(checked >= 25, "only \(checked) operations document 503")
    }
}
