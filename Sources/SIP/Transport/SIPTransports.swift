import Glibc
import CLinux

/// The transport protocols irisgw speaks.
public enum SIPTransportProtocol: String, Sendable, Hashable {
    case udp = "UDP"
    case tcp = "TCP"

    public var isReliable: Bool { self == .tcp }
}

/// Where a message came from or goes to: protocol, peer address, and for TCP the connection.
public struct SIPPeer: Hashable, Sendable, CustomStringConvertible {
    public var transport: SIPTransportProtocol
    public var address: SocketAddress
    /// The TCP connection a request arrived on; responses go back over it (RFC 3261 §18.2.2).
    public var connection: Int32?

    public init(transport: SIPTransportProtocol, address: SocketAddress, connection: Int32? = nil) {
        self.transport = transport
        self.address = address
        self.connection = connection
    }

    public var description: String { "\(transport.rawValue.lowercased()):\(address)" }
}

/// UDP sockets, a TCP listener and TCP connections, all on the SIP event loop.
/// Incoming UDP datagrams and framed TCP messages are handed to `onMessage` as bytes.
final class SIPTransports {
    let loop: SIPEventLoop
    /// Called on the loop for every datagram or framed stream message.
    var onMessage: (([UInt8], SIPPeer) -> Void)?
    /// Called when a TCP stream breaks its framing (bytes are dropped, the connection closed).
    var onStreamError: ((SIPPeer, SIPStreamFramer.FramingError) -> Void)?

    private(set) var udpSockets: [UDPSocket] = []
    private(set) var tcpListeners: [(fd: Int32, local: SocketAddress)] = []
    private var connections: [Int32: Connection] = [:]
    private var connectionByPeer: [SocketAddress: Int32] = [:]
    private var receiveBuffer = [UInt8](repeating: 0, count: 65_536)

    private final class Connection {
        let fd: Int32
        let peer: SocketAddress
        var framer = SIPStreamFramer()
        var outbox: [UInt8] = []
        var connecting: Bool
        init(fd: Int32, peer: SocketAddress, connecting: Bool) {
            self.fd = fd
            self.peer = peer
            self.connecting = connecting
        }
    }

    init(loop: SIPEventLoop) {
        self.loop = loop
    }

    /// Binds a UDP socket; port 0 lets the OS choose. Returns the bound address.
    func listenUDP(_ address: SocketAddress) throws -> SocketAddress {
        let socket = try UDPSocket(bind: address, bufferBytes: 4 << 20)
        udpSockets.append(socket)
        loop.register(fd: socket.fd) { [unowned self, unowned socket] in self.readUDP(socket) }
        return socket.local
    }

    /// Listens for TCP connections; port 0 lets the OS choose. Returns the bound address.
    func listenTCP(_ address: SocketAddress) throws -> SocketAddress {
        let fd = try Self.socket(for: address, type: SOCK_STREAM)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        try Self.bind(fd, address)
        guard Glibc.listen(fd, 128) == 0 else { throw SocketError("listen") }
        let local = SocketAddress.local(of: fd) ?? address
        tcpListeners.append((fd, local))
        loop.register(fd: fd) { [unowned self] in self.accept(fd) }
        return local
    }

    func closeAll() {
        for socket in udpSockets { loop.unregister(fd: socket.fd) }
        for (fd, _) in tcpListeners {
            loop.unregister(fd: fd)
            close(fd)
        }
        for fd in connections.keys { closeConnection(fd) }
        udpSockets = []
        tcpListeners = []
    }

