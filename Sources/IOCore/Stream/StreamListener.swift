import CLinux
import Glibc

/// A listening TCP socket on an event loop: accepts without blocking, refuses what
/// `StreamConnectionCaps` does not admit, and hands each accepted socket to `onAccept` (which
/// makes it a `StreamConnection`).
///
/// Out of descriptors (EMFILE/ENFILE) a full backlog stays readable and a level-triggered loop
/// would spin on it: the listener keeps one descriptor in reserve, closes it to accept and
/// close what is pending (so peers learn at once instead of hanging), opens it again, and
/// pauses for `acceptBackoff`. Confined to its loop.
public final class StreamListener {
    public let fd: Int32
    /// The bound address (the port the OS chose for port 0).
    public let local: SocketAddress
    public let loop: EventLoop
    public let caps: StreamConnectionCaps
    /// Seconds the listener pauses after running out of descriptors.
    public let acceptBackoff: Double
    /// An accepted, non-blocking socket and its peer, admitted by the caps. The handler owns
    /// the descriptor; without one it is closed.
    public var onAccept: ((_ fd: Int32, _ peer: SocketAddress) -> Void)?
    /// A connection turned away (each is counted by the owner).
    public var onRefused: ((StreamRefusal) -> Void)?
    /// A connection the caps turn away is reset (RST, no TIME_WAIT kept for it) instead of
    /// closed with a FIN. Default false.
    public var resetRefused = false
    /// Tests: errno values the next accept calls fail with instead of accepting. A simulated
    /// EMFILE rests the listener like a real one but sheds nothing (no descriptor is short).
    public var simulatedAcceptErrors: [Int32] = []
    /// accept(2) calls made, simulated ones included (tests check a failing accept does not spin).
    public private(set) var acceptCalls = 0
    private var reserve: Int32
    private var isOpen = true
    private var isWatched = false

    /// Binds and listens on `address` (port 0: the OS picks one); `start()` begins accepting.
    /// `dualStack` on an IPv6 address takes IPv4 clients too (as "::ffff:a.b.c.d").
    public init(
        loop: EventLoop, bind address: SocketAddress, caps: StreamConnectionCaps, acceptBackoff: Double = 0.1,
        backlog: Int32 = 128, dualStack: Bool = false
    ) throws(SocketError) {
        let fd = try StreamSocket.make(for: address)
        StreamSocket.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if dualStack, address.isIPv6 { StreamSocket.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0) }
        try StreamSocket.bind(fd, address)
        guard Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SocketError("listen \(address)", code: code)
        }
        self.fd = fd
        self.local = SocketAddress.local(of: fd) ?? address
        self.loop = loop
        self.caps = caps
        self.acceptBackoff = acceptBackoff
        reserve = Self.openReserve()
    }

    deinit { close() }

    /// Starts accepting. Loop thread only.
    public func start() {
        guard isOpen, !isWatched else { return }
        isWatched = true
        loop.register(fd: fd) { [weak self] in self?.acceptPending() }
    }

    /// Stops accepting and closes the socket (open connections stay). Loop thread only.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        if isWatched { loop.unregister(fd: fd) }
        isWatched = false
        Glibc.close(fd)
        if reserve >= 0 { Glibc.close(reserve) }
        reserve = -1
    }

    private func acceptPending() {
        while isOpen {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            acceptCalls += 1
            if !simulatedAcceptErrors.isEmpty {
                simulatedAcceptErrors.removeFirst()
                onRefused?(.outOfDescriptors)
                pause()
                return
            }
            let conn = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(fd, $0, &len, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            guard conn >= 0 else {
                let code = errno
                if code == EMFILE || code == ENFILE {
                    shedPending()
                    pause()
                } else if code == ENOBUFS || code == ENOMEM {
                    onRefused?(.outOfDescriptors)
                    pause()
                }
                return
            }
            guard let peer = SocketAddress(storage: &storage) else {
                Glibc.close(conn)
                continue
            }
            if let refusal = caps.refusal(forSource: peer.host) {
                onRefused?(refusal)
                if resetRefused {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(conn, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                Glibc.close(conn)
                continue
            }
            guard let onAccept else {
                Glibc.close(conn)
                continue
            }
            onAccept(conn, peer)
        }
    }

    /// Frees the reserved descriptor to accept and close every pending connection, then
    /// takes it back.
    private func shedPending() {
        guard reserve >= 0 else {
            onRefused?(.outOfDescriptors)
            return
        }
        Glibc.close(reserve)
        reserve = -1
        var shed = 0
        while true {
            let conn = CLinux_accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            guard conn >= 0 else { break }
            Glibc.close(conn)
            shed += 1
            onRefused?(.outOfDescriptors)
        }
        if shed == 0 { onRefused?(.outOfDescriptors) }
        reserve = Self.openReserve()
    }

    /// Stops watching the backlog for `acceptBackoff` seconds.
    private func pause() {
        guard isWatched else { return }
        loop.unregister(fd: fd)
        isWatched = false
        loop.schedule(after: acceptBackoff) { [weak self] in self?.start() }
    }

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }
}
