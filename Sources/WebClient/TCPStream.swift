import Glibc
import IOCore

/// A connected TCP socket with blocking-with-deadline reads and writes (non-blocking fd +
/// poll), for the HTTP and WebSocket clients; for `https://` and `wss://` with TLS between
/// the socket and the caller (`TLSChannel`): `send` and `receive` carry plaintext either way,
/// so the HTTP and WebSocket code above has one stream path.
///
/// Thread safety: one reader and one writer may use it at once, and `shutdown()` may be
/// called from any thread to wake them. The fd is closed only in `deinit`, so no thread
/// can ever poll a number the kernel has handed to someone else.
final class TCPStream: Sendable {
    let fd: Int32
    /// Where we connected (the address that answered).
    let remote: SocketAddress
    /// TLS over the socket (https, wss); nil for plain TCP.
    private let tls: TLSChannel?

    private init(fd: Int32, remote: SocketAddress, tls: TLSChannel?) {
        self.fd = fd
        self.remote = remote
        self.tls = tls
    }

    deinit { Glibc.close(fd) }

    /// Connects to `host` (a literal; `localhost`: 127.0.0.1 then ::1; a name: its addresses
    /// from the system resolver, in its order) before `deadline`; with `tls`, completes the
    /// handshake and checks the certificate and the name before returning.
    static func connect(host: String, port: Int, deadline: Deadline, tls: ClientTLS? = nil) throws(IrisTransportError) -> TCPStream {
        let candidates = try addresses(host, port: port)
        var firstFailure: IrisTransportError?
        for candidate in candidates {
            do throws(IrisTransportError) {
                var channel: TLSChannel?
                if let tls {
                    guard let made = TLSChannel(tls, host: host, port: port) else {
                        throw IrisTransportError.tls(host: host, port: port, failure: .handshakeFailed("cannot create a TLS session"))
                    }
                    channel = made
                }
                let stream = try connectOnce(SocketAddress(host: candidate, port: port), deadline: deadline, tls: channel)
                try channel?.handshake(over: stream, deadline: deadline)
                return stream
            } catch {
                // A certificate that does not check out is the server's, whichever address.
                if case .tls = error { throw error }
                // A timeout has used up the deadline: no time left for the next address.
                if case .timeout = error { throw error }
                // Report the IPv4 answer: a host without IPv6 would otherwise hide a refusal.
                firstFailure = firstFailure ?? error
            }
        }
        throw firstFailure ?? .connectionRefused(host: host, port: port)
    }

