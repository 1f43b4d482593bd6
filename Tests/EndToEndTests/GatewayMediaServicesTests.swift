import Foundation
import IrisAPI
import IrisClient
import Media
import TestSupport
import Testing

extension GatewaySuites {
    /// Media services through a real gateway and `irisgw carrier-sim`: a call recorded (paused
    /// and resumed) with a fork of its audio to a voice agent (PyPI `websockets`), a call whose
    /// platform leg is the agent itself, and the refusals of bad requests.
    @Suite(.enabled(if: MediaAgent.isInstalled, "needs websockets in .build/pyenv (`make deps` installs it)"))
    struct GatewayMediaServicesTests {
        /// The simulator, a gateway routing to it and the agent, for `body`; all stopped after.
        static func withPeers(
            _ body: (CarrierSimProcess, GatewayProcess, MediaAgent) async throws -> Void
        ) async throws {
            let (sim, gw, agent) = try await start()
            defer {
                agent.stop()
                gw.stop()
                sim.stop()
            }
            try await body(sim, gw, agent)
        }

        /// A session whose platform leg is `agent`'s WebSocket, to `number` (the echo number).
        static func agentCall(
            _ gw: GatewayProcess, _ agent: MediaWebSocket, to number: String = "+15550100001"
        ) async throws -> (IrisRtcAudioSession, SessionRecorder) {
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            do {
                try await session.createWithTN(targetTN: number, sourceTN: "+15557654321", agent: agent)
            } catch {
                session.stop()
                throw error
            }
            return (session, rec)
        }

        static func start() async throws -> (CarrierSimProcess, GatewayProcess, MediaAgent) {
            let sim = try await CarrierSimProcess()
            do {
                let gw = try await GatewayProcess(profiles: [GatewayProcess.Profile(proxies: [sim.port])])
                do {
                    return (sim, gw, try await MediaAgent())
                } catch {
                    gw.stop()
                    throw error
                }
            } catch {
                sim.stop()
                throw error
            }
        }

        /// A stereo recording of an echoed call (the carrier left, the app right, both the
        /// app's 440 Hz), paused for a stretch that is silence in the file and marked in the
        /// record; a fork of both tracks to the agent, stopped by the app; the file served.
        @Test func aRecordedCallWithAForkOfItsAudio() async throws {
            try await Self.withPeers { _, gw, agent in
                let rec = SessionRecorder()
                let session = IrisRtcAudioSession(
                    connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                    delegate: rec)
                defer { session.stop() }
                try await session.createWithTN(
                    targetTN: "+15550100001", sourceTN: "+15557654321", recording: RecordingOptions(channels: 2))
                #expect(await rec.waitForStatus(.connected, timeout: 15), "\(rec.trace)")
                #expect(await rec.waitFor { $0.contains { $0.recording?.state == "recording" } }, "\(rec.trace)")
                let fork = try await session.startStream(
                    StreamRequest(url: agent.url(), track: "both", customParameters: ["mode": "listen"]))
                #expect(fork.state == "starting" && fork.kind == "fork" && fork.streamId.hasPrefix("MZ"))
                let start = await agent.waitFor("start").first
                #expect(start?.tracks == ["inbound", "outbound"], "\(agent.report)")
                #expect(start?.streamSid == fork.streamId && start?.callSid == session.roomId)
                #expect(await rec.waitFor { $0.contains { $0.stream?.state == "started" } }, "\(rec.trace)")
                let media = await agent.waitFor("media", count: 60)
                #expect(Set(media.compactMap(\.track)) == ["inbound", "outbound"], "\(agent.report)")
                #expect(media.allSatisfy { $0.bytes == 160 }, "mu-law, 20 ms at 8 kHz")

                // Recorded for a while, paused for a while, then recorded again.
                _ = await eventually(timeout: 1.5) { false }
                try await session.recording(RecordingRequest(action: "pause"))
                #expect(await rec.waitFor { $0.contains { $0.recording?.state == "paused" } })
                _ = await eventually(timeout: 1) { false }
                try await session.recording(RecordingRequest(action: "resume"))
                _ = await eventually(timeout: 1) { false }

                try await session.stopStream(fork.streamId)
                #expect(await agent.waitFor("stop").count == 1, "\(agent.report)")
                #expect(await rec.waitFor { $0.contains { $0.stream?.state == "stopped" } }, "\(rec.trace)")
                let room = try #require(session.roomId)
                try await session.close()
                #expect(await rec.waitFor { _ in rec.ended != nil })

                let wav = try WAVFile(
                    bytes: try await offThePool { () throws(IrisError) in try session.connection.recording(roomId: room)
                    })
                #expect(wav.channels.count == 2 && wav.sampleRate == 8000)
                #expect(wav.duration > 3 && wav.duration < 10, "\(wav.duration) s")
                let records = try await gw.recordsAfterStop()
                let record = try #require(records.first { $0.roomId == room })
                #expect(record.recordingPath?.hasSuffix(room + ".wav") == true)
                #expect(record.streams == 1)
                let paused = try #require(record.recordingPaused?.split(separator: "-").compactMap { Double($0) })
                #expect(paused.count == 2 && paused[1] - paused[0] > 0.6, "\(record.recordingPaused ?? "none")")
                // The app's tone on the right throughout the recorded stretches, the echo on the left;
                // the paused stretch silent on both.
                func ratio(_ channel: Int, _ from: Double, _ to: Double) -> Double {
                    let samples = wav.channels[channel][
                        Int(from * 8000)..<min(Int(to * 8000), wav.channels[channel].count)]
                    return Goertzel(frequency: 440, sampleRate: 8000).energyRatio(samples)
                }
                #expect(ratio(1, 0.5, paused[0] - 0.1) > 0.5, "the app's side")
                #expect(ratio(0, 0.5, paused[0] - 0.1) > 0.5, "the carrier's side (the echo)")
                let silence = wav.channels[1][Int((paused[0] + 0.1) * 8000)..<Int((paused[1] - 0.1) * 8000)]
                #expect(silence.allSatisfy { $0 == 0 })
            }
        }

