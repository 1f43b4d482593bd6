// RFC 6455 framing for both ends of a WebSocket: the client (WebClient) masks what it sends
// and refuses masked frames; the control API's server (ControlAPI) sends unmasked frames and
// requires masked ones. One codec for both.

/// One WebSocket frame (RFC 6455 §5.2), unmasked.
package struct WebSocketFrame: Sendable, Equatable {
    /// RFC 6455 §11.8 opcodes.
    package enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        package var isControl: Bool { rawValue & 0x8 != 0 }
    }

    package var fin: Bool
    package var opcode: Opcode
    package var payload: [UInt8]

    package init(fin: Bool, opcode: Opcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame as a client sends it (§5.3: always masked with a fresh key):
    ///
    ///     FIN RSV1-3 opcode(4) | MASK=1 len(7) [len(16) | len(64)] | mask key(32) | payload ^ key
    package func encodedMasked(key: UInt32) -> [UInt8] {
        var out = header(masked: true, extra: 4)
        let mask = [
            UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8),
            UInt8(truncatingIfNeeded: key)
        ]
        out += mask
        for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i & 3]) }
        return out
    }

    /// The frame as a server sends it (§5.1: never masked).
    package func encoded() -> [UInt8] {
        var out = header(masked: false, extra: 0)
        out += payload
        return out
    }

    /// A close frame's body: the code, then the reason. A control frame holds 125 bytes: the
    /// code and up to 123 of reason, cut between characters so the reason stays valid UTF-8.
    package static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var reason = Substring(reason)
        while reason.utf8.count > 123 { reason.removeLast() }
        return [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)] + Array(reason.utf8)
    }

    /// A server's unmasked text frame for `text`, written straight into `out` (the server's
    /// output buffer), without building the payload array first.
    package static func appendText(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            appendLength(first: 0x80 | Opcode.text.rawValue, length: utf8.count, masked: false, to: &out)
            out.append(contentsOf: utf8)
        }
    }

    private func header(masked: Bool, extra: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 10 + extra)
        Self.appendLength(first: (fin ? 0x80 : 0) | opcode.rawValue, length: payload.count, masked: masked, to: &out)
        return out
    }

    private static func appendLength(first: UInt8, length: Int, masked: Bool, to out: inout [UInt8]) {
        let mask: UInt8 = masked ? 0x80 : 0
        out.append(first)
        if length < 126 {
            out.append(mask | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(mask | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(truncatingIfNeeded: length))
        } else {
            out.append(mask | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift)))
            }
        }
    }

    /// Parses one frame from a server at the start of `bytes`; nil when the frame is not
    /// complete yet. Returns the frame and how many bytes it took.
    ///
    /// Rejects, as RFC 6455 requires of a client: a masked frame (§5.1), RSV bits without an
    /// extension (§5.2), unknown opcodes, fragmented or oversized control frames (§5.5), and
    /// a 64-bit length with the top bit set (§5.2); a payload over `limit` is `.tooLarge`
    /// (the client then closes with 1009, message too big).
    package static func parse(
        _ bytes: ArraySlice<UInt8>, limit: Int
    ) throws(WebSocketFrameError) -> (WebSocketFrame, Int)? {
        try parse(bytes, limit: limit, fromClient: false)
    }

    /// Parses one frame from a client (the server's side): the same checks as `parse`,
    /// except that the frame must be masked (§5.1); the payload is returned unmasked.
    package static func parseMasked(
        _ bytes: ArraySlice<UInt8>, limit: Int
    ) throws(WebSocketFrameError) -> (WebSocketFrame, Int)? {
        try parse(bytes, limit: limit, fromClient: true)
    }

    private static func parse(
        _ bytes: ArraySlice<UInt8>, limit: Int, fromClient: Bool
    ) throws(WebSocketFrameError) -> (WebSocketFrame, Int)? {
        guard bytes.count >= 2 else { return nil }
        let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
        guard b0 & 0x70 == 0 else {
            throw .protocolViolation("reserved bits set without a negotiated extension", code: 1002)
        }
        guard let opcode = Opcode(rawValue: b0 & 0x0F) else {
            throw .protocolViolation("unknown opcode \(b0 & 0x0F)", code: 1002)
        }
        let fin = b0 & 0x80 != 0
        let masked = b1 & 0x80 != 0
        if fromClient {
            guard masked else { throw .protocolViolation("the client sent an unmasked frame", code: 1002) }
        } else {
            guard !masked else { throw .protocolViolation("the server masked a frame", code: 1002) }
        }
        var header = 2
        var length = UInt64(b1 & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[bytes.startIndex + 2]) << 8 | UInt64(bytes[bytes.startIndex + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(bytes[bytes.startIndex + i]) }
            guard length >> 63 == 0 else {
                throw .protocolViolation("64-bit payload length with the top bit set", code: 1002)
            }
            header = 10
        }
        if opcode.isControl {
            guard fin else { throw .protocolViolation("fragmented control frame", code: 1002) }
            guard length <= 125 else {
                throw .protocolViolation("control frame of \(length) bytes (max 125)", code: 1002)
            }
        }
        guard length <= UInt64(limit) else { throw .tooLarge(what: "WebSocket frame", limit: limit) }
        let maskStart = header
        if masked { header += 4 }
        let total = header + Int(length)
        guard bytes.count >= total else { return nil }
        let start = bytes.startIndex + header
        var payload = Array(bytes[start..<(start + Int(length))])
        if masked {
            let key = bytes.startIndex + maskStart
            let mask = [bytes[key], bytes[key + 1], bytes[key + 2], bytes[key + 3]]
            for i in payload.indices { payload[i] ^= mask[i & 3] }
        }
        return (WebSocketFrame(fin: fin, opcode: opcode, payload: payload), total)
    }
}
