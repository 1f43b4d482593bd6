import Foundation
import Glibc
import IOCore
import SDP

/// A client of rtpengine's ng control protocol over UDP: each request is `<cookie> <bencoded
/// dictionary>`, and the reply carries the same cookie. A request without a reply is sent
/// again with the same cookie (rtpengine answers a retransmission from its cache).
final class NGClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let socket: UDPSocket
    private let server: RawSocketAddress
    private var counter = 0
    private let prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    init(server: SocketAddress) throws {
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 1 << 20)
        guard let raw = RawSocketAddress(server) else { throw Failure(description: "bad ng address \(server)") }
        self.server = raw
    }

    /// Sends `command` with `arguments`; returns the reply dictionary. Throws when no reply
    /// came after `attempts` tries of `timeout` seconds, or the reply says `result: error`.
    func request(
        _ command: String, _ arguments: [String: Bencode] = [:], timeout: Double = 1, attempts: Int = 3
    ) throws -> Bencode {
        counter += 1
        let cookie = "\(prefix)_\(counter)"
        var dict = arguments
        dict["command"] = .string(command)
        let message = Array("\(cookie) ".utf8) + Bencode.dict(dict).encoded()
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { rx.deallocate() }
        var from = RawSocketAddress()
        for _ in 0..<attempts {
            message.withUnsafeBytes { _ = socket.send($0, to: server) }
            let deadline = EventLoop.now() + timeout
            while EventLoop.now() < deadline {
                var pfd = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
                let ms = Int32(max(1, (deadline - EventLoop.now()) * 1000))
                guard poll(&pfd, 1, ms) > 0 else { continue }
                while let n = socket.receive(into: rx, from: &from) {
                    let bytes = Array(UnsafeRawBufferPointer(rebasing: rx[0..<n]))
                    guard let space = bytes.firstIndex(of: UInt8(ascii: " ")),
                        String(decoding: bytes[..<space], as: UTF8.self) == cookie
                    else { continue }  // a late reply to an earlier try
                    let reply = try Bencode.decode(Array(bytes[(space + 1)...]))
                    if reply["result"]?.stringValue == "error" {
                        throw Failure(description: "\(command): \(reply["error-reason"]?.stringValue ?? "error")")
                    }
                    return reply
                }
            }
        }
        throw Failure(description: "\(command): no reply from rtpengine in \(attempts) x \(timeout) s")
    }
}