        /// The platform leg is the agent: its tone reaches the carrier (which echoes it back to
        /// the agent), its marks come back once played, and the session ends when the agent
        /// closes its socket.
        @Test func aVoiceAgentIsThePlatformLeg() async throws {
            try await Self.withPeers { _, gw, agent in
                let (session, rec) = try await Self.agentCall(
                    gw,
                    MediaWebSocket(
                        url: agent.url("/agent"), headers: ["Authorization": "Bearer agent-token"],
                        customParameters: ["mode": "tone", "markEvery": "10"]))
                defer { session.stop() }
                #expect(await rec.waitForStatus(.connected, timeout: 15), "\(rec.trace)")
                let open = await agent.waitFor("open").first
                #expect(open?.path == "/agent" && open?.authorization == "Bearer agent-token", "\(agent.report)")
                #expect(await agent.waitFor("start").first?.tracks == ["inbound"])
                // The carrier echoes what the agent says: the agent hears its own tone come back.
                #expect(
                    await eventually(timeout: 10) { agent.events.filter { $0.tone == true }.count >= 20 },
                    "\(agent.report)"
                )
                let marks = await agent.waitFor("mark", count: 2)
                #expect(marks.prefix(2).map(\.name) == ["tone-1", "tone-2"], "\(agent.report)")
                let snapshot = try await session.connection.sessions().first
                #expect(snapshot?.status == .connected)
                try await session.close()
                #expect(await rec.waitFor { _ in rec.ended != nil })
                #expect(await agent.waitFor("stop").count == 1, "\(agent.report)")
            }
        }

        /// The agent hears the digits the carrier sends (the simulator's DTMF number) as
        /// Twilio's `dtmf` messages.
        @Test func theCarriersDigitsReachTheAgent() async throws {
            try await Self.withPeers { _, gw, agent in
                let (session, rec) = try await Self.agentCall(
                    gw, MediaWebSocket(url: agent.url(), customParameters: ["mode": "listen"]), to: "+15550100009")
                defer { session.stop() }
                let digits = await agent.waitFor("dtmf", count: 5, timeout: 15)
                #expect(digits.compactMap(\.digit).joined() == "1234#", "\(agent.report)")
                #expect(digits.allSatisfy { $0.track == "inbound_track" || $0.track == "inbound" })
                try await session.close()
                #expect(await rec.waitFor { _ in rec.ended != nil })
            }
        }

