import Foundation
import IrisAPI
import IrisClient
import SIP
import Testing

extension GatewaySuites {
    /// Bad input through the control API: each gets the right HTTP status and Iris code, and
    /// changes nothing (no session, no INVITE, no record).
    @Suite struct GatewayAPIErrorTests {
        static let offer =
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n"

        /// Raw requests, so malformed bodies and headers can be sent.
        static func request(
            _ gw: GatewayProcess, _ method: String, _ path: String, body: String? = nil, key: String? = "",
            headers: [String: String] = [:]
        ) async throws -> (status: Int, code: Int?, text: String) {
            var h = headers
            let k = key == "" ? gw.apiKey : key
            if let k { h["Authorization"] = "Bearer " + k }
            let client = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: h)
            let r = try await client.request(
                method: method, path: path, headers: body == nil ? [:] : ["Content-Type": "application/json"],
                body: body.map { Array($0.utf8) }, timeout: 10)
            let error = try? JSONDecoder().decode(APIErrorBody.self, from: Data(r.body))
            return (r.status, error?.error.code, String(decoding: r.body, as: UTF8.self))
        }

        static func create(
            target: String = "+15551230001", source: String = "+15557654321", sdp: String = offer,
            profile: String? = nil
        ) -> String {
            let p = profile.map { ",\"profile\":\"\($0)\"" } ?? ""
            let escaped = sdp.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            return "{\"targetTN\":\"\(target)\",\"sourceTN\":\"\(source)\",\"media\":{\"sdp\":\"\(escaped)\"}\(p)}"
        }

        struct Case: Sendable, CustomStringConvertible {
            var name: String
            var method = "POST"
            var path = "/v1/sessions"
            var body: String?
            var key: String? = ""
            var status: Int
            var code: Int
            var description: String { name }
        }

        static let cases: [Case] = [
            Case(name: "no API key", body: create(), key: nil, status: 401, code: -103),
            Case(name: "wrong API key", body: create(), key: "not-the-key", status: 401, code: -103),
            Case(name: "malformed JSON", body: "{\"targetTN\": ", status: 400, code: -103),
            Case(name: "empty body", body: nil, status: 400, code: -103),
            Case(
                name: "missing sourceTN", body: "{\"targetTN\":\"+15551230001\",\"media\":{\"sdp\":\"v=0\"}}",
                status: 400, code: -103),
            Case(
                name: "wrong type", body: "{\"targetTN\":15551230001,\"sourceTN\":\"1\",\"media\":{\"sdp\":\"v=0\"}}",
                status: 400, code: -103),
            Case(name: "letters in the number", body: create(target: "+1555CALLME"), status: 400, code: -103),
            Case(name: "too short for E.164", body: create(target: "+1"), status: 400, code: -103),
            Case(name: "outside the allowed prefixes", body: create(target: "+447911123456"), status: 403, code: -417),
            Case(
                name: "premium international via 011", body: create(target: "011 882 1234 5678"), status: 403,
                code: -417),
            Case(name: "bad caller id", body: create(source: "anonymous"), status: 400, code: -103),
            Case(name: "unknown profile", body: create(profile: "nope"), status: 400, code: -103),
            Case(
                name: "SDP without audio", body: create(sdp: "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"),
                status: 400, code: -103),
            Case(
                name: "SDP without opus or PCMU",
                body: create(sdp: offer.replacingOccurrences(of: "opus/48000/2", with: "G729/8000")), status: 400,
                code: -103),
            Case(name: "not SDP", body: create(sdp: "hello"), status: 400, code: -103),
            Case(name: "unknown room", method: "GET", path: "/v1/sessions/nosuchroom", status: 404, code: -103),
            Case(name: "hold unknown room", path: "/v1/sessions/nosuchroom/hold", status: 404, code: -103),
            Case(
                name: "close unknown room", method: "DELETE", path: "/v1/sessions/nosuchroom", status: 404, code: -103),
            Case(name: "unknown verb", path: "/v1/sessions/x/dance", status: 404, code: -103),
            Case(name: "unknown endpoint", method: "GET", path: "/v2/things", status: 404, code: -103),
            Case(name: "wrong method", method: "PUT", path: "/v1/sessions", body: "{}", status: 405, code: -103),
            Case(name: "events without upgrade", method: "GET", path: "/v1/events", status: 400, code: -103),
            Case(
                name: "join with a garbage token", path: "/v1/sessions/x/join",
                body: "{\"roomToken\":\"garbage\",\"media\":{\"sdp\":\"v=0\"}}", status: 403, code: -103),
            Case(
                name: "reject with a garbage token", path: "/v1/sessions/x/reject", body: "{\"roomToken\":\"\"}",
                status: 403, code: -103),
            // 400 levels crashed the process (Foundation's parser recursed off the stack).
            Case(
                name: "nested 400 levels deep",
                body: String(repeating: "[", count: 400) + String(repeating: "]", count: 400), status: 400, code: -103),
            Case(
                name: "nested 5000 levels deep in a key",
                body: "{\"targetTN\":" + String(repeating: "{\"a\":", count: 5000) + "1"
                    + String(repeating: "}", count: 5001),
                status: 400, code: -103),
            Case(
                name: "oversized body", body: "{\"targetTN\":\"" + String(repeating: "1", count: 200_000) + "\"}",
                status: 413, code: -103)
        ]

