import Foundation
import Media
import MediaStreams
import TestSupport
import Testing
import WebClient

@testable import CarrierTest

/// The `stream` step's own WebSocket server on 127.0.0.1 (a port the OS picks), with WebClient
/// as the gateway's side, and the step's judgement of what the server heard.
@Suite struct SuiteStreamServerTests {
    static let sid = "MZ0123456789abcdef0123456789abcdef"

    static func start(tracks: [String] = ["inbound"], sid: String = sid, callSid: String = "room-1") -> String {
        MediaStreamMessage.start(
            .init(
                sequenceNumber: "1", streamSid: sid,
                start: .init(
                    streamSid: sid, accountSid: "AC1", callSid: callSid, tracks: tracks, customParameters: [:],
                    mediaFormat: .init(encoding: "audio/x-mulaw", sampleRate: 8000)))
        ).json
    }

    /// `count` 20 ms messages of `hz` (silence when 0) on `track`, mu-law, from chunk `first`.
    static func media(track: String = "inbound", hz: Double, count: Int, first: Int = 1) -> [String] {
        (0..<count).map { n in
            let samples = (0..<160).map { i -> Int16 in
                hz == 0 ? 0 : Int16(9000 * sin(2 * Double.pi * hz * Double((first + n) * 160 + i) / 8000))
            }
            return MediaStreamMessage.media(
                .init(
                    sequenceNumber: "\(first + n + 1)", streamSid: sid,
                    media: .init(
                        track: track, chunk: "\(first + n)", timestamp: "\((first + n) * 20)",
                        payload: Data(MediaStreamAudioFormat.mulaw8k.encode(samples)).base64EncodedString()))
            ).json
        }
    }

    static let connected = MediaStreamMessage.connected(.init()).json
    static let stop = MediaStreamMessage.stop(
        .init(sequenceNumber: "99", streamSid: sid, stop: .init(accountSid: "AC1", callSid: "room-1"))
    ).json

    /// A client like the gateway's fork: connects, sends `messages`, and keeps the socket.
    static func connect(_ server: SuiteStreamServer, path: String = "") async throws -> WebSocketClient {
        try await offThePool { () throws(IrisTransportError) in
            try WebSocketClient(url: server.url + path, timeout: 5)
        }
    }

    static func send(_ client: WebSocketClient, _ messages: [String]) async throws {
        try await offThePool { () throws(IrisTransportError) in
            for m in messages { try client.send(text: m) }
        }
    }