        /// An inbound call joined with a voice agent as its leg (and recorded): the caller
        /// (SIPp, echoing) hears the agent, whose tone comes back to it; the answer has no SDP.
        @Test func anInboundCallIsAnsweredByAVoiceAgent() async throws {
            let agent = try await MediaAgent()
            defer { agent.stop() }
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await GatewayInboundTests.notification(gw) {
                try GatewayInboundTests.caller(gw, CallerScenarios.answered(talkMs: 3000), extra: ["-rtp_echo"])
            }
            defer { sipp.stop() }
            let n = try #require(note, "\(sipp.report)")
            let room = try #require(n.roomid)
            let body = """
                {"roomToken": "\(n.roomtoken ?? "")", "recording": {"channels": 2},
                 "media": {"websocket": {"url": "\(agent.url())", "customParameters": {"mode": "tone"}}}}
                """
            let r = try await GatewayAPIErrorTests.request(gw, "POST", "/v1/sessions/\(room)/join", body: body)
            #expect(r.status == 200 && !r.text.contains("sdp"), "\(r.text)")
            #expect(await agent.waitFor("start").first?.callSid == room, "\(agent.report)")
            #expect(
                await eventually(timeout: 10) { agent.events.filter { $0.tone == true }.count >= 20 }, "\(agent.report)"
            )
            #expect(await sipp.waitForExit(timeout: 15) == 0, "\(sipp.report)")
            let records = try await gw.recordsAfterStop()
            let record = try #require(records.first { $0.roomId == room })
            #expect(record.streams == 1 && record.recordingPath?.hasSuffix(room + ".wav") == true)
            #expect((record.recordingDurationSec ?? 0) > 1)
        }

        /// An agent's malformed messages are refused (one `onSessionError`), the call goes on,
        /// and its `clear` and marks still work: both marks come back.
        @Test func anAgentsBadMessagesAreRefusedWithoutEndingTheCall() async throws {
            try await Self.withPeers { _, gw, agent in
                let (session, rec) = try await Self.agentCall(
                    gw, MediaWebSocket(url: agent.url(), customParameters: ["mode": "burst", "burst": "10"]))
                defer { session.stop() }
                #expect(await rec.waitForStatus(.connected, timeout: 15), "\(rec.trace)")
                let marks = await agent.waitFor("mark", count: 2)
                #expect(Set(marks.compactMap(\.name)) == ["before-clear", "after-clear"], "\(agent.report)")
                #expect(
                    await rec.waitFor {
                        $0.contains { $0.event == .onSessionError && ($0.message ?? "").contains("refused") }
                    },
                    "\(rec.trace)")
                #expect(rec.events.filter { $0.event == .onSessionError }.count == 1, "reported once per stream")
                #expect(rec.ended == nil)
                #expect(try await session.connection.sessions().first?.status == .connected)
                try await session.close()
                #expect(await rec.waitFor { _ in rec.ended != nil })
            }
        }

        /// The agent closes its socket: the session ends, saying why.
        @Test func anAgentThatLeavesEndsTheSession() async throws {
            try await Self.withPeers { _, gw, agent in
                let (session, rec) = try await Self.agentCall(
                    gw, MediaWebSocket(url: agent.url(), customParameters: ["mode": "close"]))
                defer { session.stop() }
                #expect(await rec.waitFor(timeout: 15) { _ in rec.ended != nil }, "\(rec.trace)")
                #expect(
                    rec.events.contains { $0.stream?.state == "failed" && $0.stream?.kind == "agent" }, "\(rec.trace)")
                #expect(rec.events.contains { $0.event == .onSessionError && ($0.message ?? "").contains("stream") })
            }
        }

        /// Answering-machine detection on outbound calls to the simulator's person, voicemail
        /// (with its beep) and fax numbers, at once: each verdict in `onSessionAMD`, the beep's
        /// end in `onSessionBeep`, and the verdict in the call record.
        @Test func answeringMachineDetectionTellsWhoAnswered() async throws {
            try await Self.withPeers { _, gw, agent in
                let cases = [("+15550100032", "human"), ("+15550100033", "machine"), ("+15550100034", "fax")]
                var calls: [(IrisRtcAudioSession, SessionRecorder, String)] = []
                defer { for (session, _, _) in calls { session.stop() } }
                for (number, expected) in cases {
                    let rec = SessionRecorder()
                    let session = IrisRtcAudioSession(
                        connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
                    calls.append((session, rec, expected))
                    try await session.createWithTN(
                        targetTN: number, sourceTN: "+15557654321", amd: AMDOptions(mode: "detectBeep"))
                }
                var rooms: [String: String] = [:]
                for (session, rec, expected) in calls {
                    #expect(
                        await rec.waitFor(timeout: 20) { $0.contains { $0.amd != nil } }, "\(expected): \(rec.trace)")
                    let amd = rec.events.first { $0.amd != nil }?.amd
                    #expect(amd?.result == expected, "\(String(describing: amd))")
                    #expect((amd?.ms ?? 0) > 0 && (amd?.ms ?? 0) <= 10_000)
                    rooms[session.roomId ?? ""] = expected
                }
                let machine = calls[1].1
                #expect(await machine.waitFor(timeout: 20) { $0.contains { $0.beep != nil } }, "\(machine.trace)")
                let beep = machine.events.first { $0.beep != nil }?.beep
                #expect(
                    beep?.result == "beep" && (beep?.ms ?? 0) > (machine.events.first { $0.amd != nil }?.amd?.ms ?? 0))
                for (session, _, _) in calls { try await session.close() }
                let records = try await gw.recordsAfterStop()
                for (room, expected) in rooms {
                    #expect(records.first { $0.roomId == room }?.amdResult == expected)
                }
            }
        }

        /// A trunk with `recording.siprec`: a recorded call is copied to the recording server
        /// (SIPp) with its metadata naming both parties, both streams' RTP carries the call's
        /// audio, a hold sends the metadata again, and the copy ends with the call (a last
        /// metadata update, then BYE).
        @Test func aRecordedCallIsCopiedToTheSIPRECServer() async throws {
            try #require(SIPp.isInstalled)
            let inbound = try RTPSocketPeer(), outbound = try RTPSocketPeer()
            let sdp = SIPRECRecorderTests.answer(port1: inbound.address.port, port2: outbound.address.port)
            let checks = [
                ("require", "Require: siprec"), ("multipart", "Content-Type: multipart/mixed;boundary="),
                ("srcTag", "Contact: [^\\r\\n]*;\\+sip\\.src"), ("label1", "a=label:1"), ("label2", "a=label:2"),
                ("carrier", "aor=\\\"tel:\\+15550100001\\\""), ("app", "aor=\\\"tel:\\+15557654321\\\"")
            ]
            let xml = """
                <?xml version="1.0" encoding="ISO-8859-1" ?>
                <scenario name="SIPREC recording server for a gateway">
                \(SIPRECRecorderTests.recv("INVITE", checks: checks))
                \(SIPRECRecorderTests.ok(sdp, tag: true))
                  <recv request="ACK"/>
                \(SIPRECRecorderTests.recv("INVITE", checks: [("held", "recording-session")]))
                \(SIPRECRecorderTests.ok(sdp, tag: false))
                  <recv request="ACK"/>
                \(SIPRECRecorderTests.recv("INVITE", checks: [("stop", "&lt;stop-time&gt;")]))
                \(SIPRECRecorderTests.ok(sdp, tag: false))
                  <recv request="ACK"/>
                  <recv request="BYE"/>
                \(SIPRECRecorderTests.byeOK)
                </scenario>
                """
            let srs = try await SIPp.listening(.inline(name: "srs", xml: xml))
            defer { srs.stop() }
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            var profile = GatewayProcess.Profile(proxies: [sim.port])
            profile.extra = "recording: { siprec: \"sip:srs@127.0.0.1:\(srs.port)\" },"
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.createWithTN(
                targetTN: "+15550100001", sourceTN: "+15557654321", recording: RecordingOptions())
            #expect(
                await rec.waitFor(timeout: 15) { $0.contains { $0.recording?.siprec == "recording" } }, "\(rec.trace)")
            let arrived = await eventually(
                timeout: 10,
                drain: {
                    inbound.drain(); outbound.drain()
                }
            ) {
                inbound.packets(payloadType: 0).count >= 50 && outbound.packets(payloadType: 0).count >= 50
            }
            #expect(arrived, "\(inbound.packets(payloadType: 0).count), \(outbound.packets(payloadType: 0).count)")
            for peer in [inbound, outbound] {
                var pcm: [Int16] = []
                for packet in peer.packets(payloadType: 0).suffix(20) { G711.decodeULaw(packet.payload, into: &pcm) }
                #expect(Goertzel(frequency: 440, sampleRate: 8000).energyRatio(pcm) > 0.5)
            }
            // A hold is news for the recording server: its metadata comes again.
            try await session.hold()
            #expect(await rec.waitForStatus(.hold, timeout: 10), "\(rec.trace)")
            #expect(await eventually(timeout: 10) { srs.received("INVITE ") >= 2 }, "\(srs.report)")
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(await srs.waitForExit(timeout: 10) == 0, "\(srs.report)")
        }

        /// A fork whose consumer leaves ends alone (`failed`, the reason; the call goes on), and
        /// a session holds at most `mediaStreams.maxForksPerSession` forks (409 past it).
        @Test func aForkThatFailsEndsAloneAndForksAreBounded() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            let agent = try await MediaAgent()
            defer { agent.stop() }
            let gw = try await GatewayProcess(
                profiles: [GatewayProcess.Profile(proxies: [sim.port])],
                config: "{ mediaStreams: { maxForksPerSession: 1 } }")
            defer { gw.stop() }
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.createWithTN(targetTN: "+15550100001", sourceTN: "+15557654321")
            #expect(await rec.waitForStatus(.connected, timeout: 15), "\(rec.trace)")
            let fork = try await session.startStream(
                StreamRequest(url: agent.url(), customParameters: ["mode": "close"]))
            #expect(
                await rec.waitFor {
                    $0.contains { $0.stream?.streamId == fork.streamId && $0.stream?.state == "failed" }
                },
                "\(rec.trace)")
            #expect(rec.ended == nil)
            _ = try await session.startStream(StreamRequest(url: agent.url(), customParameters: ["mode": "listen"]))
            do {
                _ = try await session.startStream(StreamRequest(url: agent.url()))
                Issue.record("a second fork was taken")
            } catch {
                #expect("\(error)".contains("maxForksPerSession"), "\(error)")
            }
            #expect(try await session.connection.sessions().first?.status == .connected)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
        }

        /// Bad requests are refused with a JSON error naming the field, and nothing is created.
        @Test func badRequestsAreRefused() async throws {
            try await Self.withPeers { _, gw, agent in
                let ws = "{\"url\":\"\(agent.url())\"}"
                let numbers = "\"targetTN\":\"+15550100001\",\"sourceTN\":\"+15557654321\""
                let cases: [(body: String, field: String)] = [
                    (
                        "{\(numbers),\"media\":{\"websocket\":{\"url\":\"http://example.test/\"}}}",
                        "media.websocket.url"
                    ),
                    (
                        "{\(numbers),\"media\":{\"websocket\":{\"url\":\"\(agent.url())\",\"encoding\":\"audio/opus\"}}}",
                        "media.websocket.encoding"
                    ),
                    ("{\(numbers),\"media\":{}}", "media: give sdp"),
                    (
                        "{\(numbers),\"media\":{\"websocket\":\(ws)},\"recording\":{\"channels\":3}}",
                        "recording.channels"
                    ),
                    (
                        "{\(numbers),\"media\":{\"websocket\":\(ws)},\"recording\":{\"format\":\"mp3\"}}",
                        "recording.format"
                    ),
                    ("{\(numbers),\"media\":{\"websocket\":\(ws)},\"amd\":{\"mode\":\"guess\"}}", "amd.mode")
                ]
                for c in cases {
                    let r = try await GatewayAPIErrorTests.request(gw, "POST", "/v1/sessions", body: c.body)
                    #expect(r.status == 400 && r.text.contains(c.field), "\(c.field): \(r.status) \(r.text)")
                }
                let none = try await GatewayAPIErrorTests.request(
                    gw, "POST", "/v1/sessions/nosuchroom/recording",
                    body: "{\"action\":\"pause\"}")
                #expect(none.status == 404, "\(none.text)")
                #expect(try await gw.connection().sessions().isEmpty)
                #expect(agent.events.filter { $0.event == "open" }.isEmpty, "no stream was opened")
            }
        }
    }
}
