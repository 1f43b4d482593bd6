import Glibc
import TestSupport
import Testing

@testable import SIP

/// RFC 5626 §3.5.1 / §4.4.1 keep-alives on SIP over TCP, with real sockets: a double-CRLF
/// ping to us gets a single-CRLF pong; a connection we opened that goes quiet gets pings,
/// and is closed when one goes unanswered.
@Suite struct TCPKeepaliveTests {
    /// A blocking TCP socket with a receive timeout, for the test's side of the wire; read
    /// on a dispatch thread while the test suspends.
    final class Wire {
        let fd: Int32
        init(fd: Int32) {
            self.fd = fd
            var tv = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
        deinit { close(fd) }

        static func connect(to address: SocketAddress) throws -> Wire {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard address.withSockAddr({ Glibc.connect(fd, $0, $1) }) == 0 else {
                close(fd); throw SocketError("connect")
            }
            return Wire(fd: fd)
        }

        func send(_ text: String) { _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }

        /// Reads until `done` says the bytes so far are enough, the peer closes (nil), or
        /// `timeout` seconds pass (what came so far).
        func read(timeout: Double, until done: @escaping ([UInt8]) -> Bool) async -> [UInt8]? {
            await offThePool { self.readBlocking(timeout: timeout, until: done) }
        }

        /// Bytes read past what `next` returned: a test slowed down by a loaded machine may
        /// get the OPTIONS and the first ping in one read.
        private var leftover: [UInt8] = []

        /// The next `length` bytes, or up to and with the first `terminator`; nil once the
        /// peer closed first.
        func next(timeout: Double, length: Int? = nil, terminator: [UInt8] = []) async -> [UInt8]? {
            func end(_ bytes: [UInt8]) -> Int? {
                if let length { return bytes.count >= length ? length : nil }
                guard bytes.count >= terminator.count else { return nil }
                return (0...(bytes.count - terminator.count)).first {
                    Array(bytes[$0..<($0 + terminator.count)]) == terminator
                }
                .map { $0 + terminator.count }
            }
            guard let got = await read(timeout: timeout, until: { end($0) != nil }), let cut = end(got) else {
                return nil
            }
            leftover = Array(got[cut...])
            return Array(got[..<cut])
        }

        private func readBlocking(timeout: Double, until done: ([UInt8]) -> Bool) -> [UInt8]? {
            var got = leftover
            leftover = []
            let deadline = SIPEventLoop.now() + timeout
            var chunk = [UInt8](repeating: 0, count: 4096)
            while SIPEventLoop.now() < deadline, !done(got) {
                let n = recv(fd, &chunk, chunk.count, 0)
                if n == 0 { return nil }
                if n > 0 { got += chunk[0..<n] }
            }
            return got
        }
    }

    @Test func aPingGetsAPong() async throws {
        let ua = try SIPUserAgent(
            configuration: SIPUserAgentConfiguration(listen: [(.tcp, SocketAddress(host: "127.0.0.1", port: 0))]))
        let bound = try ua.start()
        defer { ua.shutdown() }
        let wire = try Wire.connect(to: bound[0].address)
        wire.send("\r\n\r\n")
        #expect(await wire.read(timeout: 5) { $0 == Array("\r\n".utf8) } == Array("\r\n".utf8))
    }

    @Test func aQuietConnectionOfOursIsPingedAndClosedWhenNoPongComes() async throws {
        var c = SIPUserAgentConfiguration(listen: [(.tcp, SocketAddress(host: "127.0.0.1", port: 0))])
        // Long enough that a test delayed by a loaded machine still reads the OPTIONS, each
        // ping and the close apart (at 0.3/0.8 s it was closed before the test answered; at
        // 3 s a pong from a test starved in a full suite once came too late). The connection
        // looks at the pong when the ping's deadline comes: the next ping follows then.
        c.transportLimits.keepaliveInterval = 1
        c.transportLimits.keepaliveTimeout = 6
        let ua = try SIPUserAgent(configuration: c)
        try ua.start()
        defer { ua.shutdown() }
        // The trunk: a listener of the test's.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        #expect(
            SocketAddress(host: "127.0.0.1", port: 0).withSockAddr { bind(listener, $0, $1) } == 0
                && listen(listener, 4) == 0)
        let trunk = try #require(SocketAddress.local(of: listener))
        await ua.loop.run {
            ua.sendRequest(
                "OPTIONS", to: SIPURI(host: "127.0.0.1", port: trunk.port),
                peer: SIPPeer(transport: .tcp, address: trunk),
                from: NameAddress(uri: SIPURI(user: "ping", host: "127.0.0.1"))
            ) { _ in }
        }
        let wire = Wire(fd: accept(listener, nil, nil))
        let options = await wire.next(timeout: 5, terminator: Array("\r\n\r\n".utf8))
        #expect(options.map { String(decoding: $0, as: UTF8.self).hasPrefix("OPTIONS ") } == true)
        // Quiet: a ping comes; the pong keeps the connection, and the pings go on.
        let ping = await wire.next(timeout: 5, length: 4)
        #expect(
            ping == Array("\r\n\r\n".utf8),
            "\(ping.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "closed")")
        wire.send("\r\n")
        let second = await wire.next(timeout: 12, length: 4)
        #expect(
            second == Array("\r\n\r\n".utf8),
            "\(second.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "closed")")
        // No pong this time: the connection is closed as broken.
        #expect(await wire.read(timeout: 12) { _ in false } == nil)
        #expect(await ua.loop.run { ua.transportRefusals[.keepaliveTimeout] } == 1)
    }
}
