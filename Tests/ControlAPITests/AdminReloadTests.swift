// `POST /v1/admin/reload` as the API serves it, with a reloader that answers what each case
// needs: the summary's shape, a refusal naming file and key (422), a reload under way (409),
// and what is refused before any reload (no key, a body, another method).

import ControlAPI
import Foundation
import Gateway
import IrisAPI
import Synchronization
import Testing

@Suite struct AdminReloadTests {
    static let key = "admin-test-key"
    static let auth = [("Authorization", "Bearer " + key)]

    /// How many times the reloader ran.
    final class Runs: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// A server (no gateway needed) whose reloader returns `outcome`; counts its runs.
    static func server(
        _ outcome: @escaping @Sendable () throws(ReloadRefusal) -> ReloadSummary
    ) throws -> (ControlAPIServer, Int, Runs) {
        let api = ControlAPIServer(key: key, configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"))
        let runs = Runs()
        api.onReload { () throws(ReloadRefusal) in
            runs.add()
            return try outcome()
        }
        return (api, try api.start(), runs)
    }

    static func json(_ r: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
    }

    @Test func theSummaryComesBack() async throws {
        let summary = ReloadSummary(reloaded: ["b"], unchanged: ["a"], removed: ["c"], restartRequired: ["sipListen"])
        let (api, port, runs) = try Self.server { summary }
        defer { api.stop() }
        for body in ["", "{}", " { } "] {
            let r = try await httpRequest(
                port: port, "POST", "/v1/admin/reload", headers: Self.auth, body: Array(body.utf8))
            #expect(r.status == 200, "\(r.text)")
            #expect(try JSONDecoder().decode(ReloadSummary.self, from: Data(r.body)) == summary)
            let keys = Set(Self.json(r).keys)
            #expect(keys == ["reloaded", "unchanged", "removed", "restartRequired"])
        }
        #expect(runs.value == 3)
    }

    @Test func aRefusalNamesTheFileAndTheKey() async throws {
        let refusal = ReloadRefusal(
            ProfileError(file: "profiles/a.json5", keyPath: "outbound.proxies[0]", message: "must be a sip: URI"))
        let (api, port, _) = try Self.server { () throws(ReloadRefusal) in throw refusal }
        defer { api.stop() }
        let r = try await httpRequest(port: port, "POST", "/v1/admin/reload", headers: Self.auth)
        #expect(r.status == 422)
        let error = Self.json(r)["error"] as? [String: Any] ?? [:]
        #expect(error["file"] as? String == "profiles/a.json5" && error["key"] as? String == "outbound.proxies[0]")
        #expect(error["code"] as? Int == IrisCode.incorrectParams)
        #expect(
            (error["message"] as? String)?.hasSuffix("profiles/a.json5: outbound.proxies[0]: must be a sip: URI")
                == true)
    }

    @Test func aReloadUnderWayIsAConflict() async throws {
        let (api, port, _) = try Self.server { () throws(ReloadRefusal) in
            throw ReloadRefusal(kind: .busy, message: "another reload is under way")
        }
        defer { api.stop() }
        let r = try await httpRequest(port: port, "POST", "/v1/admin/reload", headers: Self.auth)
        #expect(r.status == 409)
        #expect((Self.json(r)["error"] as? [String: Any])?["code"] as? Int == IrisCode.incorrectState)
    }

    @Test func whatIsRefusedReloadsNothing() async throws {
        let (api, port, runs) = try Self.server {
            ReloadSummary(reloaded: [], unchanged: [], removed: [], restartRequired: [])
        }
        defer { api.stop() }
        let noKey = try await httpRequest(port: port, "POST", "/v1/admin/reload")
        #expect(noKey.status == 401)
        let body = try await httpRequest(
            port: port, "POST", "/v1/admin/reload", headers: Self.auth, body: Array(#"{"force":true}"#.utf8))
        #expect(body.status == 400, "\(body.text)")
        let get = try await httpRequest(port: port, "GET", "/v1/admin/reload", headers: Self.auth)
        #expect(get.status == 405)
        let other = try await httpRequest(port: port, "POST", "/v1/admin/restart", headers: Self.auth)
        #expect(other.status == 404)
        #expect(runs.value == 0)
    }
}
