import Glibc
import CLinux

// SIP over streams, TCP and TLS alike: listeners, connections both ways, framing, and the
// bounds that keep a hostile peer from holding descriptors, memory or the loop
// (SIPTransportLimits):
// - caps on connections in all and per source IP, checked at accept;
// - a message must arrive whole within `messageTimeout` (a TLS handshake too), and a
//   connection that carries nothing for `idleTimeout` is closed (one sweep a second walks
//   the connections);
// - bytes that cannot start a SIP message close the connection at once;
// - a peer that does not read gets at most `maxQueuedBytes` queued;
// - out of descriptors, the listener pauses instead of spinning on a full backlog.
//
// TLS is a layer of the same connection (`Connection.tls`, a `TLSStream`): bytes read from
// the socket are decrypted before the framer, messages sent are encrypted into the outbox.
// Everything else (the socket, the outbox, the bounds, keep-alives) is one code path.
//
// A connection that fails or goes down is reported to `onConnectionFailure` on a later
// turn of the loop (never from inside a send, where osip may be running), so the requests
// sent over it fail at once, like a transport error, instead of waiting for Timer B.

extension SIPTransports {
    /// Listens for TCP (or TLS) connections; port 0 lets the OS choose. Returns the bound address.
    func listenStream(_ address: SocketAddress, transport: SIPTransportProtocol = .tcp) throws -> SocketAddress {
        if transport == .tls && tlsServerContext == nil {
            throw SocketError("TLS listener \(address): no certificate configured", code: EINVAL)
        }
        let fd = try Self.socket(for: address, type: SOCK_STREAM)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        try Self.bind(fd, address)
        guard Glibc.listen(fd, 128) == 0 else { throw SocketError("listen") }
        let local = SocketAddress.local(of: fd) ?? address
        tcpListeners.append((fd, local, transport))
        watchListener(fd)
        return local
    }

    /// Listens for TCP connections (the UDP twin's port when port 0 is asked of both).
    func listenTCP(_ address: SocketAddress) throws -> SocketAddress { try listenStream(address) }

    func sendStream(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        var fd = peer.connection.flatMap { connections[$0] != nil ? $0 : nil } ?? connectionByPeer[key(for: peer)]
        if fd == nil { fd = connect(to: peer) }
        guard let fd, let conn = connections[fd] else { return false }
        guard conn.queued + bytes.count <= limits.maxQueuedBytes else {
            refuse(.peerNotReading)
            closeConnection(fd, .closed("the peer does not read (\(conn.queued) bytes queued)"))
            return false
        }
        conn.carried = true
        if conn.tls != nil {
            let out = conn.tls!.send(bytes)
            conn.outbox += out.ciphertext
            if let failure = out.failure {
                closeConnection(fd, .tls(failure))
                return false
            }
        } else {
            conn.outbox.append(contentsOf: bytes)
        }
        if !conn.connecting { flush(conn) }
        if let onWire, bytes.count > 2 {  // a CRLF keep-alive pong is not a message
            onWire(SIPWireMessage(time: SIPWireMessage.now(), direction: .sent, transport: conn.transport, local: conn.local,
                                  remote: conn.peer, bytes: bytes))
        }
        return true
    }

    func refuse(_ reason: SIPTransportRefusal) { refusals[reason, default: 0] += 1 }

    /// Replaces the TLS listeners' context (new connections get it; open ones keep theirs)
    /// and forgets the client contexts, so every certificate file is read again.
    func reloadTLS(server: SIPTLSServerSettings?) throws(TLSFailure) {
        if let server { tlsServerContext = try TLSContext(server: server) }
        tlsClientContexts = [:]
    }

    /// The connection a message to `peer` reuses: TCP by address, TLS by address and the
    /// name and trust it was checked with.
    func key(for peer: SIPPeer) -> StreamKey {
        guard peer.transport == .tls else { return StreamKey(transport: peer.transport, address: peer.address) }
        return StreamKey(transport: .tls, address: peer.address, tls: tlsTarget(for: peer))
    }

    private func tlsTarget(for peer: SIPPeer) -> SIPTLSTarget {
        peer.tls ?? tlsTarget?(peer.address) ?? SIPTLSTarget(serverName: peer.address.host)
    }

    private func clientContext(_ settings: SIPTLSClientSettings) throws(TLSFailure) -> TLSContext {
        if let known = tlsClientContexts[settings] { return known }
        let made = try TLSContext(client: settings)
        tlsClientContexts[settings] = made
        return made
    }

