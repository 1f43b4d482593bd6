/// One WebSocket frame (RFC 6455 §5.2), unmasked.
struct WebSocketFrame: Sendable, Equatable {
    /// RFC 6455 §11.8 opcodes.
    enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    var fin: Bool
    var opcode: Opcode
    var payload: [UInt8]

    /// The frame as a client sends it (§5.3: always masked with a fresh key):
    ///
    ///     FIN RSV1-3 opcode(4) | MASK=1 len(7) [len(16) | len(64)] | mask key(32) | payload ^ key
    func encodedMasked(key: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let length = payload.count
        if length < 126 {
            out.append(0x80 | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(truncatingIfNeeded: length))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift))) }
        }
        let mask = [UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)]
        out += mask
        for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i & 3]) }
        return out
    }

    /// Parses one frame from a server at the start of `bytes`; nil when the frame is not
    /// complete yet. Returns the frame and how many bytes it took.
    ///
    /// Rejects, as RFC 6455 requires of a client: a masked frame (§5.1), RSV bits without an
    /// extension (§5.2), unknown opcodes, fragmented or oversized control frames (§5.5), and
    /// a 64-bit length with the top bit set (§5.2); a payload over `limit` is `.tooLarge`
    /// (the client then closes with 1009, message too big).
    static func parse(_ bytes: ArraySlice<UInt8>, limit: Int) throws(IrisTransportError) -> (WebSocketFrame, Int)? {
        guard bytes.count >= 2 else { return nil }
        let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
        guard b0 & 0x70 == 0 else { throw .webSocketProtocol("reserved bits set without a negotiated extension", code: 1002) }
        guard let opcode = Opcode(rawValue: b0 & 0x0F) else {
            throw .webSocketProtocol("unknown opcode \(b0 & 0x0F)", code: 1002)
        }
        let fin = b0 & 0x80 != 0
        guard b1 & 0x80 == 0 else { throw .webSocketProtocol("the server masked a frame", code: 1002) }
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
            guard length >> 63 == 0 else { throw .webSocketProtocol("64-bit payload length with the top bit set", code: 1002) }
            header = 10
        }
        if opcode.isControl {
            guard fin else { throw .webSocketProtocol("fragmented control frame", code: 1002) }
            guard length <= 125 else { throw .webSocketProtocol("control frame of \(length) bytes (max 125)", code: 1002) }
        }
        guard length <= UInt64(limit) else { throw .tooLarge(what: "WebSocket frame", limit: limit) }
        let total = header + Int(length)
        guard bytes.count >= total else { return nil }
        let start = bytes.startIndex + header
        return (WebSocketFrame(fin: fin, opcode: opcode, payload: Array(bytes[start..<(start + Int(length))])), total)
    }
}
