import Foundation
import Gateway
import Glibc
import IrisAPI
import IrisClient
import TestSupport
import Testing
import WebClient

@testable import ControlAPI

/// One API on every node: three `irisgw serve` nodes on one real Redis, SIPp as the carrier.
/// A session is served by its holder through any node (same answers, same errors), a new
/// session goes to a node that takes sessions, the list is the cluster's, and what needs
/// another node gets a 503 while Redis is away.
extension GatewaySuites {
    @Suite struct ClusterAPITests {
        typealias EventLog = ClusterEndToEndTests.EventLog

        static func request(
            _ node: GatewayProcess, _ method: String, _ path: String, body: String? = nil, key: String? = "",
            headers: [String: String] = [:]
        ) async throws -> (status: Int, code: Int?, text: String) {
            try await GatewayAPIErrorTests.request(node, method, path, body: body, key: key, headers: headers)
        }

        /// A valid `X-Irisgw-Forwarded` for `method path` from `node`, stamped `age` seconds ago.
        static func mark(_ node: GatewayProcess, _ method: String, _ path: String, age: Int64 = 0) throws -> String {
            let key = try RoomTokenSigner.loadOrCreate(dataDir: node.dataDir).nodeForwardingKey
            return ForwardedMark(nodeId: "gw9", time: Int64(Date().timeIntervalSince1970) - age).value(
                method: method, target: path, key: key)
        }

        /// `GET /v1/sessions` on `node`: the room ids and the nodes `X-Irisgw-Partial` names.
        static func list(_ node: GatewayProcess) async throws -> (rooms: [String], partial: String?) {
            let r = try await HTTPClient(
                baseURL: node.apiURL, defaultHeaders: ["Authorization": "Bearer " + node.apiKey]
            )
            .request(method: "GET", path: "/v1/sessions", timeout: 15)
            #expect(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
            let list = try JSONDecoder().decode(SessionList.self, from: Data(r.body))
            return (list.sessions.map(\.roomId), r.headers["x-irisgw-partial"])
        }

