import HTTP
import Testing

/// RFC 6455 framing both ways, the message assembler and the handshake's accept key.
struct WebSocketFrameTests {
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
            [0x89, 0x7E, 0x00, 0x7E]  // 126-byte ping
        ]
        for bytes in rejected {
            #expect(throws: WebSocketFrameError.self, "\(bytes)") { try WebSocketFrame.parse(bytes[...], limit: 1000) }
        }
        #expect(throws: WebSocketFrameError.tooLarge(what: "WebSocket frame", limit: 10)) {
            try WebSocketFrame.parse([0x82, 0x0B] + [UInt8](repeating: 0, count: 11), limit: 10)
        }
    }

    @Test func clientFramesParseOnTheServerSideUnmasked() throws {
        let payload = Array("hello".utf8)
        let wire = WebSocketFrame(fin: true, opcode: .text, payload: payload).encodedMasked(key: 0xA1B2_C3D4)
        let (frame, used) = try #require(try WebSocketFrame.parseMasked(wire[...], limit: 100))
        #expect(frame == WebSocketFrame(fin: true, opcode: .text, payload: payload) && used == wire.count)
        // An unmasked frame from a client is refused (§5.1) with 1002.
        let unmasked = WebSocketFrame(fin: true, opcode: .text, payload: payload).encoded()
        let error = #expect(throws: WebSocketFrameError.self) {
            try WebSocketFrame.parseMasked(unmasked[...], limit: 100)
        }
        #expect(error?.closeCode == 1002)
    }

    @Test func fragmentsAreJoinedAndLimitsHold() throws {
        var assembler = WebSocketMessageAssembler(limit: 6)
        #expect(try assembler.add(WebSocketFrame(fin: false, opcode: .text, payload: Array("ab".utf8))) == nil)
        let whole = try #require(
            try assembler.add(WebSocketFrame(fin: true, opcode: .continuation, payload: Array("cd".utf8))))
        #expect(whole.opcode == .text && whole.payload == Array("abcd".utf8))
        let stray = #expect(throws: WebSocketFrameError.self) {
            try assembler.add(WebSocketFrame(fin: true, opcode: .continuation, payload: []))
        }
        #expect(stray?.closeCode == 1002)
        _ = try assembler.add(WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2, 3, 4]))
        #expect(throws: WebSocketFrameError.tooLarge(what: "WebSocket message", limit: 6)) {
            try assembler.add(WebSocketFrame(fin: true, opcode: .continuation, payload: [5, 6, 7]))
        }
        #expect(WebSocketFrameError.tooLarge(what: "x", limit: 1).closeCode == 1009)
    }

    @Test func closePayloadKeepsTheReasonWholeCharacters() {
        let payload = WebSocketFrame.closePayload(code: 1000, reason: String(repeating: "é", count: 100))
        #expect(payload.count <= 125 && payload.prefix(2) == [0x03, 0xE8])
        #expect(String(validating: payload.dropFirst(2), as: UTF8.self) != nil)
    }
}
