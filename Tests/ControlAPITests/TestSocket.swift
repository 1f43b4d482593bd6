// A TCP client socket on 127.0.0.1 or [::1] for the tests: every read and write has a
// timeout, so a server bug fails a test instead of hanging the suite, and every read and write
// that can wait runs on a dispatch thread (`offThePool`), so a waiting test holds no thread of
// the cooperative pool.

import Glibc
import TestSupport

struct TestSocketError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

final class TestSocket {
    let fd: Int32
    /// Bytes received but not consumed yet.
    private var buffer: [UInt8] = []

    /// Connects to `host`:`port` (127.0.0.1 or an IPv6 literal such as "::1").
    /// `receiveBuffer` shrinks SO_RCVBUF (a client that does not read then fills up quickly).
    init(port: Int, host: String = "127.0.0.1", timeout: Double = 5, receiveBuffer: Int? = nil) throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError("socket: errno \(errno)") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let rc: Int32
        if v6 {
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &addr.sin6_addr)
            rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = UInt16(port).bigEndian
            addr.sin_addr.s_addr = inet_addr(host)
            rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        // No close here: deinit runs even when init throws (every property is set), and a
        // second close could hit a descriptor another test has opened meanwhile.
        guard rc == 0 else { throw TestSocketError("connect to port \(port): errno \(errno)") }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Sends all of `bytes` (a full socket buffer waits, at most the send timeout).
    func write(_ bytes: [UInt8]) async throws {
        let fd = fd
        let failed = await offThePool { () -> Int32? in
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard n > 0 else { return errno }
                sent += n
            }
            return nil
        }
        if let failed { throw TestSocketError("send: errno \(failed)") }
    }

    func write(_ text: String) async throws { try await write(Array(text.utf8)) }

    /// Reads what is available into the buffer (waits for it, at most the read timeout).
    /// False at end of stream; throws on timeout.
    @discardableResult
    func fill() async throws -> Bool {
        let fd = fd
        let (chunk, error) = await offThePool { () -> ([UInt8], Int32) in
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return n < 0 ? ([], errno) : (Array(chunk[0..<n]), 0)
        }
        guard error == 0 else {
            throw TestSocketError(error == EAGAIN ? "read timed out" : "recv: errno \(error)")
        }
        if chunk.isEmpty { return false }
        buffer += chunk
        return true
    }

    /// Bytes up to and including `marker`.
    func read(through marker: [UInt8]) async throws -> [UInt8] {
        while true {
            if let end = find(marker) {
                let out = Array(buffer[0..<end])
                buffer.removeFirst(end)
                return out
            }
            guard try await fill() else { throw TestSocketError("connection closed before \(marker)") }
        }
    }

    func read(exactly count: Int) async throws -> [UInt8] {
        while buffer.count < count {
            guard try await fill() else {
                throw TestSocketError("connection closed after \(buffer.count) of \(count) bytes")
            }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    /// Reads and discards until the peer closes. True when it did (a reset counts), false
    /// when the read timeout came first.
    func isClosedByPeer() async -> Bool {
        while true {
            do {
                if try await !fill() { return true }
                buffer.removeAll()
            } catch {
                return "\(error)".contains("errno \(ECONNRESET)")
            }
        }
    }

    private func find(_ marker: [UInt8]) -> Int? {
        guard buffer.count >= marker.count else { return nil }
        for i in 0...(buffer.count - marker.count) where buffer[i] == marker[0] {
            if Array(buffer[i..<(i + marker.count)]) == marker { return i + marker.count }
        }
        return nil
    }
}

extension TestSocket {
    /// Closes the client side now (the descriptor stays reserved until deinit).
    func closeNow() {
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
