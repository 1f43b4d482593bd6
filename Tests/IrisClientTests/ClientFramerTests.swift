import IOCore
import Testing

@testable import WebClient

/// The client's framers, bytes in and frames out, no socket: responses cut whole however the
/// bytes are split, the bytes after a 101 handed to the WebSocket framer.
struct ClientFramerTests {
    static let chunked =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"
        + "5\r\nalpha\r\n3;ext=1\r\n-be\r\n0\r\nTrailer: x\r\n\r\n"

    /// Feeds `text` in pieces of `step` bytes; the responses cut.
    static func feed<F: StreamFramer>(_ framer: inout F, _ bytes: [UInt8], step: Int) throws -> [F.Frame] {
        var out: [F.Frame] = []
        var i = 0
        while i < bytes.count {
            let piece = Array(bytes[i..<min(bytes.count, i + step)])
            out += try piece.withUnsafeBytes { raw in try framer.append(raw) }
            i += step
        }
        return out
    }

    static func feed(_ framer: inout HTTPResponseFramer, _ text: String, step: Int) throws -> [HTTPClientResponse] {
        try feed(&framer, Array(text.utf8), step: step)
    }

    @Test(arguments: [1, 2, 7, 1000])
    func chunkedResponseAfterAnInterimOneIsCutWhole(step: Int) throws {
        var framer = HTTPResponseFramer(method: "GET", maxBodyBytes: 1000)
        let responses = try Self.feed(&framer, Self.chunked, step: step)
        #expect(
            responses == [
                HTTPClientResponse(
                    status: 200, headers: ["transfer-encoding": "chunked", "x-a": "1"],
                    body: Array("alpha-be".utf8))
            ])
        #expect(framer.pending == 0)
    }

    @Test func bodiesByLengthToTheEndAndNone() throws {
        var length = HTTPResponseFramer(method: "GET", maxBodyBytes: 100)
        let cut = try Self.feed(&length, "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabcIGNORED", step: 4)
        #expect(cut.map(\.body) == [Array("abc".utf8)])

        var toEnd = HTTPResponseFramer(method: "GET", maxBodyBytes: 100)
        #expect(try Self.feed(&toEnd, "HTTP/1.0 200 OK\r\n\r\nuntil the end", step: 5).isEmpty)
        #expect(toEnd.pending > 0)
        #expect(try toEnd.endOfStream(during: "x").body == Array("until the end".utf8))

        var head = HTTPResponseFramer(method: "HEAD", maxBodyBytes: 100)
        #expect(try Self.feed(&head, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", step: 100).map(\.status) == [200])
    }

    @Test func oversizedOrBrokenResponsesAreRefused() throws {
        var big = HTTPResponseFramer(method: "GET", maxBodyBytes: 10)
        #expect(throws: IrisTransportError.tooLarge(what: "response body", limit: 10)) {
            try Self.feed(&big, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", step: 100)
        }
        var head = HTTPResponseFramer(method: "GET", maxHeadBytes: 64, maxBodyBytes: 10)
        #expect(throws: IrisTransportError.tooLarge(what: "response head", limit: 64)) {
            try Self.feed(&head, "HTTP/1.1 200 OK\r\nX: " + String(repeating: "y", count: 100), step: 100)
        }
        var bad = HTTPResponseFramer(method: "GET", maxBodyBytes: 10)
        #expect(throws: IrisTransportError.self) { try Self.feed(&bad, "SIP/2.0 200 OK\r\n\r\n", step: 100) }
        var cut = HTTPResponseFramer(method: "GET", maxBodyBytes: 10)
        _ = try Self.feed(&cut, "HTTP/1.1 200 OK\r\n", step: 100)
        #expect(throws: IrisTransportError.malformedResponse("connection closed inside the response head")) {
            try cut.endOfStream(during: "x")
        }
    }

    @Test(arguments: [1, 3, 1000])
    func framesThatCameWithThe101AreHandedOver(step: Int) throws {
        // A text frame "hi", a ping "p", then a frame with a reserved bit set.
        let frames: [UInt8] = [0x81, 2, 0x68, 0x69, 0x89, 1, 0x70, 0xC1, 0]
        let bytes = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8) + frames
        var framer = WebSocketUpgradeFramer(limit: 1000)
        let out = try Self.feed(&framer, bytes, step: step)
        #expect(out.count == 4)
        guard out.count == 4 else { return }
        if case .response(let r) = out[0] {
            #expect(r.status == 101 && r.headers["upgrade"] == "websocket")
        } else {
            Issue.record("\(out[0])")
        }
        if case .frame(let f) = out[1] {
            #expect(f.opcode == .text && f.payload == Array("hi".utf8))
        } else {
            Issue.record("\(out[1])")
        }
        if case .frame(let f) = out[2] {
            #expect(f.opcode == .ping && f.payload == [0x70])
        } else {
            Issue.record("\(out[2])")
        }
        if case .invalid(let e) = out[3] { #expect(e.closeCode == 1002) } else { Issue.record("\(out[3])") }
    }
}
