import Foundation
import IrisAPI
import SIP
import TLS
import Testing
import WebClient

/// Page tokens against a real `irisgw serve` (docs/api.md, "Page tokens"): what they admit,
/// what they refuse (403), their expiry (401, -105); and the dialer page's files.
/// Quotas and the event socket's end: PageTokenLimitsTests.
extension GatewaySuites {
    @Suite struct PageTokenScopeTests {
        /// A browser's offer (ICE, DTLS-SRTP) from an app that never connects: the only kind
        /// a page may send.
        static let webRTCOffer: String = {
            let fingerprint = (try? DTLSCertificate(commonName: "page test").fingerprint.sdpValue) ?? ""
            return GatewaySuites.GatewayWebRTCFailureTests.offer(fingerprint: fingerprint)
        }()

        /// A PCMU offer the gateway takes from a plain RTP app (nothing listens on it).
        static let rtpOffer = """
            v=0\r
            o=- 1 1 IN IP4 127.0.0.1\r
            s=-\r
            c=IN IP4 127.0.0.1\r
            t=0 0\r
            m=audio 39998 RTP/AVP 0 101\r
            a=rtpmap:0 PCMU/8000\r
            a=rtpmap:101 telephone-event/8000\r
            a=sendrecv\r

            """

        /// JSON request with `bearer`; the status and the decoded object.
        static func call(
            _ gw: GatewayProcess, _ method: String, _ path: String, bearer: String?, body: Any? = nil
        ) async throws
            -> (status: Int, json: [String: Any])
        {
            let client = try HTTPClient(
                baseURL: gw.apiURL, defaultHeaders: bearer.map { ["Authorization": "Bearer " + $0] } ?? [:])
            var headers: [String: String] = [:]
            var bytes: [UInt8]?
            if let body {
                bytes = Array(try JSONSerialization.data(withJSONObject: body))
                headers["Content-Type"] = "application/json"
            }
            let r = try await client.request(method: method, path: path, headers: headers, body: bytes, timeout: 10)
            let json = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
            return (r.status, json)
        }

        static func code(_ json: [String: Any]) -> Int? { (json["error"] as? [String: Any])?["code"] as? Int }

        /// A page token minted with the API key; `scope`: more keys of the request
        /// (`profiles`, `allowCapture`, `allowHeaders`).
        static func mint(
            _ gw: GatewayProcess, routingId: String, ttlSec: Int = 600, scope: [String: Any] = [:]
        ) async throws -> String {
            let body = scope.merging(["routingId": routingId, "ttlSec": ttlSec]) { $1 }
            let r = try await call(gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: body)
            guard r.status == 201, let token = r.json["token"] as? String else {
                throw SocketError("minting a page token: \(r.status) \(r.json)", code: EPROTO)
            }
            return token
        }

        /// createWithTN (a WebRTC offer unless `sdp` says otherwise); `extra`: more keys.
        static func create(
            _ gw: GatewayProcess, bearer: String, routingId: String?, target: String = "+15550100003",
            sdp: String = webRTCOffer, extra: [String: Any] = [:]
        ) async throws -> (status: Int, json: [String: Any]) {
            var body: [String: Any] = ["targetTN": target, "sourceTN": "+15557654321", "media": ["sdp": sdp]]
            if let routingId { body["routingId"] = routingId }
            return try await call(gw, "POST", "/v1/sessions", bearer: bearer, body: body.merging(extra) { $1 })
        }

        static func message(_ json: [String: Any]) -> String {
            (json["error"] as? [String: Any])?["message"] as? String ?? ""
        }

        /// The live sessions, as the API key sees them.
        static func sessions(_ gw: GatewayProcess) async throws -> [[String: Any]] {
            try await call(gw, "GET", "/v1/sessions", bearer: gw.apiKey).json["sessions"] as? [[String: Any]] ?? []
        }

        static func closeAll(_ gw: GatewayProcess) async throws {
            for s in try await sessions(gw) {
                _ = try await call(gw, "DELETE", "/v1/sessions/\(s["roomId"] as? String ?? "")", bearer: gw.apiKey)
            }
        }