    /// The addresses to try for `host`.
    private static func addresses(_ host: String, port: Int) throws(IrisTransportError) -> [String] {
        if host == "localhost" { return ["127.0.0.1", "::1"] }
        if SocketAddress.isNumericHost(host) { return [host] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        guard rc == 0, let first = list else {
            let why = rc == 0 ? "no address" : String(cString: gai_strerror(rc))
            throw .connectFailed(host: host, port: port, reason: "cannot resolve the name: \(why)")
        }
        defer { freeaddrinfo(list) }
        var out: [String] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !out.contains(address) { out.append(address) }
            }
            next = entry.pointee.ai_next
        }
        guard !out.isEmpty else { throw .connectFailed(host: host, port: port, reason: "cannot resolve the name: no address") }
        return out
    }

    private static func connectOnce(_ address: SocketAddress, deadline: Deadline, tls: TLSChannel?) throws(IrisTransportError) -> TCPStream {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw .connectFailed(host: address.host, port: address.port, reason: errnoText(errno))
        }
        // Created before connecting, so every failure below closes the fd in deinit.
        let stream = TCPStream(fd: fd, remote: address, tls: tls)
        // Requests and frames go out in one send each; Nagle would only add delay.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard let rc = address.withSockAddr({ Glibc.connect(fd, $0, $1) }) else {
            throw .connectFailed(host: address.host, port: address.port, reason: "not a numeric address")
        }
        if rc != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else { throw connectError(address, code) }
            try stream.wait(for: Int16(POLLOUT), deadline: deadline, operation: "connect to \(address)")
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 { throw connectError(address, soError) }
        }
        return stream
    }

    private static func connectError(_ address: SocketAddress, _ code: Int32) -> IrisTransportError {
        code == ECONNREFUSED
            ? .connectionRefused(host: address.host, port: address.port)
            : .connectFailed(host: address.host, port: address.port, reason: errnoText(code))
    }

    /// Sends all of `bytes` before `deadline` (sealed first over TLS).
    func send(_ bytes: UnsafeRawBufferPointer, deadline: Deadline, operation: String) throws(IrisTransportError) {
        if let tls {
            try tls.send(bytes, over: self, deadline: deadline, operation: operation)
        } else {
            try sendRaw(bytes, deadline: deadline, operation: operation)
        }
    }

    /// Sends all of `bytes` to the socket as they are (TLSChannel's ciphertext).
    func sendRaw(_ bytes: [UInt8], deadline: Deadline, operation: String) throws(IrisTransportError) {
        guard !bytes.isEmpty else { return }
        let result: Result<Void, IrisTransportError> = bytes.withUnsafeBytes { raw in
            do throws(IrisTransportError) {
                try sendRaw(raw, deadline: deadline, operation: operation)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private func sendRaw(_ bytes: UnsafeRawBufferPointer, deadline: Deadline, operation: String) throws(IrisTransportError) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a peer that has gone must be an error here, not a SIGPIPE.
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                try wait(for: Int16(POLLOUT), deadline: deadline, operation: operation)
            } else if n < 0, errno == EINTR {
                continue
            } else {
                let code = errno
                if code == EPIPE || code == ECONNRESET { throw .connectionClosed(during: operation) }
                throw .io(operation: operation, reason: errnoText(code))
            }
        }
    }

    /// Sends all of `bytes` before `deadline`.
    func send(_ bytes: [UInt8], deadline: Deadline, operation: String) throws(IrisTransportError) {
        let result: Result<Void, IrisTransportError> = bytes.withUnsafeBytes { raw in
            do throws(IrisTransportError) {
                try send(raw, deadline: deadline, operation: operation)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Reads what is available (waiting until `deadline` for something) into `buffer`;
    /// 0 means the peer closed its side (or `shutdown()` was called). Plaintext over TLS.
    func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline, operation: String) throws(IrisTransportError) -> Int {
        if let tls { return try tls.receive(into: buffer, over: self, deadline: deadline, operation: operation) }
        return try receiveRaw(into: buffer, deadline: deadline, operation: operation)
    }

    /// Reads from the socket as it is into `array` (TLSChannel's ciphertext).
    func receiveRaw(into array: inout [UInt8], deadline: Deadline, operation: String) throws(IrisTransportError) -> Int {
        let result: Result<Int, IrisTransportError> = array.withUnsafeMutableBytes { raw in
            do throws(IrisTransportError) {
                return .success(try receiveRaw(into: raw, deadline: deadline, operation: operation))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads from the socket as it is (TLSChannel's ciphertext).
    func receiveRaw(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline, operation: String) throws(IrisTransportError) -> Int {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK:
                try wait(for: Int16(POLLIN), deadline: deadline, operation: operation)
            case EINTR:
                continue
            case ECONNRESET:
                throw .connectionClosed(during: operation)
            default:
                throw .io(operation: operation, reason: errnoText(code))
            }
        }
    }

    /// Ends both directions: a blocked `receive` on another thread returns 0 at once.
    func shutdown() {
        // A TLS close_notify first, while the socket can still carry it.
        tls?.close(over: self)
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Waits until the socket is ready for `events`, or throws `.timeout` at `deadline`.
    private func wait(for events: Int16, deadline: Deadline, operation: String) throws(IrisTransportError) {
        while true {
            let remaining = deadline.remaining
            if remaining <= 0 { throw .timeout(operation: operation, seconds: deadline.seconds) }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(min((remaining * 1000).rounded(.up), Double(Int32.max)))
            let n = poll(&descriptor, 1, milliseconds)
            if n > 0 { return }  // ready, or HUP/ERR: the next call reports it
            if n < 0, errno != EINTR { throw .io(operation: operation, reason: errnoText(errno)) }
        }
    }
}

/// A point in monotonic time, remembering the timeout it came from for error messages.
struct Deadline: Sendable {
    /// The timeout this deadline was made from, in seconds.
    let seconds: Double
    /// Monotonic seconds (`EventLoop.now()`).
    let at: Double

    /// `seconds` from now (negative or NaN: already passed).
    init(seconds: Double) {
        self.seconds = seconds
        at = EventLoop.now() + (seconds.isNaN ? 0 : seconds)
    }

    /// Seconds left (≤ 0 once passed).
    var remaining: Double { at - EventLoop.now() }
}

/// `strerror` text for an errno value.
func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return "\(String(cString: text)) (errno \(code))"
}
