import Foundation
import Glibc
import IrisAPI
import IrisClient
import TestSupport
import Testing
import WebClient

/// docs/openapi.yaml against a real `irisgw serve` with the carrier simulator: schemathesis
/// finds no answer outside the document, and every error status the document lists for an
/// operation is reached at least once (ControlAPITests reaches the 503s, before the gateway
/// is attached).
extension GatewaySuites {
    @Suite struct OpenAPIContractTests {
        static let schemathesis = PythonVenv.packageRoot.appendingPathComponent(".build/pyenv/bin/schemathesis").path

        /// What schemathesis checks: no 5xx, and every status, content type and body as documented.
        static let checks = [
            "not_a_server_error", "status_code_conformance", "content_type_conformance",
            "response_schema_conformance"
        ]

        @Test(.enabled(if: PythonVenv.has("schemathesis"), "schemathesis is not in .build/pyenv (make deps)"))
        func schemathesisFindsNothingOutsideTheDocument() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let work = gw.directory.appendingPathComponent("schemathesis")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            // One worker, few examples, a fixed seed: a few seconds of one core, the same cases every
            // run. The examples phase places real calls (createWithTN's example: the simulator's
            // number that rings, so no media runs), and the stateful phase follows the document's
            // links from them (state, hold, mute, dtmf, close ...).
            let run = try ChildProcess(
                Self.schemathesis,
                [
                    "run", gw.apiURL + "/v1/openapi.json", "--url", gw.apiURL,
                    "--header", "Authorization: Bearer " + gw.apiKey, "--checks", Self.checks.joined(separator: ","),
                    "--max-examples", "6", "--seed", "27", "--workers", "1", "--phases",
                    "examples,coverage,fuzzing,stateful",
                    "--generation-database", "none", "--request-timeout", "10", "--no-color"
                ],
                currentDirectory: work)
            defer { run.stop(signal: SIGKILL) }
            let status = await run.exit(timeout: 120)
            // The key is a throwaway one, but no key goes into a report.
            let output = run.output.replacingOccurrences(of: gw.apiKey, with: "<api key>")
            #expect(status == 0, "schemathesis found answers outside docs/openapi.yaml:\n\(output)")
        }

        // MARK: Every documented error

        enum Bearer { case none, key, page }
        /// Which session the path names.
        enum Room { case unknown, ended, inbound }

        struct Case: CustomStringConvertible {
            var operation: String
            var status: Int
            var bearer: Bearer = .key
            var room: Room = .unknown
            var body: String?
            var description: String { "\(operation) \(status)" }
        }

        /// A body over the API's 64 KiB.
        static let oversized = "{\"x\":\"" + String(repeating: "a", count: 70_000) + "\"}"
        static let offer = GatewayAPIErrorTests.offer.replacingOccurrences(of: "\r\n", with: "\\r\\n")

        /// The statuses only reload's own tests reach (a broken profile, two reloads at once).
        static let reachedElsewhere: Set = ["POST /v1/admin/reload 409", "POST /v1/admin/reload 422"]

