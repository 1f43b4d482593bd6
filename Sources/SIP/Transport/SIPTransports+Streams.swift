import Glibc

// SIP over streams, TCP and TLS alike, on IOCore's stream layer (`StreamListener`,
// `StreamConnection`): the layer owns the sockets, accept and its back-off, the caps, the
// deadlines and the TLS plumbing; this file adds what is SIP's:
// - the limits of SIPTransportLimits, as the layer's settings: caps on connections in all
//   and per source IP; a message must arrive whole within `messageTimeout` (a new inbound
//   connection's first message too, a TLS handshake too); `idleTimeout`; `maxQueuedBytes`;
// - RFC 3261 §18.3 framing (SIPStreamFramer) and RFC 5626 keep-alives (a double-CRLF ping
//   on connections we opened that go quiet, a single-CRLF pong to a peer's ping);
// - connection reuse: a response goes back over its request's connection, a request reuses
//   the connection to the same address (and for TLS the same name and trust);
// - every way a connection ends, as SIP's `SIPConnectionFailure` and refusal counters
//   (`classify`).
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
        let listener = try StreamListener(loop: loop, bind: address, caps: caps, acceptBackoff: limits.acceptBackoff)
        listener.onRefused = { [unowned self] why in
            switch why {
            case .tooManyConnections: self.refuse(.tooManyConnections)
            case .tooManyFromSource: self.refuse(.tooManyFromSource)
            case .outOfDescriptors: self.refuse(.outOfDescriptors)
            }
        }
        listener.onAccept = { [unowned self] fd, peer in self.accepted(fd, peer: peer, transport: transport) }
        tcpListeners.append((listener, transport))
        listener.start()
        return listener.local
    }

    /// Listens for TCP connections (the UDP twin's port when port 0 is asked of both).
    func listenTCP(_ address: SocketAddress) throws -> SocketAddress { try listenStream(address) }

    func sendStream(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        var conn =
            peer.connection.flatMap { connections[$0] } ?? connectionByPeer[key(for: peer)].flatMap { connections[$0] }
        if conn == nil { conn = connect(to: peer) }
        guard let conn else { return false }
        conn.carried = true
        guard conn.stream.send(bytes) else { return false }
        if let onWire, bytes.count > 2 {  // a CRLF keep-alive pong is not a message
            onWire(
                SIPWireMessage(
                    time: SIPWireMessage.now(), direction: .sent, transport: conn.transport, local: conn.stream.local,
                    remote: conn.stream.peer, bytes: bytes))
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

    /// The layer's settings for a SIP connection: one `messageTimeout` for the handshake, the
    /// first message of a peer's connection and every message; keep-alives on ours.
    private func settings(inbound: Bool) -> StreamConnectionSettings {
        StreamConnectionSettings(
            idleTimeout: limits.idleTimeout, handshakeTimeout: limits.messageTimeout,
            firstFrameTimeout: inbound ? limits.messageTimeout : nil, frameTimeout: limits.messageTimeout,
            keepaliveInterval: inbound || limits.keepaliveInterval <= 0 ? nil : limits.keepaliveInterval,
            keepaliveTimeout: limits.keepaliveTimeout, maxQueuedBytes: limits.maxQueuedBytes)
    }

    private func accepted(_ fd: Int32, peer: SocketAddress, transport: SIPTransportProtocol) {
        var tls: TLSStream?
        if transport == .tls {
            guard let context = tlsServerContext, let stream = TLSStream(server: context) else {
                close(fd)
                return
            }
            tls = stream
        }
        let stream = StreamConnection(
            accepted: fd, peer: peer, loop: loop, framer: SIPStreamFramer(), security: tls,
            settings: settings(inbound: true), caps: caps)
        adopt(stream, key: StreamKey(transport: transport, address: peer))
    }

    private func connect(to peer: SIPPeer) -> Connection? {
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
        let stream: SIPStream
        do {
            stream = try StreamConnection.connect(
                to: peer.address, loop: loop, framer: SIPStreamFramer(), security: tls,
                settings: settings(inbound: false), caps: caps)
        } catch {
            if case .refused = error {
                refuse(.tooManyConnections)
                report(peer, outbound: true, .connect("too many connections open"))
            } else {
                report(peer, outbound: true, classify(error).failure)
            }
            return nil
        }
        return adopt(stream, key: key)
    }

    @discardableResult
    private func adopt(_ stream: SIPStream, key: StreamKey) -> Connection {
        let conn = Connection(stream: stream, key: key)
        connections[stream.fd] = conn
        connectionByPeer[key] = stream.fd
        stream.onFrames = { [unowned self, unowned conn] stream, messages in self.received(messages, on: conn) }
        stream.onKeepalive = { [unowned self, unowned conn] _ in _ = self.sendStream(Self.ping, to: conn.sipPeer) }
        stream.onClose = { [unowned self, unowned conn] _, failure in self.ended(conn, failure) }
        stream.start()
        return conn
    }

    /// Hands each framed message on (after the pong a ping asks for).
    private func received(_ messages: [[UInt8]], on conn: Connection) {
        let peer = conn.sipPeer
        if conn.stream.framer.pings > 0 {
            // RFC 5626 §3.5.1: a double-CRLF ping gets a single-CRLF pong.
            _ = sendStream(Self.pong, to: peer)
        }
        for message in messages {
            // A reply may have closed this connection.
            guard conn.stream.isOpen else { return }
            onMessage?(message, peer, conn.stream.local)
        }
    }

    /// Forgets a connection that ended; with a failure, counts it and reports it.
    private func ended(_ conn: Connection, _ failure: StreamFailure?) {
        let fd = conn.stream.fd
        if connections[fd] === conn { connections[fd] = nil }
        if connectionByPeer[conn.key] == fd { connectionByPeer[conn.key] = nil }
        guard let failure else { return }
        let (why, refusal) = classify(failure)
        if let refusal { refuse(refusal) }
        if case .framing(let error) = failure, let error = error as? SIPStreamFramer.FramingError {
            onStreamError?(conn.sipPeer, error)
        }
        report(conn.sipPeer, outbound: !conn.stream.inbound, why, carried: conn.carried)
    }

    /// How a stream failure reads in SIP's words, and the refusal it counts (if any).
    func classify(_ failure: StreamFailure) -> (failure: SIPConnectionFailure, refusal: SIPTransportRefusal?) {
        switch failure {
        case .connect(let code): (.connect(StreamFailure.errorText(code)), nil)
        case .refused(let why): (.connect("refused: \(why)"), nil)
        case .closedByPeer: (.closed("closed by the peer"), nil)
        case .socket(let code): (.closed(StreamFailure.errorText(code)), nil)
        case .closedDuringHandshake: (.tls(.closedDuringHandshake), nil)
        case .security(let error): (.tls(error as? TLSFailure ?? .handshakeFailed("\(error)")), .tlsFailed)
        case .securityClosed: (.closed("the peer closed the TLS session"), nil)
        case .handshakeTimeout: (.tls(.handshakeTimeout), .tlsFailed)
        case .firstFrameTimeout, .frameTimeout: (.closed("message timeout"), .messageTimeout)
        case .idle: (.closed("idle"), .idle)
        case .keepaliveTimeout: (.closed("no answer to the keep-alive ping"), .keepaliveTimeout)
        case .framing(let error):
            (.closed("framing: \(error)"), error as? SIPStreamFramer.FramingError == .notSIP ? .notSIP : .framing)
        case .writeQueueFull(let queued): (.closed("the peer does not read (\(queued) bytes queued)"), .peerNotReading)
        }
    }

    /// Closes a connection without a report (the agent is going away).
    func closeConnection(_ fd: Int32) {
        connections[fd]?.stream.close()
    }

    private func report(_ peer: SIPPeer, outbound: Bool, _ failure: SIPConnectionFailure, carried: Bool = true) {
        let report = SIPConnectionFailureReport(
            peer: peer, outbound: outbound, failure: failure, at: SIPEventLoop.now(),
            carried: carried)
        loop.schedule(after: 0) { [weak self] in self?.onConnectionFailure?(report) }
    }

    static let ping: [UInt8] = Array("\r\n\r\n".utf8)
    static let pong: [UInt8] = Array("\r\n".utf8)
}
