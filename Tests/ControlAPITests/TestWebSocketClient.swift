// A minimal RFC 6455 client: opening handshake (with the Sec-WebSocket-Accept check),
// masked frames out, unmasked frames in.

import Foundation

struct WebSocketFrame {
    var fin: Bool
    var opcode: UInt8
    var payload: [UInt8]
    var text: String { String(decoding: payload, as: UTF8.self) }
    /// The status code of a close frame.
    var closeCode: UInt16? {
        guard opcode == 0x8, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }
}

final class TestWebSocket {
    enum Opening {
        case open(TestWebSocket)
        case refused(TestResponse)
    }

    let socket: TestSocket

    private init(socket: TestSocket) { self.socket = socket }

    static func connect(
        port: Int, host: String = "127.0.0.1", path: String = "/events", headers: [(String, String)] = [],
        receiveBuffer: Int? = nil
    ) async throws -> Opening {
        let socket = try TestSocket(port: port, host: host, receiveBuffer: receiveBuffer)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try await socket.write(head + "\r\n")

        let headBytes = try await socket.read(through: Array("\r\n\r\n".utf8))
        let lines = String(decoding: headBytes, as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 101") else {
            // Not upgraded: read it again as an ordinary response.
            let status = lines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            var fields: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: " ")
            }
            let body = try await socket.read(exactly: Int(fields["content-length"] ?? "0") ?? 0)
            return .refused(TestResponse(status: status, headers: fields, body: body))
        }
        let accept = lines.first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: " ") }
        let expected = Data(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        guard accept == expected else {
            throw TestSocketError("Sec-WebSocket-Accept \(accept ?? "missing"), expected \(expected)")
        }
        return .open(TestWebSocket(socket: socket))
    }

    /// Opens or throws.
    static func open(
        port: Int, host: String = "127.0.0.1", path: String = "/events", receiveBuffer: Int? = nil
    ) async throws -> TestWebSocket {
        switch try await connect(port: port, host: host, path: path, receiveBuffer: receiveBuffer) {
        case .open(let ws): return ws
        case .refused(let response): throw TestSocketError("upgrade refused: \(response.status) \(response.text)")
        }
    }

    /// `count` clients opened one after the other.
    static func open(
        _ count: Int, port: Int, path: String = "/events", receiveBuffer: Int? = nil
    ) async throws -> [TestWebSocket] {
        var opened: [TestWebSocket] = []
        for _ in 0..<count { opened.append(try await open(port: port, path: path, receiveBuffer: receiveBuffer)) }
        return opened
    }

    /// A client frame: always masked (RFC 6455 §5.3).
    func send(opcode: UInt8, _ payload: [UInt8]) async throws {
        var frame: [UInt8] = [0x80 | opcode]
        switch payload.count {
        case 0..<126:
            frame.append(0x80 | UInt8(payload.count))
        case 126..<65_536:
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        default:
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (UInt64($0) * 8)) & 0xff) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try await socket.write(frame)
    }

    func send(text: String) async throws { try await send(opcode: 0x1, Array(text.utf8)) }

    func sendClose(code: UInt16 = 1000) async throws {
        try await send(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xff)])
    }

    /// The next frame from the server (which must not mask).
    func readFrame() async throws -> WebSocketFrame {
        let head = try await socket.read(exactly: 2)
        guard head[1] & 0x80 == 0 else { throw TestSocketError("server frame is masked") }
        var length = Int(head[1] & 0x7f)
        if length == 126 {
            let ext = try await socket.read(exactly: 2)
            length = Int(ext[0]) << 8 | Int(ext[1])
        } else if length == 127 {
            length = try await socket.read(exactly: 8).reduce(0) { $0 << 8 | Int($1) }
        }
        return WebSocketFrame(
            fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0f, payload: try await socket.read(exactly: length))
    }

    /// Reads frames until a close frame, ignoring data frames.
    func readUntilClose() async throws -> WebSocketFrame {
        while true {
            let frame = try await readFrame()
            if frame.opcode == 0x8 { return frame }
        }
    }
}

/// SHA-1 (FIPS 180-4), only to check the handshake's Sec-WebSocket-Accept.
enum SHA1 {
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        let bitLength = UInt64(message.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        data += (0..<8).reversed().map { UInt8((bitLength >> (UInt64($0) * 8)) & 0xff) }

        for block in stride(from: 0, to: data.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for t in 0..<16 {
                let i = block + t * 4
                w[t] =
                    UInt32(data[i]) << 24 | UInt32(data[i + 1]) << 16 | UInt32(data[i + 2]) << 8 | UInt32(data[i + 3])
            }
            for t in 16..<80 { w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for t in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    switch t {
                    case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                    case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                    case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (b ^ c ^ d, 0xCA62_C1D6)
                    }
                let temp = rotl(a, 5) &+ f &+ e &+ k &+ w[t]
                (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { word in (0..<4).reversed().map { UInt8((word >> (UInt32($0) * 8)) & 0xff) } }
    }

    private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}