        /// One or more requests per documented error, each with the status it must get.
        static func cases(token: String, document: OpenAPIDocument) -> [Case] {
            let room = "/v1/sessions/{roomId}"
            var all: [Case] = [
                Case(operation: "POST /v1/sessions", status: 400, body: "{\"targetTN\": "),
                Case(operation: "POST /v1/sessions", status: 401, bearer: .none, body: "{}"),
                Case(
                    operation: "POST /v1/sessions", status: 403,
                    body:
                        "{\"targetTN\":\"+447911123456\",\"sourceTN\":\"+15557654321\",\"media\":{\"sdp\":\"\(offer)\"}}"
                ),
                Case(operation: "POST /v1/sessions", status: 413, body: oversized),
                Case(operation: "GET /v1/sessions", status: 401, bearer: .none),
                Case(operation: "GET /v1/sessions", status: 403, bearer: .page),
                Case(operation: "POST /v1/page-tokens", status: 400, body: "{\"routingId\":\"not a routing id\"}"),
                Case(operation: "POST /v1/page-tokens", status: 401, bearer: .none, body: "{}"),
                Case(operation: "POST /v1/page-tokens", status: 403, bearer: .page, body: "{\"routingId\":\"x\"}"),
                Case(operation: "POST /v1/page-tokens", status: 413, body: oversized),
                Case(operation: "POST /v1/admin/reload", status: 400, body: "[1]"),
                Case(operation: "POST /v1/admin/reload", status: 401, bearer: .none),
                Case(operation: "POST /v1/admin/reload", status: 403, bearer: .page),
                Case(operation: "POST /v1/admin/reload", status: 413, body: oversized),
                Case(operation: "GET /metrics", status: 401, bearer: .none),
                Case(operation: "GET /metrics", status: 403, bearer: .page),
                Case(operation: "GET /v1/events", status: 400),
                Case(operation: "GET /v1/events", status: 401, bearer: .none),
                Case(operation: "GET /app", status: 404, bearer: .none),
                Case(operation: "HEAD /app", status: 404, bearer: .none),
                Case(operation: "GET /app/{file}", status: 404, bearer: .none),
                Case(operation: "HEAD /app/{file}", status: 404, bearer: .none),
                // join and reject check the room token first: a garbage one is 403; a page
                // token on a session that does not exist, 404; the rejected call, 409.
                Case(operation: "POST \(room)/join", status: 400, body: "{"),
                Case(operation: "POST \(room)/join", status: 401, bearer: .none, body: "{}"),
                Case(
                    operation: "POST \(room)/join", status: 403,
                    body: "{\"roomToken\":\"garbage\",\"media\":{\"sdp\":\"\(offer)\"}}"),
                Case(
                    operation: "POST \(room)/join", status: 404, bearer: .page,
                    body: "{\"roomToken\":\"garbage\",\"media\":{\"sdp\":\"\(offer)\"}}"),
                Case(
                    operation: "POST \(room)/join", status: 409, room: .inbound,
                    body: "{\"roomToken\":\"\(token)\",\"media\":{\"sdp\":\"\(offer)\"}}"),
                Case(operation: "POST \(room)/join", status: 413, body: oversized),
                Case(operation: "POST \(room)/reject", status: 400, body: "{"),
                Case(operation: "POST \(room)/reject", status: 401, bearer: .none, body: "{}"),
                Case(operation: "POST \(room)/reject", status: 403, body: "{\"roomToken\":\"garbage\"}"),
                Case(operation: "POST \(room)/reject", status: 404, bearer: .page, body: "{\"roomToken\":\"garbage\"}"),
                Case(
                    operation: "POST \(room)/reject", status: 409, room: .inbound, body: "{\"roomToken\":\"\(token)\"}"),
                Case(operation: "POST \(room)/reject", status: 413, body: oversized)
            ]
            // The rest of a session's operations: no key 401; a page token on another routing
            // id's session (or on an endpoint for the key only) 403; a session that never
            // existed 404; the ended one 409; a bad body 400; an oversized one 413.
            let sessionOperations: [(String, String?)] = [
                ("GET \(room)", nil), ("DELETE \(room)", nil), ("GET \(room)/sip", nil), ("GET \(room)/pcap", nil),
                ("GET \(room)/recording", nil), ("POST \(room)/recording", "{\"action\":\"stop\"}"),
                ("POST \(room)/hold", nil), ("POST \(room)/unhold", nil), ("POST \(room)/mute", nil),
                ("POST \(room)/unmute", nil), ("POST \(room)/merge", "{\"heldRoomId\":\"fedcba9876543210fedcba98\"}"),
                ("POST \(room)/dtmf", "{\"tones\":\"1\"}"),
                ("POST \(room)/transfer", "{\"targetTN\":\"+15550100001\"}"),
                ("POST \(room)/acceptTransfer", nil), ("POST \(room)/declineTransfer", nil),
                ("POST \(room)/streams", "{\"url\":\"ws://127.0.0.1:9/fork\"}"),
                ("DELETE \(room)/streams/{streamId}", nil)
            ]
            for (operation, body) in sessionOperations {
                let statuses = document.statuses(of: operation)
                let recipes: [Case] = [
                    Case(operation: operation, status: 400, body: "{\"not\": \"this\"}"),
                    Case(operation: operation, status: 401, bearer: .none, body: body),
                    Case(operation: operation, status: 403, bearer: .page, room: .ended, body: body),
                    Case(operation: operation, status: 404, body: body),
                    Case(operation: operation, status: 409, room: .ended, body: body),
                    Case(operation: operation, status: 413, body: oversized)
                ]
                all += recipes.filter { statuses.contains($0.status) }
            }
            return all
        }

        /// The status of a WebSocket upgrade: 101 when it opened (closed at once), else the refusal's.
        static func upgradeStatus(_ url: String) -> Int {
            do {
                let socket = try WebSocketClient(url: url)
                socket.close()
                return 101
            } catch .handshakeRejected(let status, _) {
                return status
            } catch {
                return 0
            }
        }