        @Test func mintingNeedsTheAPIKeyAndSaneArguments() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let ok = try await Self.call(
                gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: ["routingId": "web-1", "ttlSec": 120])
            #expect(ok.status == 201, "\(ok.json)")
            let token = try #require(ok.json["token"] as? String)
            let expires = try #require(ok.json["expiresAt"] as? Int)
            let now = Int(Date().timeIntervalSince1970)
            #expect((now + 118...now + 121).contains(expires))
            #expect(ok.json["routingId"] as? String == "web-1")
            #expect(ok.json["appPath"] as? String == "/app#token=" + token)
            #expect(!token.contains(gw.apiKey))

            #expect(
                try await Self.call(gw, "POST", "/v1/page-tokens", bearer: nil, body: ["routingId": "web-1"]).status
                    == 401)
            #expect(
                try await Self.call(gw, "POST", "/v1/page-tokens", bearer: "nope", body: ["routingId": "web-1"]).status
                    == 401
            )
            let byPage = try await Self.call(gw, "POST", "/v1/page-tokens", bearer: token, body: ["routingId": "web-1"])
            #expect(byPage.status == 403 && Self.code(byPage.json) == -103, "\(byPage)")
            for bad: [String: Any] in [
                ["routingId": ""], ["routingId": "a b"], ["routingId": "x", "ttlSec": 0],
                ["routingId": "x", "ttlSec": 86_401], ["ttlSec": 5]
            ] {
                let r = try await Self.call(gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: bad)
                #expect(r.status == 400 && Self.code(r.json) == -103, "\(bad): \(r)")
            }
            #expect(try await Self.call(gw, "GET", "/v1/page-tokens", bearer: gw.apiKey).status == 405)
        }

        @Test func aPageTokenActsOnlyOnItsRoutingId() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let token = try await Self.mint(gw, routingId: "web-1")

            // createWithTN: its own routing id (given or not), never another.
            let foreign = try await Self.create(gw, bearer: token, routingId: "web-2")
            #expect(foreign.status == 403 && Self.code(foreign.json) == -103, "\(foreign)")
            let mine = try await Self.create(gw, bearer: token, routingId: nil)
            #expect(mine.status == 201, "\(mine)")
            let room = try #require(mine.json["roomId"] as? String)
            let snapshot = try await Self.call(gw, "GET", "/v1/sessions/\(room)", bearer: token)
            #expect(snapshot.status == 200 && snapshot.json["routingId"] as? String == "web-1", "\(snapshot)")
            // A verb on its own session gets past the scope check (the state decides: ringing, 409).
            let hold = try await Self.call(gw, "POST", "/v1/sessions/\(room)/hold", bearer: token)
            #expect(hold.status == 409 && Self.code(hold.json) == -104, "\(hold)")

            // Another app's session (created with the key for another routing id): 403 for all of it.
            let theirs = try await Self.create(gw, bearer: gw.apiKey, routingId: "web-2")
            let other = try #require(theirs.json["roomId"] as? String, "\(theirs)")
            for (method, path, body) in [
                ("GET", "/v1/sessions/\(other)", nil), ("DELETE", "/v1/sessions/\(other)", nil),
                ("POST", "/v1/sessions/\(other)/hold", nil), ("POST", "/v1/sessions/\(other)/mute", nil),
                ("POST", "/v1/sessions/\(other)/dtmf", ["tones": "1"]),
                ("POST", "/v1/sessions/\(other)/reject", ["roomToken": "x"]),
                ("POST", "/v1/sessions/\(room)/merge", ["heldRoomId": other]),
                ("GET", "/v1/sessions", nil), ("GET", "/metrics", nil)
            ] as [(String, String, [String: Any]?)] {
                let r = try await Self.call(gw, method, path, bearer: token, body: body)
                #expect(r.status == 403 && Self.code(r.json) == -103, "\(method) \(path): \(r)")
            }
            // Its own session it may close; the other one is untouched.
            #expect(try await Self.call(gw, "DELETE", "/v1/sessions/\(room)", bearer: token).status == 202)
            let still = try await Self.call(gw, "GET", "/v1/sessions/\(other)", bearer: gw.apiKey)
            #expect(still.status == 200 && still.json["ended"] == nil, "\(still)")
            #expect(try await Self.call(gw, "DELETE", "/v1/sessions/\(other)", bearer: gw.apiKey).status == 202)
        }

        @Test func theEventSocketIsScopedToTheTokensRoutingId() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let token = try await Self.mint(gw, routingId: "web-1")
            let ws = gw.apiURL.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events"
            #expect(
                throws: IrisTransportError.handshakeRejected(
                    status: 403,
                    body: #"{"error":{"code":-103,"message":"a page token cannot subscribe to another routing id"}}"#)
            ) {
                _ = try WebSocketClient(url: ws + "?routingId=web-2&access_token=" + token)
            }
            // No routingId given: the token's is used, so another routing id's events never show.
            let socket = try WebSocketClient(url: ws + "?access_token=" + token)
            defer { socket.close() }
            let theirs = try await Self.create(gw, bearer: gw.apiKey, routingId: "web-2")
            let mine = try await Self.create(gw, bearer: token, routingId: nil)
            let myRoom = try #require(mine.json["roomId"] as? String)
            var rooms: Set<String> = []
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline, rooms.count < 1 || rooms.contains(myRoom) == false {
                guard let text = try? await socket.receive(timeout: 1) else { continue }
                if let e = try? JSONDecoder().decode(SessionEvent.self, from: Data(text.utf8)) {
                    rooms.insert(e.roomId)
                }
            }
            #expect(rooms == [myRoom], "\(rooms); theirs \(theirs.json)")
            _ = try await Self.call(gw, "DELETE", "/v1/sessions/\(myRoom)", bearer: token)
            if let other = theirs.json["roomId"] as? String {
                _ = try await Self.call(gw, "DELETE", "/v1/sessions/\(other)", bearer: gw.apiKey)
            }
        }

        @Test func anExpiredOrForgedTokenIsRefused() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let minted = ContinuousClock.now
            // 3 s: a loaded machine took more than 1 s to mint and use a token.
            let token = try await Self.mint(gw, routingId: "web-1", ttlSec: 3)
            // valid: past the key check
            #expect(try await Self.call(gw, "GET", "/v1/sessions/nosuch", bearer: token).status == 404)
            // the 3 s lifetime passing is what is tested (a poll would create)
            try await Task.sleep(until: minted + .milliseconds(4100))
            let expired = try await Self.create(gw, bearer: token, routingId: nil)
            #expect(expired.status == 401 && Self.code(expired.json) == -105, "\(expired)")
            let ws = gw.apiURL.replacingOccurrences(of: "http://", with: "ws://") + "/v1/events?access_token=" + token
            #expect(
                throws: IrisTransportError.handshakeRejected(
                    status: 401, body: #"{"error":{"code":-105,"message":"the page token has expired"}}"#)
            ) {
                _ = try WebSocketClient(url: ws)
            }
            // Altered: one character of the signature changed.
            let fresh = try await Self.mint(gw, routingId: "web-1")
            let last = fresh.last == "A" ? "B" : "A"
            let forged = try await Self.create(gw, bearer: String(fresh.dropLast()) + last, routingId: nil)
            #expect(forged.status == 401 && Self.code(forged.json) == -103, "\(forged)")
        }

        /// A plain RTP offer names any `c=` address: from a page it would aim the called
        /// party's audio wherever the page's user likes. 403, and nothing is created.
        @Test func aPageOffersWebRTCOnly() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let token = try await Self.mint(gw, routingId: "web-1", scope: ["allowCapture": true, "allowHeaders": true])
            let elsewhere = Self.rtpOffer.replacingOccurrences(of: "c=IN IP4 127.0.0.1", with: "c=IN IP4 198.51.100.9")
            let sdes = Self.rtpOffer.replacingOccurrences(of: "RTP/AVP", with: "RTP/SAVP")
                .replacingOccurrences(
                    of: "a=sendrecv",
                    with:
                        "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\na=sendrecv"
                )
            for (name, sdp) in [
                ("plain RTP", Self.rtpOffer), ("plain RTP elsewhere", elsewhere), ("SDES", sdes), ("not SDP", "hello")
            ] {
                let r = try await Self.create(gw, bearer: token, routingId: nil, sdp: sdp)
                #expect(r.status == 403 && Self.code(r.json) == -103, "\(name): \(r)")
                #expect(Self.message(r.json).contains("a page offers WebRTC only"), "\(name): \(r)")
            }
            #expect(try await Self.sessions(gw).isEmpty, "a refused create leaves nothing")
            // The API key's apps may still offer plain RTP.
            let keyed = try await Self.create(gw, bearer: gw.apiKey, routingId: "web-1", sdp: Self.rtpOffer)
            #expect(keyed.status == 201, "\(keyed)")
            // The browser's offer passes.
            let page = try await Self.create(gw, bearer: token, routingId: nil)
            #expect(page.status == 201, "\(page)")
            try await Self.closeAll(gw)
        }

        @Test func aPageUsesOnlyTheProfilesItsTokenNames() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            var beta = GatewayProcess.Profile(name: "beta", proxies: [sim.port])
            beta.hasInbound = false
            let gw = try await GatewayProcess(profiles: [
                GatewayProcess.Profile(name: "alpha", proxies: [sim.port]), beta
            ])
            defer { gw.stop() }

            let minted = try await Self.call(
                gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: ["routingId": "web-1", "profiles": ["beta"]])
            #expect(minted.status == 201 && minted.json["profiles"] as? [String] == ["beta"], "\(minted)")
            #expect(
                minted.json["allowCapture"] as? Bool == false && minted.json["allowHeaders"] as? Bool == false,
                "\(minted)")
            let scoped = try #require(minted.json["token"] as? String)
            let other = try await Self.create(gw, bearer: scoped, routingId: nil, extra: ["profile": "alpha"])
            #expect(other.status == 403 && Self.code(other.json) == -103, "\(other)")
            #expect(Self.message(other.json).contains("use profile \"alpha\""), "\(other)")
            #expect(try await Self.sessions(gw).isEmpty)
            let named = try await Self.create(gw, bearer: scoped, routingId: nil, extra: ["profile": "beta"])
            let unnamed = try await Self.create(gw, bearer: scoped, routingId: nil)
            for r in [named, unnamed] {
                let room = try #require(r.json["roomId"] as? String, "\(r)")
                #expect(
                    try await Self.call(gw, "GET", "/v1/sessions/\(room)", bearer: scoped).json["profile"] as? String
                        == "beta")
            }

            // Minted without profiles: the default profile (alpha, the first by name) and no other.
            let plain = try await Self.call(
                gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: ["routingId": "web-2"])
            #expect(plain.json["profiles"] as? [String] == ["alpha"], "\(plain)")
            let narrow = try #require(plain.json["token"] as? String)
            let refused = try await Self.create(gw, bearer: narrow, routingId: nil, extra: ["profile": "beta"])
            #expect(refused.status == 403 && Self.code(refused.json) == -103, "\(refused)")
            let byDefault = try await Self.create(gw, bearer: narrow, routingId: nil)
            let room = try #require(byDefault.json["roomId"] as? String, "\(byDefault)")
            #expect(
                try await Self.call(gw, "GET", "/v1/sessions/\(room)", bearer: narrow).json["profile"] as? String
                    == "alpha")
            #expect(try await Self.sessions(gw).count == 3)

            // Minting names real outbound profiles only.
            for bad: [String: Any] in [
                ["routingId": "x", "profiles": []], ["routingId": "x", "profiles": ["nosuch"]],
                ["routingId": "x", "profiles": ["beta", "beta"]],
                ["routingId": "x", "profiles": Array(repeating: "alpha", count: 9)]
            ] {
                let r = try await Self.call(gw, "POST", "/v1/page-tokens", bearer: gw.apiKey, body: bad)
                #expect(r.status == 400 && Self.code(r.json) == -103, "\(bad): \(r)")
            }
            try await Self.closeAll(gw)
        }

        @Test func captureAndHeaderFieldsOnlyWhenTheTokenAllowsThem() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
            defer { gw.stop() }
            let narrow = try await Self.mint(gw, routingId: "web-1")
            let cases: [(String, [String: Any], String)] = [
                ("capture", ["capture": true], "ask for a capture"),
                ("headers", ["headers": ["X-Ticket": "42"]], "set SIP header fields"),
                ("callerName", ["callerName": "Mallory"], "set SIP header fields"),
                ("privacy", ["privacy": "id"], "set SIP header fields")
            ]
            for (name, extra, text) in cases {
                let r = try await Self.create(gw, bearer: narrow, routingId: nil, extra: extra)
                #expect(
                    r.status == 403 && Self.code(r.json) == -103 && Self.message(r.json).contains(text), "\(name): \(r)"
                )
            }
            #expect(try await Self.sessions(gw).isEmpty, "a refused create leaves nothing")
            // capture: false and no headers ask for nothing.
            let plain = try await Self.create(
                gw, bearer: narrow, routingId: nil, extra: ["capture": false, "headers": [String: String]()])
            #expect(plain.status == 201, "\(plain)")

            // Allowed at minting (with the key): each passes.
            let capture = try await Self.mint(gw, routingId: "web-1", scope: ["allowCapture": true])
            #expect(try await Self.create(gw, bearer: capture, routingId: nil, extra: ["capture": true]).status == 201)
            let headerRefused = try await Self.create(
                gw, bearer: capture, routingId: nil, extra: ["headers": ["X-Ticket": "42"]])
            #expect(headerRefused.status == 403, "capture does not allow headers: \(headerRefused)")
            let headers = try await Self.mint(gw, routingId: "web-1", scope: ["allowHeaders": true])
            let withHeaders = try await Self.create(
                gw, bearer: headers, routingId: nil,
                extra: ["headers": ["X-Ticket": "42"], "callerName": "Support", "privacy": "none"])
            #expect(withHeaders.status == 201, "\(withHeaders)")
            #expect(try await Self.create(gw, bearer: headers, routingId: nil, extra: ["capture": true]).status == 403)
            #expect(try await Self.sessions(gw).count == 3)
            try await Self.closeAll(gw)
        }

        /// Joining an inbound call routed to the page's routing id: the same rules as a create
        /// (WebRTC only, capture only when allowed); a refused join leaves the call ringing.
        @Test(.timeLimit(.minutes(1)))
        func aPageJoinsWithWebRTCOnlyAndNoCaptureUnlessAllowed() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let token = try await Self.mint(gw, routingId: "alice")
            let (note, sipp) = try await GatewaySuites.GatewayInboundTests.notification(gw) {
                try GatewaySuites.GatewayInboundTests.caller(gw, CallerScenarios.rejected(603))
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let room = try #require(n.roomid), roomToken = try #require(n.roomtoken)
            for (name, body, text) in [
                ("plain RTP", ["roomToken": roomToken, "media": ["sdp": Self.rtpOffer]], "a page offers WebRTC only"),
                (
                    "capture", ["roomToken": roomToken, "media": ["sdp": Self.webRTCOffer], "capture": true],
                    "ask for a capture"
                )
            ] as [(String, [String: Any], String)] {
                let r = try await Self.call(gw, "POST", "/v1/sessions/\(room)/join", bearer: token, body: body)
                #expect(
                    r.status == 403 && Self.code(r.json) == -103 && Self.message(r.json).contains(text), "\(name): \(r)"
                )
            }
            let ringing = try await Self.call(gw, "GET", "/v1/sessions/\(room)", bearer: token)
            #expect(ringing.json["status"] as? String == "Initializing" && ringing.json["ended"] == nil, "\(ringing)")
            let reject = try await Self.call(
                gw, "POST", "/v1/sessions/\(room)/reject", bearer: token, body: ["roomToken": roomToken])
            #expect(reject.status == 200, "\(reject)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func theDialerPageIsServedWithoutAKeyAndHoldsNone() async throws {
            let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [5])])
            defer { gw.stop() }
            #expect(gw.printed.contains("dialer page \(gw.apiURL)/app"), "\(gw.printed)")
            let client = try HTTPClient(baseURL: gw.apiURL)
            var served = ""
            for (path, type) in [
                ("/app", "text/html"), ("/app/app.js", "text/javascript"), ("/app/app.css", "text/css")
            ] {
                let r = try await client.request(method: "GET", path: path)
                #expect(r.status == 200 && r.headers["content-type"]?.hasPrefix(type) == true, "\(path) \(r.status)")
                served += String(decoding: r.body, as: UTF8.self)
            }
            #expect(!served.contains(gw.apiKey))
            #expect(!served.contains("api-key") && !served.contains("IRISGW_API_KEY"))
            #expect(
                !served.contains("http://") && !served.contains("https://"), "the page loads nothing from elsewhere")
            #expect(try await client.request(method: "GET", path: "/app/..%2Fdata%2Fapi-key").status == 404)
        }
    }
}
