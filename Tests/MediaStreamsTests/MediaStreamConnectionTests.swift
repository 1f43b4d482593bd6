import Foundation
import Media
import MediaStreams
import Synchronization
import TestSupport
import Testing
import WebClient

/// Streams to a real agent: the Python `websockets` server of `MediaAgent` on 127.0.0.1,
/// over ws:// and wss:// (a certificate from the test PKI).
@Suite(.enabled(if: MediaAgent.isInstalled, "PyPI websockets is not in .build/pyenv (make deps installs it)"))
struct MediaStreamConnectionTests {
    /// The connection a player's echo goes to (made after the player).
    final class Target: @unchecked Sendable {
        var connection: MediaStreamConnection?
    }

    /// What a test starts: the agent, maybe its PKI, and the stream; `close()` in a `defer`.
    struct Setup {
        let agent: MediaAgent
        let pki: TestPKI?
        let connection: MediaStreamConnection
        let recorder: StreamRecorder
        let echoes: EchoLog

        init(
            secure: Bool = false, mode: String, parameters: [String: String] = [:],
            configure: (inout MediaStreamConfiguration) -> Void = { _ in }
        ) async throws {
            let pki = secure ? try await TestPKI() : nil
            let certificate = try await pki?.issue("agent", commonName: "127.0.0.1", altNames: ["IP:127.0.0.1"])
            do {
                agent = try await MediaAgent(certificate: certificate)
            } catch {
                pki?.remove()
                throw error
            }
            self.pki = pki
            var configuration = MediaStreamConfiguration(url: agent.url())
            configuration.caFile = pki?.caFile
            configuration.headers = ["Authorization": "Bearer agent-token"]
            configure(&configuration)
            let target = Target()
            let echoes = EchoLog()
            let player = MediaStreamPlayer { name in
                echoes.add(name)
                target.connection?.sendMark(name)
            }
            let recorder = StreamRecorder(player: player)
            connection = MediaStreamConnection(configuration) { recorder.handle($0) }
            target.connection = connection
            self.recorder = recorder
            self.echoes = echoes
            connection.start(
                streamSid: "MZ-test", accountSid: "AC-test", callSid: "CA-test",
                customParameters: parameters.merging(["mode": mode]) { a, _ in a })
        }

        func close() {
            connection.stop()
            agent.stop()
            pki?.remove()
        }

        func opened() async -> Bool { await eventually(timeout: 10) { recorder.events.contains(.opened) } }

        /// Sends `frames` in batches no bigger than the queue's bound, waiting for each batch
        /// to leave: a reading agent never makes the queue drop.
        func send(_ frames: [[Int16]], batch: Int = 25) async -> Bool {
            for start in stride(from: 0, to: frames.count, by: batch) {
                for frame in frames[start..<min(frames.count, start + batch)] { connection.sendAudio(frame) }
                guard await eventually(timeout: 10, { connection.statistics.queuedMessages == 0 }) else { return false }
            }
            return true
        }
    }

    /// What the agent gets back after mu-law: the frame through the codec both ways.
    static func throughMuLaw(_ frame: [Int16]) -> [Int16] {
        var bytes: [UInt8] = [], pcm: [Int16] = []
        G711.encodeULaw(frame, into: &bytes)
        G711.decodeULaw(bytes, into: &pcm)
        return pcm
    }

    @Test(arguments: [false, true])
    func echoedToneComesBackAndMarksFollowTheirAudio(secure: Bool) async throws {
        let setup = try await Setup(secure: secure, mode: "echo", parameters: ["markEvery": "25"])
        defer { setup.close() }
        let (agent, connection, recorder) = (setup.agent, setup.connection, setup.recorder)
        #expect(await setup.opened(), "\(recorder.events) \(agent.report)")
        let tone = Tone.frames(hz: 440, count: 50)
        #expect(await setup.send(tone))
        #expect(
            await eventually(timeout: 10) { recorder.audio.count == 50 && recorder.events.contains(.mark("mark-2")) },
            "\(recorder.audio.count) frames; \(agent.report)")

