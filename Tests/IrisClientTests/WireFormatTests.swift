import Foundation
import Testing
@testable import IrisClient
@testable import WebClient

/// The byte-level pieces under the clients: the accept key, WebSocket frames, HTTP heads, URLs.
struct WireFormatTests {
    @Test func acceptKeyOfRFC6455() {
        // RFC 6455 §1.3's example handshake.
        #expect(WebSocketHandshake.accept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func clientFramesAreMaskedWithEveryLengthForm() throws {
        for length in [0, 5, 125, 126, 65_535, 65_536] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            let bytes = WebSocketFrame(fin: true, opcode: .binary, payload: payload).encodedMasked(key: 0x1234_5678)
            #expect(bytes[0] == 0x82)
            #expect(bytes[1] & 0x80 == 0x80, "mask bit")
            let header = length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
            #expect(bytes.count == header + 4 + length)
            let key = Array(bytes[header..<(header + 4)])
            #expect(key == [0x12, 0x34, 0x56, 0x78])
            let unmasked = bytes[(header + 4)...].enumerated().map { $0.element ^ key[$0.offset & 3] }
            #expect(unmasked == payload)
        }
    }

    @Test func serverFramesParseAndViolationsAreRejected() throws {
        // Incomplete frames wait for more bytes.
        #expect(try WebSocketFrame.parse([0x81], limit: 100) == nil)
        #expect(try WebSocketFrame.parse([0x81, 0x05, 0x68], limit: 100) == nil)
        let (frame, used) = try #require(try WebSocketFrame.parse([0x81, 0x02, 0x68, 0x69, 0xFF], limit: 100))
        #expect(frame == WebSocketFrame(fin: true, opcode: .text, payload: [0x68, 0x69]))
        #expect(used == 4)
        let rejected: [[UInt8]] = [
            [0x81, 0x81, 0, 0, 0, 0, 0],  // masked by the server
            [0xC1, 0x00],  // RSV1 without an extension
            [0x83, 0x00],  // reserved opcode
            [0x09, 0x00],  // fragmented ping
            [0x89, 0x7E, 0x00, 0x7E],  // 126-byte ping
        ]
        for bytes in rejected {
            #expect(throws: IrisTransportError.self, "\(bytes)") { try WebSocketFrame.parse(bytes[...], limit: 1000) }
        }
        #expect(throws: IrisTransportError.tooLarge(what: "WebSocket frame", limit: 10)) {
            try WebSocketFrame.parse([0x82, 0x0B] + [UInt8](repeating: 0, count: 11), limit: 10)
        }
    }

    @Test func responseHeadParsing() throws {
        let head = try HTTPResponseHead.parse(Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A: 1\r\nx-a: 2\r\nX-Folded: one\r\n  two\r\nContent-Length: 7, 7".utf8))
        #expect(head.status == 200)
        #expect(head.reason == "OK")
        #expect(head.headers["content-type"] == "application/json")
        #expect(head.headers["x-a"] == "1, 2")
        #expect(head.headers["x-folded"] == "one two")
        #expect(try head.contentLength() == 7)
        #expect(throws: IrisTransportError.self) { try HTTPResponseHead.parse(Array("SIP/2.0 200 OK".utf8)) }
        #expect(throws: IrisTransportError.self) { try HTTPResponseHead.parse(Array("HTTP/1.1 2000 OK".utf8)) }
        #expect(throws: IrisTransportError.self) { try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nno colon".utf8)) }
        let conflicting = try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2".utf8))
        #expect(throws: IrisTransportError.self) { try conflicting.contentLength() }
        let chunked = try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked".utf8))
        #expect(chunked.isChunked)
    }

    @Test func urls() throws {
        #expect(try ClientURL.parse("ws://127.0.0.1:8080/v1/events?call=1")
                == ClientURL(scheme: .ws, host: "127.0.0.1", port: 8080, target: "/v1/events?call=1"))
        #expect(try ClientURL.parse("http://[::1]:9000") == ClientURL(scheme: .http, host: "::1", port: 9000, target: "/"))
        #expect(try ClientURL.parse("http://[::1]:9000").hostHeader == "[::1]:9000")
        #expect(try ClientURL.parse("ws://LOCALHOST?x=1") == ClientURL(scheme: .ws, host: "localhost", port: 80, target: "/?x=1"))
        // TLS schemes: 443 by default, a DNS name allowed (its certificate must name it).
        #expect(try ClientURL.parse("https://127.0.0.1") == ClientURL(scheme: .https, host: "127.0.0.1", port: 443, target: "/"))
        #expect(try ClientURL.parse("wss://[::1]/v1/events") == ClientURL(scheme: .wss, host: "::1", port: 443, target: "/v1/events"))
        #expect(try ClientURL.parse("wss://GW.Example.NET:8443/v1/events?x=1")
                == ClientURL(scheme: .wss, host: "gw.example.net", port: 8443, target: "/v1/events?x=1"))
        #expect(try ClientURL.parse("http://hooks.example.net/irisgw") == ClientURL(scheme: .http, host: "hooks.example.net", port: 80,
                                                                                     target: "/irisgw"))
        #expect(try ClientURL.parse("https://127.0.0.1").scheme.isSecure && !ClientURL.parse("ws://127.0.0.1").scheme.isSecure)
        for bad in ["ftp://127.0.0.1/", "http://", "http://exa_mple.com/", "https://-bad.example/", "http://a..b/", "http://127.0.0.1:0/",
                    "http://127.0.0.1:99999/", "http://u@127.0.0.1/", "https://1.2.3/"] {
            #expect(throws: IrisTransportError.self, "\(bad)") { try ClientURL.parse(bad) }
        }
    }

    @Test func toneLevelMeasure() {
        let rate = 8_000
        let tone = (0..<8_000).map { Int16(10_000 * sin(2 * Double.pi * 697 * Double($0) / Double(rate))) }
        #expect(ReceivedAudio.toneLevel(tone, hz: 697, sampleRate: rate) > 0.99)
        #expect(ReceivedAudio.toneLevel(tone, hz: 1_209, sampleRate: rate) < 0.01)
        #expect(ReceivedAudio.toneLevel([Int16](repeating: 0, count: 800), hz: 697, sampleRate: rate) == 0)
        #expect(ReceivedAudio.toneLevel([], hz: 697, sampleRate: rate) == 0)
        #expect(ReceivedAudio.toneLevel(tone, hz: 5_000, sampleRate: rate) == 0)
        var audio = ReceivedAudio(sampleRate: rate, recordingLimitSeconds: 0.5)
        tone.withUnsafeBufferPointer { audio.append($0) }
        #expect(audio.recordingCopy() == Array(tone.prefix(4_000)))
        #expect(audio.last(100) == Array(tone.suffix(100)))

        // Past the 10 s ring: the newest samples, across the wrap point.
        let ramp = (0..<(11 * rate)).map { Int16(truncatingIfNeeded: $0) }
        for start in stride(from: 0, to: ramp.count, by: 160) {
            ramp[start..<(start + 160)].withUnsafeBufferPointer { audio.append($0) }
        }
        #expect(audio.last(5 * rate) == Array(ramp.suffix(5 * rate)))
        #expect(audio.last(20 * rate).count == 10 * rate)
        #expect(audio.recordingCopy().count == 4_000)
        audio.clear()
        #expect(audio.last(100).isEmpty && audio.recordingCopy().isEmpty)
    }
}
