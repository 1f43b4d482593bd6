import CLinux
import Glibc

/// The transport protocols irisgw speaks. TLS is TCP's framing over a TLS session: one stream
/// transport serves both (SIPStreamConnections.swift).
public enum SIPTransportProtocol: String, Sendable, Hashable, CaseIterable {
    case udp = "UDP"
    case tcp = "TCP"
    case tls = "TLS"

    public var isReliable: Bool { self != .udp }
    /// A byte stream with RFC 3261 §18.3 framing (TCP, or TLS over TCP).
    public var isStream: Bool { self != .udp }
}

/// Where a message came from or goes to: protocol, peer address, for a stream the
/// connection, and for TLS the name the server's certificate must carry.
public struct SIPPeer: Hashable, Sendable, CustomStringConvertible {
    public var transport: SIPTransportProtocol
    public var address: SocketAddress
    /// The stream connection a request arrived on; responses go back over it (RFC 3261 §18.2.2).
    public var connection: Int32?
    /// TLS toward a server: the name to check and how (a trunk's `sip.tls`). nil for other
    /// transports, and for TLS peers that take the agent's default (`tlsTarget`).
    public var tls: SIPTLSTarget?

    public init(
        transport: SIPTransportProtocol, address: SocketAddress, connection: Int32? = nil, tls: SIPTLSTarget? = nil
    ) {
        self.transport = transport
        self.address = address
        self.connection = connection
        self.tls = tls
    }

    public var description: String {
        "\(transport.rawValue.lowercased()):\(address)" + (tls.map { " (\($0.serverName))" } ?? "")
    }
}

/// UDP sockets, stream listeners and stream connections (TCP and TLS), all on the SIP event
/// loop. Incoming UDP datagrams and framed stream messages are handed to `onMessage` as
/// bytes. Stream peers are bounded by `limits` (SIPStreamConnections.swift).
final class SIPTransports {
    let loop: SIPEventLoop
    let limits: SIPTransportLimits
    /// Called on the loop for every framed stream message, with our address it arrived at.
    var onMessage: (([UInt8], SIPPeer, SocketAddress) -> Void)?
    /// Called on the loop for every UDP datagram, with our address it arrived at (the
    /// socket's; a wildcard listener names its wildcard). The bytes are the read batch's:
    /// valid during the call only, so a datagram refused before parsing is never copied.
    var onDatagram: ((UnsafeRawBufferPointer, SIPPeer, SocketAddress) -> Void)?
    /// Called when a stream breaks its framing (bytes are dropped, the connection closed).
    var onStreamError: ((SIPPeer, SIPStreamFramer.FramingError) -> Void)?
    /// Called on the loop, never from inside a send, when a stream connection could not be
    /// opened or went down (connect, TLS handshake, certificate, a peer that closed).
    var onConnectionFailure: ((SIPConnectionFailureReport) -> Void)?
    /// Stream peers refused or cut, by reason.
    internal(set) var refusals: [SIPTransportRefusal: Int] = [:]
    /// When set, every outgoing message goes here instead of to a socket (its result is
    /// `send`'s). The sequence fuzzer (Fuzz/FuzzSIPSession.swift) reads what the agent sends
    /// through it, and so keeps fuzzed Contact and Route addresses off the network. Nil
    /// everywhere else.
    var sendOverride: (([UInt8], SIPPeer) -> Bool)?
    /// Every message sent, as it crossed the wire (`SIPUserAgent.wireTap`). Messages read
    /// go to the tap from the agent, once its defence has let them through.
    var onWire: ((SIPWireMessage) -> Void)?

    private(set) var udpSockets: [UDPSocket] = []
    internal(set) var tcpListeners: [(listener: StreamListener, transport: SIPTransportProtocol)] = []
    /// Open stream connections by descriptor (`SIPPeer.connection`).
    var connections: [Int32: Connection] = [:]
    var connectionByPeer: [StreamKey: Int32] = [:]
    /// The TLS listeners' context (our certificate, client verification); a reload replaces
    /// it for new connections while the open ones keep theirs.
    var tlsServerContext: TLSContext?
    /// One client context per distinct trust and client-certificate setting.
    var tlsClientContexts: [SIPTLSClientSettings: TLSContext] = [:]
    /// The TLS target of a peer that carries none (an in-dialog hop, a BYE after a
    /// restart); nil answer: its address as the name, the system trust store.
    var tlsTarget: ((SocketAddress) -> SIPTLSTarget?)?
    /// The UDP sockets' read batch (`readUDP`): one `recvmmsg` per readiness callback.
    let udpBatch = UDPDatagramBatch(capacity: SIPTransports.udpBatchSize)
    /// Recent UDP sources' `SocketAddress`es (`UDPSourceNames`).
    private var sourceNames = UDPSourceNames()
    /// Destination host -> our source address toward it (`SIPTransports+Routes.swift`).
    var routeSources: [String: String] = [:]
    /// Stream connections in all (`limits.maxConnections`, or half the file-descriptor limit
    /// when that is lower) and per source IP, both directions.
    lazy var caps = StreamConnectionCaps(
        maxConnections: StreamConnectionCaps.cap(limits.maxConnections),
        maxPerSource: limits.maxConnectionsPerSource)