    /// Sends one message. Over TCP it reuses the request's connection or a connection to the
    /// peer, opening one when needed. Returns false when the message could not be queued.
    @discardableResult
    func send(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        switch peer.transport {
        case .udp:
            guard let socket = udpSockets.first(where: { $0.local.isIPv6 == peer.address.isIPv6 }) ?? udpSockets.first,
                  let to = RawSocketAddress(peer.address) else { return false }
            return bytes.withUnsafeBytes { socket.send($0, to: to) }
        case .tcp:
            var fd = peer.connection.flatMap { connections[$0] != nil ? $0 : nil } ?? connectionByPeer[peer.address]
            if fd == nil { fd = connect(to: peer.address) }
            guard let fd, let conn = connections[fd] else { return false }
            conn.outbox.append(contentsOf: bytes)
            if !conn.connecting { flush(conn) }
            return true
        }
    }

    // MARK: UDP

    private func readUDP(_ socket: UDPSocket) {
        var source = RawSocketAddress()
        while let n = receiveBuffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &source) }) {
            guard n > 0, let from = source.address else { continue }
            onMessage?(Array(receiveBuffer[0..<n]), SIPPeer(transport: .udp, address: from))
        }
    }

    // MARK: TCP

    private func accept(_ listener: Int32) {
        while true {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &len) }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard let peer = SocketAddress(storage: &storage) else {
                close(fd)
                continue
            }
            adopt(fd, peer: peer, connecting: false)
        }
    }

    private func connect(to address: SocketAddress) -> Int32? {
        guard let fd = try? Self.socket(for: address, type: SOCK_STREAM) else { return nil }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if rc != 0 && errno != EINPROGRESS {
            close(fd)
            return nil
        }
        adopt(fd, peer: address, connecting: rc != 0)
        return fd
    }

    private func adopt(_ fd: Int32, peer: SocketAddress, connecting: Bool) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        let conn = Connection(fd: fd, peer: peer, connecting: connecting)
        connections[fd] = conn
        connectionByPeer[peer] = fd
        loop.register(fd: fd) { [unowned self] in self.readTCP(fd) }
        if connecting {
            loop.watchWritable(fd: fd) { [unowned self] in self.finishConnect(fd) }
        }
    }

    private func finishConnect(_ fd: Int32) {
        guard let conn = connections[fd] else { return }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        guard err == 0 else {
            closeConnection(fd)
            return
        }
        conn.connecting = false
        loop.watchWritable(fd: fd, nil)
        flush(conn)
    }

    private func flush(_ conn: Connection) {
        while !conn.outbox.isEmpty {
            let n = conn.outbox.withUnsafeBytes { Glibc.send(conn.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                conn.outbox.removeFirst(n)
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                loop.watchWritable(fd: conn.fd) { [unowned self] in self.flush(conn) }
                return
            } else {
                closeConnection(conn.fd)
                return
            }
        }
        loop.watchWritable(fd: conn.fd, nil)
    }

    private func readTCP(_ fd: Int32) {
        guard let conn = connections[fd] else { return }
        while true {
            let n = receiveBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                closeConnection(fd)
                return
            }
            guard n > 0 else { return }
            let peer = SIPPeer(transport: .tcp, address: conn.peer, connection: fd)
            do {
                for message in try conn.framer.append(receiveBuffer[0..<n]) {
                    onMessage?(message, peer)
                }
            } catch {
                onStreamError?(peer, error)
                closeConnection(fd)
                return
            }
        }
    }

    private func closeConnection(_ fd: Int32) {
        guard let conn = connections.removeValue(forKey: fd) else { return }
        if connectionByPeer[conn.peer] == fd { connectionByPeer[conn.peer] = nil }
        loop.unregister(fd: fd)
        close(fd)
    }

    // MARK: Sockets

    private static func socket(for address: SocketAddress, type: __socket_type) throws -> Int32 {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = Glibc.socket(family, Int32(type.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        if address.isIPv6 {
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        return fd
    }

    private static func bind(_ fd: Int32, _ address: SocketAddress) throws {
        guard let rc = address.withSockAddr({ Glibc.bind(fd, $0, $1) }) else {
            close(fd)
            throw SocketError("bind \(address): not a numeric address", code: EINVAL)
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw SocketError("bind \(address)", code: code)
        }
    }
}
