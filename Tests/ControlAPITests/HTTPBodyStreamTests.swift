// Streamed response bodies (a pcap): produced a part at a time as the client reads, with
// the length announced up front, over real sockets on 127.0.0.1.

import ControlAPI
import Synchronization
import TestSupport
import Testing

/// A body of `length` bytes (byte i is i % 251), made on demand; counts the parts asked for.
final class CountingStream: HTTPBodyStream {
    let length: Int
    private let state = Mutex((written: 0, parts: 0))

    init(length: Int) { self.length = length }

    var parts: Int { state.withLock { $0.parts } }
    var written: Int { state.withLock { $0.written } }

    func write(into out: inout [UInt8], upTo bytes: Int) -> Bool {
        state.withLock { s in
            let n = min(bytes, length - s.written)
            out += (s.written..<(s.written + n)).map { UInt8($0 % 251) }
            s.written += n
            s.parts += 1
            return s.written < length
        }
    }
}

@Suite struct HTTPBodyStreamTests {
    @Test func aStreamedBodyArrivesWholeWithItsLengthThenTheNextRequestIsServed() async throws {
        let length = 3 << 20
        let (server, port, _) = try startServer(handler: { request in
            request.path == "/file"
                ? HTTPResponse(status: 200, stream: CountingStream(length: length)) : .text(200, "next")
        })
        defer { server.stop() }
        let socket = try TestSocket(port: port, timeout: 20)
        try await socket.sendRequest("GET", "/file")
        let file = try await socket.readResponse()
        #expect(file.status == 200 && file.headers["content-length"] == String(length))
        #expect(file.body.count == length)
        #expect(file.body.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        try await socket.sendRequest("GET", "/other")
        #expect(try await socket.readResponse().text == "next", "keep-alive goes on after the stream")
    }

    /// A client that does not read holds the server to a part or so in its buffers, not the
    /// file: the stream is asked for parts only as they go out.
    @Test func aReaderThatStallsGetsPartsOnlyAsItReads() async throws {
        let stream = CountingStream(length: 64 << 20)
        let (server, port, _) = try startServer(handler: { _ in HTTPResponse(status: 200, stream: stream) })
        defer { server.stop() }
        let socket = try TestSocket(port: port, timeout: 5, receiveBuffer: 4096)
        try await socket.sendRequest("GET", "/file")
        // The server writes until the socket buffers are full, then waits for the reader.
        #expect(await eventually(timeout: 5) { stream.written > 0 })
        // Settled: nothing more made for 200 ms of the polls.
        var last = (written: -1, since: ContinuousClock.now)
        #expect(
            await eventually(timeout: 5) {
                let written = stream.written
                if written != last.written { last = (written, ContinuousClock.now) }
                return ContinuousClock.now - last.since >= .milliseconds(200)
            }, "the stream kept being read into memory")
        #expect(stream.written < 16 << 20, "\(stream.written >> 20) MiB made for a reader that read nothing")
    }

    @Test func headGetsTheStreamsLengthAndNoBody() async throws {
        let stream = CountingStream(length: 1000)
        let (server, port, _) = try startServer(handler: { request in
            request.method == "HEAD" ? HTTPResponse(status: 200, stream: stream) : .text(200, "after")
        })
        defer { server.stop() }
        let socket = try TestSocket(port: port)
        try await socket.sendRequest("HEAD", "/file")
        let head = try await socket.readResponse(head: true)
        #expect(head.headers["content-length"] == "1000")
        try await socket.sendRequest("GET", "/file")
        #expect(try await socket.readResponse().text == "after")
        #expect(stream.parts == 0)
    }
}
