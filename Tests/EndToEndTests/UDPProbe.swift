import Foundation
import Glibc
import SIP
import TestSupport

/// A plain UDP socket on 127.0.0.1 for sending hand-made datagrams to the agent and reading
/// what comes back, without any SIP stack in between.
final class UDPProbe: @unchecked Sendable {
    private let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var sa = loopback(port: 0)
        let rc = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw SocketError("bind")
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: sa.sin_port))
    }

    deinit { close(fd) }

    /// Sends `bytes` to `host` (an IPv4 address on lo, 127.0.0.1 by default) at `port`.
    func send(_ bytes: [UInt8], to port: Int, host: String = "127.0.0.1") {
        var sa = loopback(port: port)
        sa.sin_addr.s_addr = inet_addr(host)
        _ = withUnsafePointer(to: &sa) { addr in
            addr.withMemoryRebound(to: sockaddr.self, capacity: 1) { to in
                bytes.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, 0, to, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The next datagram, or nil when none arrives within `timeout` seconds (polls, suspending
    /// between tries).
    func receive(timeout: Double) async -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var got: [UInt8]? = nil
        _ = await eventually(timeout: timeout) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { got = Array(buffer[0..<n]) }
            return got != nil
        }
        return got
    }
}
