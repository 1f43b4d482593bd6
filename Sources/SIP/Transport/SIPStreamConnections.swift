import Glibc
import CLinux

// SIP over TCP: listeners, connections both ways, framing, and the bounds that keep a
// hostile peer from holding descriptors, memory or the loop (SIPTransportLimits):
// - caps on connections in all and per source IP, checked at accept;
// - a message must arrive whole within `messageTimeout`, and a connection that carries
//   nothing for `idleTimeout` is closed (one sweep a second walks the connections);
// - bytes that cannot start a SIP message close the connection at once;
// - a peer that does not read gets at most `maxQueuedBytes` queued;
// - out of descriptors, the listener pauses instead of spinning on a full backlog.

extension SIPTransports {
    /// Listens for TCP connections; port 0 lets the OS choose. Returns the bound address.
    func listenTCP(_ address: SocketAddress) throws -> SocketAddress {
        let fd = try Self.socket(for: address, type: SOCK_STREAM)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        try Self.bind(fd, address)
        guard Glibc.listen(fd, 128) == 0 else { throw SocketError("listen") }
        let local = SocketAddress.local(of: fd) ?? address
        tcpListeners.append((fd, local))
        watchListener(fd)
        return local
    }

    func sendStream(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        var fd = peer.connection.flatMap { connections[$0] != nil ? $0 : nil } ?? connectionByPeer[peer.address]
        if fd == nil { fd = connect(to: peer.address) }
        guard let fd, let conn = connections[fd] else { return false }
        guard conn.outbox.count + bytes.count <= limits.maxQueuedBytes else {
            refuse(.peerNotReading)
            closeConnection(fd)
            return false
        }
        conn.outbox.append(contentsOf: bytes)
        if !conn.connecting { flush(conn) }
        return true
    }

    func refuse(_ reason: SIPTransportRefusal) { refusals[reason, default: 0] += 1 }

    private func watchListener(_ fd: Int32) {
        loop.register(fd: fd) { [unowned self] in self.accept(fd) }
    }

    private func accept(_ listener: Int32) {
        while true {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(listener, $0, &len, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            guard fd >= 0 else {
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // The backlog stays readable: pause the listener rather than spin on it.
                    refuse(.outOfDescriptors)
                    loop.unregister(fd: listener)
                    loop.schedule(after: limits.acceptBackoff) { [weak self] in
                        guard let self, self.tcpListeners.contains(where: { $0.fd == listener }) else { return }
                        self.watchListener(listener)
                    }
                }
                return
            }
            guard let peer = SocketAddress(storage: &storage) else {
                close(fd)
                continue
            }
            if connections.count >= connectionCap {
                refuse(.tooManyConnections)
                close(fd)
                continue
            }
            if connectionsPerSource[peer.host, default: 0] >= limits.maxConnectionsPerSource {
                refuse(.tooManyFromSource)
                close(fd)
                continue
            }
            adopt(fd, peer: peer, inbound: true, connecting: false)
        }
    }

    private func connect(to address: SocketAddress) -> Int32? {
        guard connections.count < connectionCap else {
            refuse(.tooManyConnections)
            return nil
        }
        guard let fd = try? Self.socket(for: address, type: SOCK_STREAM) else { return nil }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if rc != 0 && errno != EINPROGRESS {
            close(fd)
            return nil
        }
        adopt(fd, peer: address, inbound: false, connecting: rc != 0)
        return fd
    }

    private func adopt(_ fd: Int32, peer: SocketAddress, inbound: Bool, connecting: Bool) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        let conn = Connection(fd: fd, peer: peer, inbound: inbound, connecting: connecting, now: SIPEventLoop.now())
        connections[fd] = conn
        connectionByPeer[peer] = fd
        connectionsPerSource[peer.host, default: 0] += 1
        loop.register(fd: fd) { [unowned self] in self.readTCP(fd) }
        if connecting {
            loop.watchWritable(fd: fd) { [unowned self] in self.finishConnect(fd) }
        }
        if sweepTimer == nil { scheduleSweep() }
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
                conn.lastActivity = SIPEventLoop.now()
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
            let now = SIPEventLoop.now()
            conn.lastActivity = now
            let peer = SIPPeer(transport: .tcp, address: conn.peer, connection: fd)
            let messages: [[UInt8]]
            do {
                messages = try conn.framer.append(receiveBuffer[0..<n])
            } catch {
                refuse(error == .notSIP ? .notSIP : .framing)
                onStreamError?(peer, error)
                closeConnection(fd)
                return
            }
            conn.pingSentAt = nil  // the flow is alive
            if conn.framer.pings > 0 {
                // RFC 5626 §3.5.1: a double-CRLF ping gets a single-CRLF pong.
                _ = sendStream(Self.pong, to: peer)
                guard connections[fd] === conn else { return }
            }
            // A partial message starts (or keeps) its clock; a clean boundary stops it.
            if conn.framer.pending == 0 {
                conn.messageStarted = nil
            } else if !messages.isEmpty || conn.messageStarted == nil {
                conn.messageStarted = now
            }
            for message in messages {
                onMessage?(message, peer)
                // onMessage may have closed this connection (a reply failed).
                guard connections[fd] === conn else { return }
            }
        }
    }

    func closeConnection(_ fd: Int32) {
        guard let conn = connections.removeValue(forKey: fd) else { return }
        if connectionByPeer[conn.peer] == fd { connectionByPeer[conn.peer] = nil }
        let left = connectionsPerSource[conn.peer.host, default: 1] - 1
        connectionsPerSource[conn.peer.host] = left > 0 ? left : nil
        loop.unregister(fd: fd)
        close(fd)
    }

    // MARK: Timeouts

    private func scheduleSweep() {
        sweepTimer = loop.schedule(after: min(1, limits.messageTimeout / 2, limits.idleTimeout / 2, limits.keepaliveTimeout / 2)) { [weak self] in
            guard let self else { return }
            self.sweepTimer = nil
            self.sweep(now: SIPEventLoop.now())
            if !self.connections.isEmpty { self.scheduleSweep() }
        }
    }

    /// Closes connections whose message is overdue, that have been idle too long, or whose
    /// keep-alive ping went unanswered; pings the connections we opened that have been quiet
    /// for `keepaliveInterval` (RFC 5626 §4.4.1), so a NAT on the way keeps their binding.
    func sweep(now: Double) {
        let keepalive = limits.keepaliveInterval
        for (fd, conn) in connections {
            if let started = conn.messageStarted, now - started > limits.messageTimeout {
                refuse(.messageTimeout)
                closeConnection(fd)
            } else if let pinged = conn.pingSentAt, now - pinged > limits.keepaliveTimeout {
                refuse(.keepaliveTimeout)
                closeConnection(fd)
            } else if keepalive > 0, !conn.inbound, !conn.connecting, conn.pingSentAt == nil, now - conn.lastActivity >= keepalive {
                conn.pingSentAt = now
                _ = sendStream(Self.ping, to: SIPPeer(transport: .tcp, address: conn.peer, connection: fd))
            } else if now - conn.lastActivity > limits.idleTimeout {
                refuse(.idle)
                closeConnection(fd)
            }
        }
    }

    static let ping: [UInt8] = Array("\r\n\r\n".utf8)
    static let pong: [UInt8] = Array("\r\n".utf8)
}
