// BENCH stream and BENCH record on a tiny size against the debug `irisgw` next to the test
// binary, their lines parsed; and the echo agent's own pieces (its framer, its reply).

import Foundation
import HTTP
import TestSupport
import Testing

@testable import irisgw_bench

@Suite struct MediaServicesBenchTests {
    static var irisgw: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("irisgw").path
    }

    static let tiny = MediaServicesBench.Settings(calls: 2, seconds: 2, warmup: 0.5, stepTimeout: 20)

    /// `key=value` pairs of a `BENCH name ...` line.
    static func fields(_ line: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in line.split(separator: " ").dropFirst(2) {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[String(kv[0])] = String(kv[1]) }
        }
        return out
    }

    @Test func streamMeasuresBothKindsOfCallAndTheEcho() async throws {
        let line = await offThePool { MediaServicesBench.stream(irisgw: Self.irisgw, settings: Self.tiny) }
        #expect(line.hasPrefix("BENCH stream calls=2 "), "\(line)")
        #expect(!line.contains("skipped"), "\(line)")
        let f = Self.fields(line)
        for key in ["stream_cpu_ms_per_call_s", "rtp_cpu_ms_per_call_s", "ratio", "delay_p50_ms", "rtp_delay_p50_ms"] {
            #expect(Double(f[key] ?? "") != nil, "\(key) in \(line)")
        }
        #expect((Double(f["stream_cpu_ms_per_call_s"] ?? "") ?? 0) > 0, "\(line)")
        // The agent answered the carrier's audio, and the bursts came back to the carrier.
        #expect((Int(f["agent_media_echoed"] ?? "") ?? 0) > 0, "\(line)")
        #expect((Int(f["bursts_echoed"] ?? "") ?? 0) > 0, "\(line)")
        #expect((Int(f["rtp_bursts_echoed"] ?? "") ?? 0) > 0, "\(line)")
        #expect(f["agent"] == "swift")
    }

    @Test func recordMeasuresWAVAndOggOnDisk() async throws {
        let lines = await offThePool { MediaServicesBench.record(irisgw: Self.irisgw, settings: Self.tiny) }
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("BENCH record calls=2 format=wav channels=2 ") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("BENCH record-ogg calls=2 format=ogg channels=2 ") == true, "\(lines)")
        for line in lines {
            #expect(!line.contains("skipped"), "\(line)")
            let f = Self.fields(line)
            #expect(f["recordings"] == "2", "\(line)")
            #expect(Double(f["ratio"] ?? "") != nil, "\(line)")
            #expect((Int(f["disk_bytes"] ?? "") ?? 0) > 0, "\(line)")
            #expect((Double(f["disk_bytes_per_call_s"] ?? "") ?? 0) > 0, "\(line)")
        }
        // Stereo 16-bit at 8 kHz is 32,000 bytes a second (and a header); Opus far less.
        let wav = Double(Self.fields(lines[0])["disk_bytes_per_call_s"] ?? "") ?? 0
        let ogg = Double(Self.fields(lines[1])["disk_bytes_per_call_s"] ?? "") ?? 0
        #expect(wav > 30_000 && wav < 34_000, "\(lines[0])")
        #expect(ogg < wav / 4, "\(lines[1])")
    }

    @Test(
        arguments: [
            (
                "{\"event\":\"media\",\"sequenceNumber\":\"3\",\"streamSid\":\"MZ1\",\"media\":{\"track\":\"inbound\",\"chunk\":\"2\",\"timestamp\":\"40\",\"payload\":\"/w==\"}}",
                "{\"event\":\"media\",\"media\":{\"payload\":\"/w==\"},\"streamSid\":\"MZ1\"}"
            ),
            ("{\"event\":\"start\",\"streamSid\":\"MZ1\",\"start\":{}}", nil),
            ("{\"event\":\"mark\",\"streamSid\":\"MZ1\",\"mark\":{\"name\":\"m\"}}", nil),
            ("not json", nil)
        ] as [(String, String?)])
    func theAgentAnswersMediaOnly(_ incoming: String, _ expected: String?) throws {
        let reply = AgentEcho.reply(to: incoming)
        if let expected {
            let got = try JSONSerialization.jsonObject(with: Data((reply ?? "{}").utf8)) as? NSDictionary
            let want = try JSONSerialization.jsonObject(with: Data(expected.utf8)) as? NSDictionary
            #expect(got == want, "\(reply ?? "nil")")
        } else {
            #expect(reply == nil)
        }
    }

    /// The upgrade head, then masked frames (a text message in two fragments, a ping), cut
    /// at every byte.
    @Test func theAgentsFramerTakesTheUpgradeThenMessages() throws {
        let head = Array(
            "GET /agent HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                .utf8)
        let frames =
            WebSocketFrame(fin: false, opcode: .text, payload: Array("hel".utf8)).encodedMasked(key: 0x1234_5678)
            + WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8)).encodedMasked(key: 7)
            + WebSocketFrame(fin: true, opcode: .ping, payload: [1, 2]).encodedMasked(key: 9)
        var framer = AgentFramer()
        var out: [AgentFramer.Frame] = []
        for byte in head + frames {
            out += try [byte].withUnsafeBytes { try framer.append($0) }
        }
        #expect(out.count == 3)
        guard out.count == 3 else { return }
        if case .upgrade(let key) = out[0] { #expect(key == "dGhlIHNhbXBsZSBub25jZQ==") } else { Issue.record() }
        if case .message(let text) = out[1] { #expect(text == "hello") } else { Issue.record() }
        if case .ping(let payload) = out[2] { #expect(payload == [1, 2]) } else { Issue.record() }
        #expect(framer.upgraded && framer.pending == 0)

        var plain = AgentFramer()
        let refused = try Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { try plain.append($0) }
        if case .upgrade(let key)? = refused.first { #expect(key == nil) } else { Issue.record() }
    }
}