    /// What a stream connection is reused for: the transport, the address and, for TLS we
    /// opened, the name and trust it was checked with.
    struct StreamKey: Hashable {
        var transport: SIPTransportProtocol
        var address: SocketAddress
        var tls: SIPTLSTarget?
    }

    /// A SIP stream: the stream layer's connection with SIP's framer.
    typealias SIPStream = StreamConnection<SIPStreamFramer>

    /// One stream connection and what SIP keeps about it.
    final class Connection {
        let stream: SIPStream
        let transport: SIPTransportProtocol
        let key: StreamKey
        /// We sent something over it: requests of ours may wait on it (a failure then has
        /// transactions to fail; a scanner's connection that goes has none to look for).
        var carried = false

        init(stream: SIPStream, key: StreamKey) {
            self.stream = stream
            self.key = key
            self.transport = key.transport
        }

        /// The peer as messages from this connection name it.
        var sipPeer: SIPPeer {
            SIPPeer(transport: transport, address: stream.peer, connection: stream.fd, tls: key.tls)
        }
    }

    init(loop: SIPEventLoop, limits: SIPTransportLimits = SIPTransportLimits()) {
        self.loop = loop
        self.limits = limits
    }

    /// Binds a UDP socket; port 0 lets the OS choose. Returns the bound address.
    func listenUDP(_ address: SocketAddress) throws -> SocketAddress {
        let socket = try UDPSocket(bind: address, bufferBytes: 4 << 20)
        udpSockets.append(socket)
        loop.register(fd: socket.fd) { [unowned self, unowned socket] in self.readUDP(socket) }
        return socket.local
    }

    /// Listens with `transport` on `address`; returns the bound address. TLS needs
    /// `tlsServerContext`.
    func listen(_ transport: SIPTransportProtocol, _ address: SocketAddress) throws -> SocketAddress {
        switch transport {
        case .udp: try listenUDP(address)
        case .tcp, .tls: try listenStream(address, transport: transport)
        }
    }

    /// Closes the listening socket of `transport` bound to `address`.
    func closeListener(_ transport: SIPTransportProtocol, _ address: SocketAddress) {
        switch transport {
        case .udp:
            guard let i = udpSockets.firstIndex(where: { $0.local == address }) else { return }
            loop.unregister(fd: udpSockets[i].fd)
            udpSockets.remove(at: i)
        case .tcp, .tls:
            guard let i = tcpListeners.firstIndex(where: { $0.listener.local == address && $0.transport == transport })
            else { return }
            tcpListeners[i].listener.close()
            tcpListeners.remove(at: i)
        }
    }

    func closeAll() {
        for socket in udpSockets { loop.unregister(fd: socket.fd) }
        for (listener, _) in tcpListeners { listener.close() }
        for fd in connections.keys { closeConnection(fd) }
        udpSockets = []
        tcpListeners = []
    }

    /// Sends one message. Over a stream it reuses the request's connection or a connection to
    /// the peer, opening one when needed (TLS: encrypted once the handshake and the server's
    /// name check are done). Returns false when the message could not be queued.
    @discardableResult
    func send(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        if let sendOverride { return sendOverride(bytes, peer) }
        switch peer.transport {
        case .udp:
            guard let socket = udpSocket(toward: peer.address), let to = RawSocketAddress(peer.address) else {
                return false
            }
            let sent = bytes.withUnsafeBytes { socket.send($0, to: to) }
            if sent, let onWire {
                onWire(
                    SIPWireMessage(
                        time: SIPWireMessage.now(), direction: .sent, transport: .udp, local: socket.local,
                        remote: peer.address, bytes: bytes))
            }
            return sent
        case .tcp, .tls:
            return sendStream(bytes, to: peer)
        }
    }

    // MARK: UDP

    /// Reads at most `udpBatchSize` datagrams in one system call, then lets the loop run its
    /// other work (API calls handed in, timers, the transaction pump) before the next batch:
    /// epoll is level-triggered, so what is left wakes it again at once. Draining to EAGAIN let
    /// a flood that never lets the socket empty hold every other piece of SIP work back.
    private func readUDP(_ socket: UDPSocket) {
        let batch = udpBatch
        let n = batch.read(socket)
        // In arrival order. (Responses first gained nothing measurable under a flood and
        // turned a peer's NOTIFY sent before its 202 into the usual order: UDP promises no
        // order, but a loopback or LAN peer's order is what it sent, and dialogs see it.)
        for i in 0..<n { deliverDatagram(i, from: socket) }
        // A batch short of full emptied the socket: the loop has caught up.
        udpBacklogged = n == batch.capacity
    }

    private func deliverDatagram(_ i: Int, from socket: UDPSocket) {
        let bytes = udpBatch.datagram(i)
        guard !bytes.isEmpty, let from = sourceNames.address(of: udpBatch.source(i)) else { return }
        onDatagram?(bytes, SIPPeer(transport: .udp, address: from), socket.local)
    }

    /// Datagrams read per readiness callback (see `readUDP`).
    static let udpBatchSize = 64

    /// True from a read that found a whole batch waiting until one that empties the socket:
    /// datagrams arrive faster than the loop handles them, and the receive queue grows
    /// toward overflow, where the kernel would drop our own calls' responses with the rest.
    internal(set) var udpBacklogged = false
}