    @Test func aForkThatDeliversPassesAndItsStopIsSeen() async throws {
        let server = try SuiteStreamServer(host: "127.0.0.1")
        defer { server.stop() }
        #expect(server.url.hasPrefix("ws://127.0.0.1:") && server.url.hasSuffix("/stream"), "\(server.url)")
        let client = try await Self.connect(server)
        defer { client.closeWithoutWaiting() }
        let step = StreamStep(track: .both, minAudioSec: 1, toneHz: 1000)
        try await Self.send(client, [Self.connected, Self.start(tracks: ["inbound", "outbound"])])
        #expect(await eventually(timeout: 5) { server.capture.start != nil })
        #expect(server.capture.path == "/stream" && server.capture.connections == 1)
        #expect(
            server.capture.judge(step, streamSid: Self.sid, callSid: "room-1")
                == .pending("0.00 s of inbound audio of the 1.00 s asked (0 media messages in all)"))
        // A second of silence, then a second of the tone on each track: the silence does not count.
        try await Self.send(
            client,
            Self.media(hz: 0, count: 50) + Self.media(hz: 1000, count: 50, first: 51)
                + Self.media(track: "outbound", hz: 1000, count: 50))
        #expect(
            await eventually(timeout: 5) {
                server.capture.judge(step, streamSid: Self.sid, callSid: "room-1") == .passed
            }, "\(server.capture.judge(step, streamSid: Self.sid, callSid: "room-1"))")
        #expect(server.capture.mediaMessages == 150 && !server.capture.stopped)
        try await Self.send(client, [Self.stop])
        #expect(await eventually(timeout: 5) { server.capture.stopped })
        // The server answers pings (the client's ping waits for the pong).
        try await offThePool { () throws(IrisTransportError) in try client.ping([1, 2, 3]) }
    }

    @Test func whatIsWrongIsNamed() async throws {
        let server = try SuiteStreamServer(host: "127.0.0.1")
        defer { server.stop() }
        let step = StreamStep(track: .inbound, minAudioSec: 0.5, toneHz: 1000)
        #expect(
            server.capture.judge(step, streamSid: Self.sid, callSid: "room-1")
                == .pending("the gateway did not connect to the suite's WebSocket"))
        let client = try await Self.connect(server)
        defer { client.closeWithoutWaiting() }
        try await Self.send(client, [Self.connected, Self.start()] + Self.media(hz: 440, count: 50))
        #expect(await eventually(timeout: 5) { server.capture.mediaMessages == 50 })
        var pcm: [Int16] = []
        G711.decodeULaw(server.capture.audio["inbound"] ?? [], into: &pcm)
        let share = StreamCapture.toneShare(hz: 1000, in: pcm)
        #expect(
            server.capture.judge(step, streamSid: Self.sid, callSid: "room-1")
                == .pending(
                    String(
                        format: "the 1000 Hz tone holds %.0f %% of the inbound audio (expected most of it)", share * 100
                    )
                ))
        #expect(
            server.capture.judge(step, streamSid: "MZother", callSid: "room-1")
                == .failed("start names streamSid \(Self.sid); the fork is MZother"))
        #expect(
            server.capture.judge(step, streamSid: Self.sid, callSid: "room-2")
                == .failed("start names callSid room-1; the call's roomId is room-2"))
        #expect(
            server.capture.judge(StreamStep(track: .both), streamSid: Self.sid, callSid: "room-1")
                == .failed("start names tracks inbound; expected inbound, outbound"))
        // A message outside Twilio's set fails the step whatever else came.
        try await Self.send(client, ["{\"event\":\"hello\"}"])
        #expect(
            await eventually(timeout: 5) {
                if case .failed(let why) = server.capture.judge(step, streamSid: Self.sid, callSid: "room-1") {
                    return why.hasPrefix("a message Twilio's format does not allow")
                        && why.hasSuffix("{\"event\":\"hello\"}")
                }
                return false
            }, "\(server.capture.judge(step, streamSid: Self.sid, callSid: "room-1"))")
    }

    @Test func messagesOutOfOrderAreNamed() {
        var capture = StreamCapture()
        capture.connections = 1
        for m in Self.media(hz: 1000, count: 1) + [Self.start(), Self.connected] { capture.take(m) }
        #expect(
            capture.judge(StreamStep(), streamSid: Self.sid, callSid: nil)
                == .failed("media came before start; start came before connected; connected came again"))
    }

    /// Not a WebSocket upgrade: 400, and the step names it.
    @Test func aPlainRequestIsRefused() async throws {
        let server = try SuiteStreamServer(host: "127.0.0.1")
        defer { server.stop() }
        let base = server.url.replacingOccurrences(of: "ws://", with: "http://")
            .replacingOccurrences(of: "/stream", with: "")
        let response = try await HTTPClient(baseURL: base).request(method: "GET", path: "/stream", timeout: 5)
        #expect(response.status == 400)
        #expect(
            server.capture.judge(StreamStep(), streamSid: Self.sid, callSid: nil)
                == .failed("the upgrade request: not a WebSocket upgrade (version 13) to /stream"))
    }

    @Test func theServerListensWhereTheGatewayCanReachIt() {
        #expect(SuiteRunner.streamHost(forAPI: "http://127.0.0.1:8088") == "127.0.0.1")
        #expect(SuiteRunner.streamHost(forAPI: "http://localhost:8088") == "127.0.0.1")
        #expect(SuiteRunner.streamHost(forAPI: "http://[::1]:8088") == "::1")
        #expect(SuiteRunner.streamHost(forAPI: "http://127.0.0.2:8088") == "127.0.0.1")
        #expect(SuiteRunner.streamHost(forAPI: "not a url") == "127.0.0.1")
    }
}