        @Test func everyDocumentedErrorIsReached() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            // An empty page folder: /app is 404. Quotas of one: the second of anything is 429.
            let noPage = FileManager.default.temporaryDirectory.appendingPathComponent(
                "irisgw-nopage-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: noPage, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: noPage) }
            let gw = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [sim.port])], extraArguments: ["--web-dir", noPage.path],
                config: "{ pageTokens: { sessionsPerRoutingId: 1, webSocketsPerRoutingId: 1 } }")
            defer { gw.stop() }
            typealias Scope = PageTokenScopeTests
            let page = try await Scope.mint(gw, routingId: "web-1")
            let document = try OpenAPIDocument(
                json: try await HTTPClient(baseURL: gw.apiURL).request(
                    method: "GET", path: "/v1/openapi.json", timeout: 10
                )
                .body)

            // Every session's events, checked against the document's SessionEvent at the end.
            let events = try WebSocketClient(
                url: gw.apiURL.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events",
                headers: ["Authorization": "Bearer " + gw.apiKey])
            defer { events.close() }

            // An ended session (the simulator's busy number), one ringing for web-1 (its quota
            // of one), and an inbound call rejected with its room token.
            let ended = try #require(
                try await Scope.create(gw, bearer: gw.apiKey, routingId: nil, target: "+15550100002").json["roomId"]
                    as? String)
            let ringing = try await Scope.create(gw, bearer: gw.apiKey, routingId: "web-1", target: "+15550100003")
            #expect(ringing.status == 201, "\(ringing)")
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let caller = try GatewaySuites.GatewayCLITests.launch(
                ["carrier-sim", "call", "+15550001000", "--from", "+15559876543", "--to", "127.0.0.1:\(gw.sipPort)"],
                mergeErrors: true)
            defer { caller.stop() }
            let note = try #require(await listener.next(timeout: 10))
            let inbound = try #require(note.roomid), token = try #require(note.roomtoken)
            #expect(
                try await Scope.call(
                    gw, "POST", "/v1/sessions/\(inbound)/reject", bearer: gw.apiKey, body: ["roomToken": token]
                ).status == 200)
            #expect(
                await eventually(timeout: 10) {
                    let a = try? await Scope.call(gw, "GET", "/v1/sessions/\(ended)", bearer: gw.apiKey)
                    let b = try? await Scope.call(gw, "GET", "/v1/sessions/\(inbound)", bearer: gw.apiKey)
                    return a?.json["ended"] != nil && b?.json["ended"] != nil
                })

            var reached: Set<String> = []
            for c in Self.cases(token: token, document: document) {
                let roomId =
                    switch c.room {
                    case .unknown: "0123456789abcdef01234567"
                    case .ended: ended
                    case .inbound: inbound
                    }
                let parts = c.operation.split(separator: " ").map(String.init)
                let path = parts[1].replacingOccurrences(of: "{roomId}", with: roomId)
                    .replacingOccurrences(of: "{streamId}", with: "MZ0123456789abcdef0123456789abcdef")
                    .replacingOccurrences(of: "{file}", with: "missing.html")
                let bearer: String? =
                    switch c.bearer {
                    case .none: nil
                    case .key: gw.apiKey
                    case .page: page
                    }
                let client = try HTTPClient(
                    baseURL: gw.apiURL, defaultHeaders: bearer.map { ["Authorization": "Bearer " + $0] } ?? [:])
                let r = try await client.request(
                    method: parts[0], path: path, headers: c.body == nil ? [:] : ["Content-Type": "application/json"],
                    body: c.body.map { Array($0.utf8) }, timeout: 10)
                let error = try? JSONDecoder().decode(APIErrorBody.self, from: Data(r.body))
                // HEAD has no body to read the error from.
                let ok = r.status == c.status && (parts[0] == "HEAD" || error != nil)
                #expect(ok, "\(c): \(r.status) \(String(decoding: r.body.prefix(300), as: UTF8.self))")
                if ok { reached.insert(c.description) }
            }

            // The event socket's refusals come at the upgrade.
            let ws = gw.apiURL.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events?access_token=" + page
            let first = try WebSocketClient(url: ws)
            defer { first.close() }
            for (url, status) in [(ws + "&routingId=web-2", 403), (ws, 429)] {
                let got = Self.upgradeStatus(url)
                #expect(got == status, "GET /v1/events \(status): \(got)")
                if got == status { reached.insert("GET /v1/events \(status)") }
            }
            // A page's create over its routing id's quota (the ringing session holds it).
            let over = try await Scope.create(gw, bearer: page, routingId: nil)
            #expect(over.status == 429, "\(over)")
            if over.status == 429 { reached.insert("POST /v1/sessions 429") }

            var documented: Set<String> = []
            for operation in document.operations {
                for status in document.statuses(of: operation) where status >= 400 {
                    documented.insert("\(operation) \(status)")
                }
            }
            let reachedBefore503 = Set(document.operations.map { "\($0) 503" })
            let missing = documented.subtracting(reached).subtracting(reachedBefore503).subtracting(
                Self.reachedElsewhere)
            #expect(missing.isEmpty, "documented errors no case reaches: \(missing.sorted())")
            let stale = Set(Self.cases(token: "", document: document).map(\.description)).subtracting(documented)
            #expect(stale.isEmpty, "cases for errors the document does not list: \(stale.sorted())")
            let ringingRoom = ringing.json["roomId"] as? String ?? ""
            _ = try await Scope.call(gw, "DELETE", "/v1/sessions/\(ringingRoom)", bearer: gw.apiKey)

            // The events of those calls (created, statuses, the notification, errors, ends)
            // are what the document says: read until the canceled call's end.
            var texts: [String] = []
            while !texts.contains(where: { $0.contains("\"onSessionEnded\"") && $0.contains(ringingRoom) }),
                let text = try await events.receive(timeout: 10)
            {
                texts.append(text)
            }
            #expect(texts.contains { $0.contains("\"onNotification\"") }, "\(texts)")
            if PythonVenv.has("jsonschema") {
                let refused = try await document.refused(texts, by: "SessionEvent")
                #expect(refused.isEmpty, "events outside the document's SessionEvent: \(refused)")
            }
        }
    }
}