        @Test func everyBadRequestIsRefusedAndChangesNothing() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            for c in Self.cases {
                let r = try await Self.request(gw, c.method, c.path, body: c.body, key: c.key)
                #expect(r.status == c.status && r.code == c.code, "\(c.name): \(r.status) \(r.text)")
                #expect(r.text.contains("\"message\""), "\(c.name): \(r.text)")
            }
            #expect(try await gw.connection().sessions().isEmpty)
            #expect(sipp.received("INVITE ") == 0, "a refused request dialled: \(sipp.report)")
            // Still healthy afterwards.
            #expect(try await Self.request(gw, "GET", "/healthz", key: nil).status == 200)
        }

        @Test func verbsInTheWrongStateAreRefused() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.ringUntilCancel)
            defer { gw.stop(); sipp.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            let room = try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321")
            #expect(await rec.waitForStatus(.connecting))
            // Ringing: nothing to hold, unhold or merge; no DTMF; an outbound call cannot be joined.
            for (path, body) in [
                ("hold", nil), ("unhold", nil), ("dtmf", "{\"tones\":\"1\"}"),
                ("merge", "{\"heldRoomId\":\"\(room)\"}"),
                ("join", "{\"roomToken\":\"x\",\"media\":{\"sdp\":\"v=0\"}}")
            ] as [(String, String?)] {
                let r = try await Self.request(gw, "POST", "/v1/sessions/\(room)/\(path)", body: body)
                #expect((400...499).contains(r.status) && r.code != nil, "\(path): \(r.status) \(r.text)")
            }
            #expect(
                try await Self.request(gw, "POST", "/v1/sessions/\(room)/dtmf", body: "{\"tones\":\"12X\"}").code
                    == -103)
            let snap = try await session.connection.snapshot(roomId: room)
            #expect(snap.status == .connecting)
            try await session.close()
            #expect(await session.waitForEnd(timeout: 10))
            // Ended: verbs say the participant left; the snapshot stays readable.
            let after = try await Self.request(gw, "POST", "/v1/sessions/\(room)/hold")
            #expect(after.status == 409 && after.code == -416, "\(after.text)")
            #expect(try await session.connection.snapshot(roomId: room).ended == .canceled)
        }

        @Test func aWebSocketClientThatNeverReadsDoesNotStallTheGateway() async throws {
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.reject("486 Busy Here")), calls: 40, timeout: 30)
            defer { sipp.stop() }
            let gw = try await GatewayProcess(profiles: [.init(proxies: [sipp.port])])
            defer { gw.stop() }
            // A raw WebSocket to every event, never read: its queue fills and it is dropped.
            let stalled = try WebSocketClient(
                url: gw.apiURL.replacingOccurrences(of: "http", with: "ws") + "/v1/events?since=1",
                headers: ["Authorization": "Bearer " + gw.apiKey])
            defer { stalled.close() }
            for _ in 0..<20 {
                let (rec, _) = try await GatewayOutboundTests.call(gw)
                #expect(rec.ended?.reason == .busy)
            }
            #expect(try await Self.request(gw, "GET", "/healthz", key: nil).status == 200)
        }
    }
}

extension GatewaySuites.GatewayAPIErrorTests {
    /// Room tokens: another room's token is refused (-103), an expired one too (-105); neither
    /// changes the calls, which ring on until the caller gives up.
    @Test func foreignAndExpiredRoomTokensAreRefused() async throws {
        let gw = try await GatewayProcess(profiles: [.init()], config: "{ roomTokenLifetimeSec: 1 }")
        defer { gw.stop() }
        let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
        defer { listener.close() }
        let sipp = try SIPp(
            .inline(name: "caller", xml: CallerScenarios.cancels(afterMs: 8000)), remote: gw.sipPeer, calls: 2,
            timeout: 40, arguments: ["-s", "+15550001000", "-r", "10"])
        defer { sipp.stop() }
        let first = try #require(await listener.next(timeout: 10)),
            second = try #require(await listener.next(timeout: 10))
        let join = { (room: String, token: String) async throws -> (Int, Int?) in
            let body =
                "{\"roomToken\":\"\(token)\",\"media\":{\"sdp\":\"\(Self.offer.replacingOccurrences(of: "\r\n", with: "\\r\\n"))\"}}"
            let r = try await Self.request(gw, "POST", "/v1/sessions/\(room)/join", body: body)
            return (r.status, r.code)
        }
        // A ringing inbound call: nothing to hold, unhold, merge or send DTMF on yet.
        for (verb, body) in [
            ("hold", nil), ("unhold", nil), ("dtmf", "{\"tones\":\"1\"}"), ("mute", nil),
            ("merge", "{\"heldRoomId\":\"\(second.roomid!)\"}")
        ] as [(String, String?)] {
            let r = try await Self.request(gw, "POST", "/v1/sessions/\(first.roomid!)/\(verb)", body: body)
            #expect(r.status == 409 && r.code == -104, "\(verb): \(r.status) \(r.text)")
        }
        let foreign = try await join(first.roomid!, second.roomtoken!)
        #expect(foreign.0 == 403 && foreign.1 == -103)
        // the token's lifetime passing is what is tested (a poll would join)
        try await Task.sleep(nanoseconds: 2_100_000_000)
        let expired = try await join(first.roomid!, first.roomtoken!)
        #expect(expired.0 == 401 && expired.1 == -105)
        let reject = try await Self.request(
            gw, "POST", "/v1/sessions/\(second.roomid!)/reject", body: "{\"roomToken\":\"\(second.roomtoken!)\"}")
        #expect(reject.status == 401 && reject.code == -105)
        // Both still ring: the caller's CANCELs end them.
        #expect(try await gw.connection().sessions().map(\.status) == [.initializing, .initializing])
        #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
    }
}