        // The player hands out the echo frame by frame; each mark once the 25 frames before it went.
        var played: [[Int16]] = []
        for i in 1...50 {
            guard let frame = recorder.player?.nextFrame() else { break }
            played.append(frame)
            let expected = i < 25 ? [] : i < 50 ? ["mark-1"] : ["mark-1", "mark-2"]
            #expect(setup.echoes.names == expected, "after frame \(i)")
        }
        #expect(recorder.player?.nextFrame() == nil)
        #expect(played == tone.map(Self.throughMuLaw))
        #expect(Tone.share(of: 440, in: played.flatMap { $0 }) > 0.9)
        #expect(await agent.waitFor("mark", count: 2).map(\.name) == ["mark-1", "mark-2"], "\(agent.report)")

        // What the agent saw: the upgrade, connected, start, the media numbered as Twilio numbers it.
        let open = agent.events.first { $0.event == "open" }
        #expect(open?.path == "/stream" && open?.authorization == "Bearer agent-token")
        let connected = agent.events.first { $0.event == "connected" }
        #expect(connected?.protocol == "Call" && connected?.version == "1.0.0")
        let start = agent.events.first { $0.event == "start" }
        #expect(start?.seq == "1" && start?.streamSid == "MZ-test" && start?.callSid == "CA-test")
        #expect(start?.accountSid == "AC-test" && start?.tracks == ["inbound"])
        #expect(start?.mediaFormat?["encoding"] == .string("audio/x-mulaw"))
        #expect(start?.mediaFormat?["sampleRate"] == .number(8_000) && start?.mediaFormat?["channels"] == .number(1))
        let media = await agent.waitFor("media", count: 50)
        #expect(media.map(\.seq) == (2...51).map { String($0) })
        #expect(media.map(\.chunk) == (1...50).map { String($0) })
        #expect(media.map(\.timestamp) == (0..<50).map { String($0 * 20) })
        #expect(media.allSatisfy { $0.bytes == 160 && $0.track == "inbound" })