    private func watchListener(_ fd: Int32) {
        loop.register(fd: fd) { [unowned self] in self.accept(fd) }
    }

    private func accept(_ listener: Int32) {
        let transport = tcpListeners.first { $0.fd == listener }?.transport ?? .tcp
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
            var tls: TLSStream?
            if transport == .tls {
                guard let context = tlsServerContext, let stream = TLSStream(server: context) else {
                    close(fd)
                    continue
                }
                tls = stream
            }
            adopt(fd, peer: peer, key: StreamKey(transport: transport, address: peer), inbound: true, connecting: false, tls: tls)
        }
    }

    private func connect(to peer: SIPPeer) -> Int32? {
        let key = key(for: peer)
        var tls: TLSStream?
        if let target = key.tls {
            do {
                guard let stream = TLSStream(client: try clientContext(target.client), target: target) else {
                    report(peer, outbound: true, .tls(.configuration("OpenSSL could not make a session")))
                    return nil
                }
                tls = stream
            } catch {
                report(peer, outbound: true, .tls(error))
                return nil
            }
        }
        guard connections.count < connectionCap else {
            refuse(.tooManyConnections)
            report(peer, outbound: true, .connect("too many connections open"))
            return nil
        }
        guard let fd = try? Self.socket(for: peer.address, type: SOCK_STREAM) else {
            report(peer, outbound: true, .connect(Self.errorText(errno)))
            return nil
        }
        let rc = peer.address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if rc != 0 && errno != EINPROGRESS {
            let code = errno
            close(fd)
            report(peer, outbound: true, .connect(Self.errorText(code)))
            return nil
        }
        adopt(fd, peer: peer.address, key: key, inbound: false, connecting: rc != 0, tls: tls)
        return fd
    }

    private func adopt(_ fd: Int32, peer: SocketAddress, key: StreamKey, inbound: Bool, connecting: Bool, tls: TLSStream?) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        let now = SIPEventLoop.now()
        let conn = Connection(fd: fd, peer: peer, key: key, inbound: inbound, connecting: connecting, now: now)
        if let tls {
            conn.tls = tls
            conn.handshakeDeadline = now + limits.messageTimeout
            // A client's ClientHello waits in the outbox until the TCP connect completes.
            if !inbound { conn.outbox += conn.tls!.start().ciphertext }
        }
        connections[fd] = conn
        connectionByPeer[key] = fd
        connectionsPerSource[peer.host, default: 0] += 1
        loop.register(fd: fd) { [unowned self] in self.readStream(fd) }
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
            closeConnection(fd, .connect(Self.errorText(err)))
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
                closeConnection(conn.fd, ending(conn, .closed(Self.errorText(errno))))
                return
            }
        }
        loop.watchWritable(fd: conn.fd, nil)
    }

    private func readStream(_ fd: Int32) {
        guard let conn = connections[fd] else { return }
        while true {
            let n = receiveBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 {
                closeConnection(fd, ending(conn, .closed("closed by the peer")))
                return
            }
            if n < 0 {
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(fd, ending(conn, .closed(Self.errorText(errno)))) }
                return
            }
            let now = SIPEventLoop.now()
            conn.lastActivity = now
            guard conn.tls != nil else {
                guard deliver(receiveBuffer[0..<n], on: conn, now: now) else { return }
                continue
            }
            let out = receiveBuffer.withUnsafeBytes { conn.tls!.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            if !out.ciphertext.isEmpty {
                // Handshake messages, or the alert that tells the peer why we give up.
                conn.outbox += out.ciphertext
                if !conn.connecting { flush(conn) }
                guard connections[fd] === conn else { return }
            }
            if out.established { conn.handshakeDeadline = nil }
            if let failure = out.failure {
                refuse(.tlsFailed)
                closeConnection(fd, .tls(failure))
                return
            }
            if out.closed {
                closeConnection(fd, .closed("the peer closed the TLS session"))
                return
            }
            if !out.plaintext.isEmpty {
                guard deliver(out.plaintext[...], on: conn, now: now) else { return }
            }
        }
    }

    /// Frames what arrived in the clear and hands each message on; false when the
    /// connection was closed meanwhile.
    private func deliver(_ bytes: ArraySlice<UInt8>, on conn: Connection, now: Double) -> Bool {
        let fd = conn.fd
        let peer = conn.sipPeer
        let messages: [[UInt8]]
        do {
            messages = try conn.framer.append(bytes)
        } catch {
            refuse(error == .notSIP ? .notSIP : .framing)
            onStreamError?(peer, error)
            closeConnection(fd, .closed("framing: \(error)"))
            return false
        }
        conn.pingSentAt = nil  // the flow is alive
        if conn.framer.pings > 0 {
            // RFC 5626 §3.5.1: a double-CRLF ping gets a single-CRLF pong.
            _ = sendStream(Self.pong, to: peer)
            guard connections[fd] === conn else { return false }
        }
        // A partial message starts (or keeps) its clock; a clean boundary stops it.
        if conn.framer.pending == 0 {
            conn.messageStarted = nil
        } else if !messages.isEmpty || conn.messageStarted == nil {
            conn.messageStarted = now
        }
        for message in messages {
            onMessage?(message, peer, conn.local)
            // onMessage may have closed this connection (a reply failed).
            guard connections[fd] === conn else { return false }
        }
        return true
    }

    /// Why a connection ends: a TLS connection that ends before its handshake is done
    /// failed the handshake.
    private func ending(_ conn: Connection, _ why: SIPConnectionFailure) -> SIPConnectionFailure {
        conn.tls?.isHandshaking == true ? .tls(.closedDuringHandshake) : why
    }

    /// Closes a connection; with `why`, reports it (on a later turn of the loop) so what
    /// was sent over it fails.
    func closeConnection(_ fd: Int32, _ why: SIPConnectionFailure? = nil) {
        guard let conn = connections.removeValue(forKey: fd) else { return }
        if connectionByPeer[conn.key] == fd { connectionByPeer[conn.key] = nil }
        let left = connectionsPerSource[conn.peer.host, default: 1] - 1
        connectionsPerSource[conn.peer.host] = left > 0 ? left : nil
        if conn.tls?.isEstablished == true {
            // close_notify, best effort: the socket is closed right after.
            let bye = conn.tls!.close()
            _ = bye.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        loop.unregister(fd: fd)
        close(fd)
        if let why {
            var peer = conn.sipPeer
            peer.connection = fd
            report(peer, outbound: !conn.inbound, why, carried: conn.carried)
        }
    }

    private func report(_ peer: SIPPeer, outbound: Bool, _ failure: SIPConnectionFailure, carried: Bool = true) {
        let report = SIPConnectionFailureReport(peer: peer, outbound: outbound, failure: failure, at: SIPEventLoop.now(),
                                                carried: carried)
        loop.schedule(after: 0) { [weak self] in self?.onConnectionFailure?(report) }
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    // MARK: Timeouts

    private func scheduleSweep() {
        sweepTimer = loop.schedule(after: min(1, limits.messageTimeout / 2, limits.idleTimeout / 2, limits.keepaliveTimeout / 2)) { [weak self] in
            guard let self else { return }
            self.sweepTimer = nil
            self.sweep(now: SIPEventLoop.now())
            if !self.connections.isEmpty { self.scheduleSweep() }
        }
    }

    /// Closes connections whose TLS handshake or message is overdue, that have been idle too
    /// long, or whose keep-alive ping went unanswered; pings the connections we opened that
    /// have been quiet for `keepaliveInterval` (RFC 5626 §4.4.1), so a NAT on the way keeps
    /// their binding.
    func sweep(now: Double) {
        let keepalive = limits.keepaliveInterval
        for (fd, conn) in connections {
            if let deadline = conn.handshakeDeadline, now > deadline {
                refuse(.tlsFailed)
                closeConnection(fd, .tls(.handshakeTimeout))
            } else if let started = conn.messageStarted, now - started > limits.messageTimeout {
                refuse(.messageTimeout)
                closeConnection(fd, .closed("message timeout"))
            } else if let pinged = conn.pingSentAt, now - pinged > limits.keepaliveTimeout {
                refuse(.keepaliveTimeout)
                closeConnection(fd, .closed("no answer to the keep-alive ping"))
            } else if keepalive > 0, !conn.inbound, !conn.connecting, conn.handshakeDeadline == nil, conn.pingSentAt == nil,
                      now - conn.lastActivity >= keepalive {
                conn.pingSentAt = now
                _ = sendStream(Self.ping, to: conn.sipPeer)
            } else if now - conn.lastActivity > limits.idleTimeout {
                refuse(.idle)
                closeConnection(fd, .closed("idle"))
            }
        }
    }

    static let ping: [UInt8] = Array("\r\n\r\n".utf8)
    static let pong: [UInt8] = Array("\r\n".utf8)
}