        @Test func aSessionIsServedByItsHolderThroughAnyNode() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer()), calls: 3, timeout: 60)
            defer { sipp.stop() }
            let nodes = try await ClusterNodes.start(3, redis: redis, profile: .init(proxies: [sipp.port]))
            defer { for n in nodes { n.stop() } }
            for n in nodes { #expect(await ClusterNodes.waitForMembers(n, 3)) }
            var placed: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { placed.forEach { $0.0.stop() } }
            // Each node has room: each keeps what it is asked to create.
            for n in nodes { placed.append(try await placedSession(n)) }
            let rooms = placed.compactMap(\.0.roomId)
            let room = rooms[0]

            // The holder's answers, through another node.
            let trace = try await Self.request(nodes[0], "GET", "/v1/sessions/\(room)/sip")
            #expect(trace.status == 200)
            #expect(try await Self.request(nodes[1], "GET", "/v1/sessions/\(room)/sip").text == trace.text)
            let snap = try await Self.request(nodes[2], "GET", "/v1/sessions/\(room)")
            #expect(snap.status == 200, "\(snap.text)")
            let decoded = try JSONDecoder().decode(SessionSnapshot.self, from: Data(snap.text.utf8))
            #expect(decoded.roomId == room && decoded.status == .connected, "\(snap.text)")
            let mute = try await Self.request(nodes[1], "POST", "/v1/sessions/\(room)/mute")
            #expect(mute.status == 200 && mute.text == "{\"roomId\":\"\(room)\"}", "\(mute.text)")
            // Stopping a stream goes to the holder too: it is the one that knows the session's
            // streams (this one has none), not a node that would say the session is not there.
            let noStream = try await Self.request(nodes[1], "DELETE", "/v1/sessions/\(room)/streams/MZ00")
            #expect(noStream.status == 404 && noStream.text.contains("has no stream"), "\(noStream.text)")
            // No node holds it: the answer is every node's own.
            let nowhere = try await Self.request(nodes[1], "GET", "/v1/sessions/no-such-room")
            #expect(nowhere.status == 404, "\(nowhere.text)")

            // The list is the cluster's, on every node.
            for n in nodes {
                let (ids, partial) = try await Self.list(n)
                #expect(Set(ids) == Set(rooms) && ids.count == 3, "\(ids)")
                #expect(partial == nil)
            }

            // A session's events, from the start, on a node that does not hold it.
            let watcher = EventLog(try await ClusterNodes.events(nodes[2], query: "?roomId=\(room)&since=1"))
            defer { watcher.reader.cancel() }
            #expect(
                await eventually(timeout: 10) {
                    watcher.of(room).first?.seq == 1 && watcher.of(room).contains { $0.status == .connected }
                })

            // A page token minted on one node is the cluster's: another node checks it (its
            // scope, routing id alice, does not reach this session: 403, not 401).
            let minted = try await Self.request(
                nodes[0], "POST", "/v1/page-tokens", body: #"{"routingId":"alice"}"#)
            #expect(minted.status == 201, "\(minted.text)")
            let token = try JSONDecoder().decode(PageTokenResponse.self, from: Data(minted.text.utf8)).token
            let scoped = try await Self.request(nodes[1], "GET", "/v1/sessions/\(room)", key: token)
            #expect(scoped.status == 403, "\(scoped.text)")
            let forged = try await Self.request(nodes[1], "GET", "/v1/sessions/\(room)", key: token + "A")
            #expect(forged.status == 401, "\(forged.text)")

            // Ended through another node: the carrier gets the BYE, the app its end.
            let closed = try await Self.request(nodes[1], "DELETE", "/v1/sessions/\(room)")
            #expect(closed.status == 202, "\(closed.text)")
            #expect(await placed[0].1.waitFor { $0.contains { $0.event == .onSessionEnded } }, "\(placed[0].1.trace)")
            #expect(await eventually(timeout: 10) { sipp.received("BYE") == 1 })
            #expect(await eventually(timeout: 10) { watcher.of(room).contains { $0.event == .onSessionEnded } })
            // Ended: the holder still answers for it, through any node.
            let ended = try await Self.request(nodes[0], "GET", "/v1/sessions/\(room)")
            #expect(ended.status == 200, "\(ended.text)")
            #expect(try await Self.request(nodes[2], "GET", "/v1/sessions/\(room)").text == ended.text)
            let late = try await Self.request(nodes[0], "POST", "/v1/sessions/\(room)/hold")
            #expect(late.status == 409 && late.code == IrisCode.participantLeft, "\(late.text)")
            #expect(try await Self.request(nodes[1], "POST", "/v1/sessions/\(room)/hold").text == late.text)
            for (s, _) in placed.dropFirst() { try await s.close() }
        }

        @Test func anInboundCallIsJoinedThroughANodeThatDoesNotHoldIt() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            let nodes = try await ClusterNodes.start(2, redis: redis, profile: .init())
            defer { for n in nodes { n.stop() } }
            for n in nodes { #expect(await ClusterNodes.waitForMembers(n, 2)) }
            // The call comes to node 1; the app hears of it and answers through node 2.
            let (note, sipp) = try await GatewayInboundTests.notification(nodes[0]) {
                try GatewayInboundTests.caller(nodes[0], CallerScenarios.answered(talkMs: 3000))
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let room = try #require(n.roomid)
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try nodes[1].connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: room, roomToken: try #require(n.roomtoken))
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            #expect(try await Self.request(nodes[1], "GET", "/v1/sessions/\(room)").status == 200)
            #expect(await sipp.waitForExit(timeout: 15) == 0, sipp.report)
        }

        @Test func aNodeThatDoesNotAnswerIsNamedAndPassedOver() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            // The carrier rings and does not answer while the test runs.
            let carrier = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer(answerAfterMs: 60_000)), calls: 3, timeout: 90)
            defer { carrier.stop() }
            let profile = GatewayProcess.Profile(proxies: [carrier.port])
            func node(_ id: String, _ arguments: [String] = []) async throws -> GatewayProcess {
                try await GatewayProcess(
                    profiles: [profile], extraArguments: arguments, config: ClusterNodes.config(redis, id: id))
            }
            let first = try await node("gw1", ["--drain-timeout", "60"])
            defer { first.stop() }
            // gw2 is alive in the cluster but publishes an API address where nothing listens.
            let silent = try await node("gw2", ["--public-url", "http://127.0.0.1:\(try freePort())"])
            defer { silent.stop() }
            let third = try await node("gw3")
            defer { third.stop() }
            for n in [first, third] { #expect(await ClusterNodes.waitForMembers(n, 3)) }

            // An inbound call rings on gw2; the app hears of it on another node.
            let (note, caller) = try await GatewayInboundTests.notification(first) {
                try GatewayInboundTests.caller(silent, CallerScenarios.answered(talkMs: 1000))
            }
            defer { caller.stop() }
            let room = try #require(note?.roomid, caller.report)
            let away = try await Self.request(first, "GET", "/v1/sessions/\(room)")
            #expect(away.status == 503 && away.text.contains("node gw2"), "\(away.text)")
            #expect(away.code == IrisCode.serviceUnavailable)
            // The list has what the others hold and names the node left out.
            let (rooms, partial) = try await Self.list(third)
            #expect(rooms.isEmpty && partial == "gw2", "\(rooms) \(partial ?? "whole")")

            // gw1 drains: its new sessions go to gw2 or gw3 (one session each; gw2 first when
            // their loads are equal, by name), and gw2 does not answer, so to gw3.
            var placed: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { placed.forEach { $0.0.stop() } }
            placed.append(try await placedSession(first, status: .connecting))
            placed.append(try await placedSession(third, status: .connecting))
            kill(first.processID, SIGTERM)
            #expect(
                await eventually(timeout: 10) {
                    (try? await Self.request(first, "GET", "/healthz", key: nil))?.text.contains("draining") == true
                })
            placed.append(try await placedSession(first, status: .connecting))
            let onItsOwn = try #require(placed[1].0.roomId)
            let second = try #require(placed[2].0.roomId)
            let onThird = try await Self.request(
                third, "GET", "/v1/sessions",
                headers: ["X-Irisgw-Forwarded": try Self.mark(third, "GET", "/v1/sessions")])
            let ids = try JSONDecoder().decode(SessionList.self, from: Data(onThird.text.utf8)).sessions.map(\.roomId)
            #expect(Set(ids) == [onItsOwn, second], "\(onThird.text)")
            for (s, _) in placed { try await s.close() }
        }

        @Test func errorsRedisAwayDrainingAndNodeSignatures() async throws {
            let redis = try await RedisServer()
            defer { redis.stop() }
            // The carrier rings and does not answer while the test runs.
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.answer(answerAfterMs: 60_000)), calls: 2, timeout: 90)
            defer { sipp.stop() }
            let nodes = try await ClusterNodes.start(
                3, redis: redis, profile: .init(proxies: [sipp.port]), arguments: ["--drain-timeout", "60"])
            defer { for n in nodes { n.stop() } }
            for n in nodes { #expect(await ClusterNodes.waitForMembers(n, 3)) }
            var placed: [(IrisRtcAudioSession, SessionRecorder)] = []
            defer { placed.forEach { $0.0.stop() } }
            placed.append(try await placedSession(nodes[0], status: .connecting))
            let room = try #require(placed[0].0.roomId)

            // The holder's error, through another node.
            let onHolder = try await Self.request(nodes[0], "POST", "/v1/sessions/\(room)/hold")
            #expect(onHolder.status >= 400 && onHolder.status < 500, "\(onHolder.text)")
            let through = try await Self.request(nodes[1], "POST", "/v1/sessions/\(room)/hold")
            #expect(through.status == onHolder.status && through.text == onHolder.text)

            // Node signatures: a forged or stale one is 401; a valid one is answered by the
            // node itself (never forwarded again: here it holds nothing).
            let path = "/v1/sessions/\(room)"
            let forgedMark = "gw2;t=\(Int64(Date().timeIntervalSince1970));sig=" + String(repeating: "0", count: 64)
            let forged = try await Self.request(nodes[1], "GET", path, headers: ["X-Irisgw-Forwarded": forgedMark])
            #expect(forged.status == 401, "\(forged.text)")
            let stale = try await Self.request(
                nodes[1], "GET", path, headers: ["X-Irisgw-Forwarded": try Self.mark(nodes[0], "GET", path, age: 60)])
            #expect(stale.status == 401 && stale.text.contains("stale"), "\(stale.text)")
            let otherRequest = try await Self.request(
                nodes[1], "DELETE", path, headers: ["X-Irisgw-Forwarded": try Self.mark(nodes[0], "GET", path)])
            #expect(otherRequest.status == 401, "\(otherRequest.text)")
            let valid = try await Self.request(
                nodes[1], "GET", path, headers: ["X-Irisgw-Forwarded": try Self.mark(nodes[0], "GET", path)])
            #expect(valid.status == 404, "\(valid.text)")

            // Redis away: a session whose holder this node learnt from the event stream is
            // still served through it, one it never saw is a clear 503, a local one is served.
            await redis.stopped()
            #expect(try await Self.request(nodes[1], "GET", path).status == 200)
            let unknown = "/v1/sessions/" + String(repeating: "ab", count: 12)
            let away = try await Self.request(nodes[1], "GET", unknown)
            #expect(away.status == 503 && away.text.contains("Redis"), "\(away.text)")
            #expect(try await Self.request(nodes[0], "GET", path).status == 200)
            try await redis.restart()
            #expect(
                await eventually(timeout: 15) {
                    (try? await Self.request(nodes[1], "GET", path))?.status == 200
                })

            // A draining node places new sessions on another node.
            for n in nodes { #expect(await ClusterNodes.waitForMembers(n, 3)) }
            kill(nodes[0].processID, SIGTERM)
            #expect(
                await eventually(timeout: 10) {
                    (try? await Self.request(nodes[0], "GET", "/healthz", key: nil))?.text.contains("draining") == true
                })
            placed.append(try await placedSession(nodes[0], status: .connecting))
            let second = try #require(placed[1].0.roomId)
            let own = try await Self.request(
                nodes[0], "GET", "/v1/sessions",
                headers: ["X-Irisgw-Forwarded": try Self.mark(nodes[0], "GET", "/v1/sessions")])
            let ownIds = try JSONDecoder().decode(SessionList.self, from: Data(own.text.utf8)).sessions.map(\.roomId)
            #expect(ownIds == [room], "the draining node holds only its first session: \(own.text)")
            #expect(try await Self.request(nodes[1], "GET", "/v1/sessions/\(second)").status == 200)
            for (s, _) in placed { try await s.close() }
        }
    }
}