        connection.sendDTMF("5")
        let dtmf = await agent.waitFor("dtmf").first
        #expect(dtmf?.digit == "5" && dtmf?.track == "inbound_track" && dtmf?.seq == "54")
        connection.stop()
        let stop = await agent.waitFor("stop").first
        #expect(stop?.seq == "55" && stop?.callSid == "CA-test" && stop?.accountSid == "AC-test")
        #expect(await eventually(timeout: 10) { recorder.ends == [.stopped] }, "\(recorder.ends)")
        let statistics = connection.statistics
        #expect(statistics.sentAudioFrames == 50 && statistics.droppedAudioFrames == 0)
    }

    @Test func clearDropsTheQueuedAudio() async throws {
        let setup = try await Setup(mode: "burst", parameters: ["burst": "10", "after": "2"])
        defer { setup.close() }
        let (agent, recorder) = (setup.agent, setup.recorder)
        #expect(await setup.opened(), "\(agent.report)")
        let tone = Tone.frames(hz: 1_000, count: 10)
        #expect(await setup.send(tone))
        #expect(await eventually(timeout: 10) { recorder.events.contains(.mark("after-clear")) }, "\(agent.report)")

        // The agent's first two messages were refused, named; the stream went on.
        #expect(recorder.refusals.count == 2)
        #expect(recorder.refusals.first == .missingField("media"))
        #expect(
            recorder.refusals.last
                == .invalidValue(field: "streamSid", reason: "\"MZ-not-this-one\" is not this stream's"))
        #expect(connection(setup).statistics.refusedMessages == 2)
        // Ten frames arrived before the clear: none is played; its mark was echoed by the clear.
        #expect(recorder.audio.count == 12)
        #expect(setup.echoes.names == ["before-clear"])
        #expect(recorder.player?.queuedSamples == 320)
        #expect(recorder.player?.nextFrame() == Self.throughMuLaw(tone[8]))
        #expect(setup.echoes.names == ["before-clear"])
        #expect(recorder.player?.nextFrame() == Self.throughMuLaw(tone[9]))
        #expect(setup.echoes.names == ["before-clear", "after-clear"])
        #expect(recorder.player?.nextFrame() == nil)
        #expect(await agent.waitFor("mark", count: 2).map(\.name) == ["before-clear", "after-clear"])
    }

    private func connection(_ setup: Setup) -> MediaStreamConnection { setup.connection }

    @Test func wideBandAudioGoesAsL16() async throws {
        let setup = try await Setup(mode: "listen") { $0.audioFormat = .l16at16k }
        defer { setup.close() }
        let agent = setup.agent
        #expect(await setup.opened(), "\(agent.report)")
        let frames = Tone.frames(hz: 440, rate: 16_000, samples: 320, count: 3)
        #expect(await setup.send(frames))
        let media = await agent.waitFor("media", count: 3)
        #expect(media.count == 3 && media.allSatisfy { $0.bytes == 640 }, "\(agent.report)")
        let head = MediaStreamAudioFormat.l16at16k.encode(Array(frames[1].prefix(4)))
        #expect(media.dropFirst().first?.head == head.map { String(format: "%02x", $0) }.joined())
        let format = agent.events.first { $0.event == "start" }?.mediaFormat
        #expect(format?["encoding"] == .string("audio/l16;rate=16000") && format?["sampleRate"] == .number(16_000))
    }

    @Test func slowAgentMakesTheQueueDropItsOldestAudio() async throws {
        let setup = try await Setup(mode: "slow") { $0.maxQueuedAudioFrames = 50 }
        defer { setup.close() }
        let (agent, connection, recorder) = (setup.agent, setup.connection, setup.recorder)
        #expect(await setup.opened(), "\(agent.report)")
        #expect(await agent.waitFor("sleeping").count == 1, "\(agent.report)")
        // Batches as big as the queue leave while the socket has room; once the agent's side
        // is full they stay, and the queue drops.
        let frame = Tone.frames(hz: 440, count: 1)[0]
        var total = 0
        let dropped = await eventually(timeout: 60) {
            for _ in 0..<50 { connection.sendAudio(frame) }
            total += 50
            _ = await eventually(timeout: 1) { connection.statistics.queuedMessages == 0 }
            return connection.statistics.droppedAudioFrames > 0
        }
        #expect(dropped, "\(connection.statistics) after \(total) frames")
        let statistics = connection.statistics
        #expect(statistics.queuedMessages <= 50)
        #expect(statistics.sentAudioFrames + statistics.droppedAudioFrames + statistics.queuedMessages == total)
        // A stop does not wait for the stuck agent.
        connection.stop()
        #expect(await eventually(timeout: 10) { recorder.ends == [.stopped] }, "\(recorder.ends)")
    }

    @Test func killedAgentIsReportedOnce() async throws {
        let setup = try await Setup(mode: "echo")
        defer { setup.close() }
        let (agent, connection, recorder) = (setup.agent, setup.connection, setup.recorder)
        #expect(await setup.opened(), "\(agent.report)")
        #expect(await setup.send(Tone.frames(hz: 440, count: 5)))
        #expect(await agent.waitFor("media", count: 5).count == 5)
        await agent.kill()
        #expect(await eventually(timeout: 10) { !recorder.ends.isEmpty })
        guard case .failed(let error)? = recorder.ends.first else {
            Issue.record("ended \(recorder.ends)")
            return
        }
        #expect(error.kind == .connection, "\(error)")
        // Nothing after the end: audio is ignored, stop reports nothing more.
        connection.sendAudio(Tone.frames(hz: 440, count: 1)[0])
        connection.stop()
        #expect(recorder.ends.count == 1)
        #expect(recorder.events.last == .ended(.failed(error)))
    }

    @Test func agentClosingEndsTheStreamWithItsReason() async throws {
        let setup = try await Setup(mode: "close")
        defer { setup.close() }
        #expect(await eventually(timeout: 10) { !setup.recorder.ends.isEmpty }, "\(setup.agent.report)")
        #expect(setup.recorder.ends == [.closedByAgent(code: 1000, reason: "bye")])
    }

    @Test func unreachableAgentIsReportedOnce() async throws {
        let port = try freePort()
        let recorder = StreamRecorder()
        let connection = MediaStreamConnection(MediaStreamConfiguration(url: "ws://127.0.0.1:\(port)/")) {
            recorder.handle($0)
        }
        connection.start(streamSid: "MZ-x", accountSid: "AC-x", callSid: "CA-x")
        connection.sendAudio(Tone.frames(hz: 440, count: 1)[0])
        #expect(await eventually(timeout: 10) { !recorder.ends.isEmpty })
        guard case .failed(let error)? = recorder.ends.first else {
            Issue.record("ended \(recorder.ends)")
            return
        }
        #expect(error.kind == .connection, "\(error)")
        connection.stop()
        #expect(recorder.ends.count == 1 && !recorder.events.contains(.opened))
    }
}
