import Glibc

/// One TCP connection on an event loop, both directions, read and written without blocking:
/// bytes from the socket go through the optional security layer (TLS) to the framer, and
/// whole frames to `onFrames`; bytes sent go through the security layer to a bounded write
/// queue. Its deadlines (handshake, first frame, frame, keep-alive, idle) run on one loop
/// timer armed at the earliest. Every way it ends is one `StreamFailure`, given once to
/// `onClose`. Confined to its loop: every call on the loop thread.
public final class StreamConnection<Framer: StreamFramer> {
    public let fd: Int32
    public let peer: SocketAddress
    /// Accepted from a peer (not opened by us).
    public let inbound: Bool
    public let loop: EventLoop
    /// The bounds; an owner may change them as its protocol moves on (HTTP: the body's
    /// deadline after a head, no idle deadline while a request is answered).
    public var settings: StreamConnectionSettings {
        didSet { armTimer() }
    }
    public var framer: Framer
    /// The layer between socket and framer; nil for plain TCP.
    public private(set) var security: (any StreamSecurity)?
    /// Our connect(2) has not completed yet (what is sent waits in the queue).
    public private(set) var isConnecting: Bool
    public private(set) var isOpen = true
    /// Last byte in or out (loop clock).
    public private(set) var lastActivity: Double
    /// When the keep-alive went out, until anything comes back.
    public private(set) var keepaliveSentAt: Double?
    /// The owner stopped reading (`pauseReading()`): the socket is not read, so the peer's
    /// sending stalls once the kernel's buffers fill.
    public private(set) var isReadingPaused = false

    /// Frames cut from what just arrived (possibly none: the framer took bytes but completed
    /// nothing, or only keep-alive bytes). The connection may be closed by the handler;
    /// check `isOpen` between frames.
    public var onFrames: ((StreamConnection<Framer>, [Framer.Frame]) -> Void)?
    /// Called once when the connection ends: nil when its owner closed it, else why.
    public var onClose: ((StreamConnection<Framer>, StreamFailure?) -> Void)?
    /// The connection has been quiet for `keepaliveInterval`: send a keep-alive now.
    public var onKeepalive: ((StreamConnection<Framer>) -> Void)?
    /// The write queue emptied after the socket had been full: the owner may send more (a
    /// body produced at the socket's pace).
    public var onDrained: ((StreamConnection<Framer>) -> Void)?
    /// A deadline passed (`.firstFrameTimeout`, `.frameTimeout`, `.idle` ...): the connection
    /// ends with it right after this returns; what is sent here (HTTP's 408) is written if
    /// the socket takes it at once.
    public var onTimeout: ((StreamConnection<Framer>, StreamFailure) -> Void)?
    /// The security layer's handshake finished.
    public var onSecured: ((StreamConnection<Framer>) -> Void)?

    private let caps: StreamConnectionCaps?
    /// Bytes for the socket from `outboxStart` on: the messages over TCP, ciphertext over TLS.
    private var outbox: [UInt8] = []
    private var outboxStart = 0
    private var watchingWritable = false
    private var handshakeDeadline: Double?
    private var frameDeadline: Double?
    /// The frame deadline is the first frame's (`firstFrameTimeout`).
    private var awaitingFirstFrame = false
    private var timer: EventLoop.Timer?
    private var timerDue: Double?
    /// Frames are being handed to `onFrames` (a resume from inside it re-offers afterwards).
    private var delivering = false
    private var reofferHeld = false
    /// `finishWriting()` waits for the queue to drain.
    private var finishWhenDrained = false

    /// Adopts a socket `StreamListener` accepted. Call `start()` once the handlers are set.
    public convenience init(
        accepted fd: Int32, peer: SocketAddress, loop: EventLoop, framer: Framer,
        security: (any StreamSecurity)? = nil, settings: StreamConnectionSettings,
        caps: StreamConnectionCaps? = nil
    ) {
        self.init(
            fd: fd, peer: peer, inbound: true, connecting: false, loop: loop, framer: framer, security: security,
            settings: settings, caps: caps)
    }

    /// Opens a connection to `address` without blocking; `start()` once the handlers are
    /// set. What is sent before the connect completes (a TLS client's ClientHello first)
    /// waits in the queue. Names are resolved by the caller (the DNS module).
    public static func connect(
        to address: SocketAddress, loop: EventLoop, framer: Framer,
        security: (any StreamSecurity)? = nil, settings: StreamConnectionSettings,
        caps: StreamConnectionCaps? = nil
    ) throws(StreamFailure) -> StreamConnection {
        if let caps, caps.total >= caps.maxConnections { throw .refused(.tooManyConnections) }
        let fd: Int32
        do { fd = try StreamSocket.make(for: address) } catch { throw .connect(errno: error.code) }
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        let code = rc == nil ? EAFNOSUPPORT : errno
        if rc != 0 && code != EINPROGRESS {
            Glibc.close(fd)
            throw .connect(errno: code)
        }
        return StreamConnection(
            fd: fd, peer: address, inbound: false, connecting: rc != 0, loop: loop, framer: framer,
            security: security, settings: settings, caps: caps)
    }

    private init(
        fd: Int32, peer: SocketAddress, inbound: Bool, connecting: Bool, loop: EventLoop, framer: Framer,
        security: (any StreamSecurity)?, settings: StreamConnectionSettings, caps: StreamConnectionCaps?
    ) {
        self.fd = fd
        self.peer = peer
        self.inbound = inbound
        self.isConnecting = connecting
        self.loop = loop
        self.framer = framer
        self.security = security
        self.settings = settings
        self.caps = caps
        StreamSocket.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        let now = EventLoop.now()
        lastActivity = now
        if security != nil, let t = settings.handshakeTimeout { handshakeDeadline = now + t }
        if let t = settings.firstFrameTimeout {
            frameDeadline = now + t
            awaitingFirstFrame = true
        }
        caps?.add(peer.host)
    }

    deinit {
        if isOpen {
            Glibc.close(fd)
            caps?.remove(peer.host)
        }
    }

    /// Our end of the connection, looked up once when first needed.
    public lazy var local: SocketAddress = SocketAddress.local(of: fd) ?? peer

    /// Bytes waiting to leave: the queue and what the security layer holds.
    public var queuedBytes: Int { outbox.count - outboxStart + (security?.heldCount ?? 0) }

    /// Starts reading (and, for a client's security layer, its handshake) and the deadlines.
    public func start() {
        guard isOpen else { return }
        loop.register(fd: fd) { [weak self] in self?.readable() }
        if isConnecting { watchWritable() }
        if security != nil, !inbound { queue(security!.begin().ciphertext) }
        if !isConnecting { flush() }
        armTimer()
    }

    /// Sends `bytes` (through the security layer). False when the connection is closed, or
    /// when the queue would pass `maxQueuedBytes`: the connection then ends with
    /// `.writeQueueFull`. True means queued; a write failure after it ends the connection.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard isOpen else { return false }
        let queued = queuedBytes
        guard queued + bytes.count <= settings.maxQueuedBytes else {
            end(.writeQueueFull(queued: queued))
            return false
        }
        guard security != nil else {
            queue(bytes)
            if !isConnecting { flush() }
            return true
        }
        let step = security!.wrap(bytes)
        queue(step.ciphertext)
        if let failure = step.failure {
            end(.security(failure))
            return false
        }
        if !isConnecting { flush() }
        return true
    }

    /// Ends the connection: what is queued and the security layer's closing message are
    /// written if the socket takes them now (never waited for), then the socket closes.
    /// `onClose` gets nil.
    public func close() {
        guard isOpen else { return }
        if !isConnecting { writeNow() }
        end(nil)
    }

    /// Ends the connection at once for `failure` (the owner's own reason, such as a protocol
    /// error above the framer); `onClose` gets it.
    public func abort(_ failure: StreamFailure) { end(failure) }

    // MARK: Reading

    private func readable() {
        guard isOpen else { return }
        if isReadingPaused {
            checkHangUp()
            return
        }
        withUnsafeTemporaryAllocation(byteCount: 65_536, alignment: 16) { buffer in
            while isOpen && !isReadingPaused {
                let n = recv(fd, buffer.baseAddress, buffer.count, 0)
                if n == 0 {
                    end(ending(.closedByPeer))
                    return
                }
                if n < 0 {
                    let code = errno
                    if code != EAGAIN && code != EWOULDBLOCK { end(ending(.socket(errno: code))) }
                    return
                }
                let now = EventLoop.now()
                lastActivity = now
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                guard security != nil else {
                    deliver(bytes, now: now)
                    continue
                }
                let step = security!.unwrap(bytes)
                if !step.ciphertext.isEmpty {
                    // Handshake messages, or the alert that tells the peer why we give up.
                    queue(step.ciphertext)
                    if !isConnecting { flush() }
                    guard isOpen else { return }
                }
                if step.established {
                    handshakeDeadline = nil
                    armTimer()
                    onSecured?(self)
                    guard isOpen else { return }
                }
                if let failure = step.failure {
                    end(.security(failure))
                    return
                }
                // Data the peer sent before its close_notify came in the same read: it
                // goes on before the connection ends.
                if !step.plaintext.isEmpty {
                    step.plaintext.withUnsafeBytes { deliver($0, now: now) }
                    guard isOpen else { return }
                }
                if step.closed {
                    end(.securityClosed)
                    return
                }
            }
        }
    }

    /// Frames what arrived in the clear and hands the frames on; again with no bytes when
    /// the owner resumed reading from inside `onFrames` (the framer may hold frames back).
    private func deliver(_ bytes: UnsafeRawBufferPointer, now: Double) {
        delivering = true
        defer { delivering = false }
        deliverOnce(bytes, now: now)
        while reofferHeld, isOpen, !isReadingPaused {
            reofferHeld = false
            deliverOnce(UnsafeRawBufferPointer(start: nil, count: 0), now: EventLoop.now())
        }
    }

    private func deliverOnce(_ bytes: UnsafeRawBufferPointer, now: Double) {
        let frames: [Framer.Frame]
        do {
            frames = try framer.append(bytes)
        } catch {
            end(.framing(error))
            return
        }
        keepaliveSentAt = nil  // the flow is alive
        // A partial frame starts (or keeps) its clock; a clean boundary stops it.
        if !frames.isEmpty { awaitingFirstFrame = false }
        if framer.pending == 0 {
            frameDeadline = nil
            awaitingFirstFrame = false
        } else if !frames.isEmpty || frameDeadline == nil, let t = settings.frameTimeout {
            frameDeadline = now + t
            armTimer()
        }
        onFrames?(self, frames)
    }

    /// Called while reading is paused: epoll reports hang-ups and errors regardless. Ends
    /// only when the socket really is broken or at its end.
    private func checkHangUp() {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if n == 0 {
            end(ending(.closedByPeer))
        } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            end(ending(.socket(errno: errno)))
        }
    }

    /// Stops reading the socket (back-pressure: a request is being answered). Frames the
    /// framer already cut have been handed on; nothing more comes until `resumeReading()`.
    public func pauseReading() {
        guard isOpen, !isReadingPaused else { return }
        isReadingPaused = true
        loop.setReading(fd: fd, false)
    }

    /// Reads again, and first offers the framer no new bytes, so frames it held back (a
    /// pipelined request behind the one just answered) come out now. From inside
    /// `onFrames` the offer follows once that handler returns.
    public func resumeReading() {
        guard isOpen, isReadingPaused else { return }
        isReadingPaused = false
        loop.setReading(fd: fd, true)
        if delivering {
            reofferHeld = true
        } else {
            deliver(UnsafeRawBufferPointer(start: nil, count: 0), now: EventLoop.now())
        }
    }

    /// Swaps the framer (HTTP's for WebSocket's after a 101) and hands it `held`, the bytes
    /// the old framer had not framed yet (frames that came right behind the upgrade); the
    /// frames it cuts from them go to `onFrames` now. The frame deadline starts afresh.
    public func replaceFramer(with newFramer: Framer, replaying held: [UInt8]) {
        guard isOpen else { return }
        framer = newFramer
        frameDeadline = nil
        awaitingFirstFrame = false
        guard !held.isEmpty else { return }
        held.withUnsafeBytes { deliver($0, now: EventLoop.now()) }
    }

    /// Restarts the running frame deadline from now with the current `settings.frameTimeout`
    /// (an owner that just changed it for the next part of a frame, such as a body).
    public func restartFrameDeadline() {
        guard isOpen, frameDeadline != nil else { return }
        frameDeadline = settings.frameTimeout.map { EventLoop.now() + $0 }
        awaitingFirstFrame = false
        armTimer()
    }

    /// Our side is done: once the queue is empty, the security layer's closing message and
    /// a TCP FIN (shutdown of the sending side). Reading goes on until the peer closes.
    public func finishWriting() {
        guard isOpen else { return }
        guard outboxStart == outbox.count, !isConnecting else {
            finishWhenDrained = true
            return
        }
        finishWhenDrained = false
        if security?.isEstablished == true {
            queue(security!.finish())
            writeNow()
        }
        if isOpen { shutdown(fd, Int32(SHUT_WR)) }
    }

    /// A connection that ends while its security layer handshakes failed the handshake.
    private func ending(_ failure: StreamFailure) -> StreamFailure {
        security?.isHandshaking == true ? .closedDuringHandshake : failure
    }

    // MARK: Writing

    private func queue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if outboxStart == outbox.count {
            outbox = bytes
            outboxStart = 0
        } else {
            outbox.append(contentsOf: bytes)
        }
    }

    /// Writes what the socket takes now; true when the queue is empty.
    private func flush() {
        guard writeNow() else { return }
        if watchingWritable {
            watchingWritable = false
            loop.watchWritable(fd: fd, nil)
        }
        if finishWhenDrained { finishWriting() }
    }

    /// Writes until the queue is empty (true) or the socket is full (false, and writability
    /// watched); a failed write ends the connection.
    @discardableResult
    private func writeNow() -> Bool {
        while isOpen, outboxStart < outbox.count {
            let n = outbox.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + outboxStart, $0.count - outboxStart, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                outboxStart += n
                lastActivity = EventLoop.now()
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // Sent bytes are dropped once they are most of a large queue.
                if outboxStart > 65_536 && outboxStart * 2 > outbox.count {
                    outbox.removeFirst(outboxStart)
                    outboxStart = 0
                }
                watchWritable()
                return false
            } else {
                end(ending(.socket(errno: n < 0 ? errno : EPIPE)))
                return false
            }
        }
        // Often the caller's own array (queued without a copy): let it go rather than reuse it.
        outbox = []
        outboxStart = 0
        return isOpen
    }

    private func watchWritable() {
        guard !watchingWritable else { return }
        watchingWritable = true
        loop.watchWritable(fd: fd) { [weak self] in self?.writable() }
    }

    private func writable() {
        guard isOpen else { return }
        guard isConnecting else {
            flush()
            if isOpen, !watchingWritable { onDrained?(self) }
            return
        }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        guard err == 0 else {
            end(.connect(errno: err))
            return
        }
        isConnecting = false
        flush()
        armTimer()
    }

    // MARK: Ending

    private func end(_ failure: StreamFailure?) {
        guard isOpen else { return }
        isOpen = false
        loop.cancel(timer)
        timer = nil
        if security?.isEstablished == true {
            // The closing message, best effort: the socket is closed right after.
            let bye = security!.finish()
            _ = bye.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        loop.unregister(fd: fd)
        Glibc.close(fd)
        caps?.remove(peer.host)
        outbox = []
        outboxStart = 0
        let handler = onClose
        // The handlers often capture their owner, which holds this connection.
        onFrames = nil
        onClose = nil
        onKeepalive = nil
        onDrained = nil
        onTimeout = nil
        onSecured = nil
        handler?(self, failure)
    }

    // MARK: Deadlines

    /// The earliest moment a deadline may be due, from what is known now (the idle one only
    /// moves later with activity, so the timer is not moved for it: it checks when it fires).
    private func nextDeadline() -> Double? {
        var next = Double.infinity
        if let d = handshakeDeadline { next = min(next, d) }
        if let d = frameDeadline { next = min(next, d) }
        if let sent = keepaliveSentAt {
            next = min(next, sent + settings.keepaliveTimeout)
        } else if let interval = settings.keepaliveInterval, interval > 0, !isConnecting, handshakeDeadline == nil {
            next = min(next, lastActivity + interval)
        }
        if let idle = settings.idleTimeout { next = min(next, lastActivity + idle) }
        return next.isFinite ? next : nil
    }

    /// Arms the timer at the earliest deadline unless it is armed earlier already.
    private func armTimer() {
        guard isOpen, let due = nextDeadline() else { return }
        if let armed = timerDue, armed <= due { return }
        loop.cancel(timer)
        timerDue = due
        timer = loop.schedule(after: due - EventLoop.now()) { [weak self] in self?.deadlineCheck() }
    }

    private func deadlineCheck() {
        timer = nil
        timerDue = nil
        guard isOpen else { return }
        let now = EventLoop.now()
        if let d = handshakeDeadline, now >= d {
            timedOut(.handshakeTimeout)
        } else if let d = frameDeadline, now >= d {
            timedOut(awaitingFirstFrame ? .firstFrameTimeout : .frameTimeout)
        } else if let sent = keepaliveSentAt, now - sent >= settings.keepaliveTimeout {
            timedOut(.keepaliveTimeout)
        } else if let interval = settings.keepaliveInterval, interval > 0, !isConnecting, handshakeDeadline == nil,
            keepaliveSentAt == nil, now - lastActivity >= interval
        {
            keepaliveSentAt = now
            onKeepalive?(self)
        } else if let idle = settings.idleTimeout, now - lastActivity >= idle {
            timedOut(.idle)
        }
        armTimer()
    }

    /// A deadline passed: the owner's last words (`onTimeout`) go out if the socket takes
    /// them now, then the connection ends.
    private func timedOut(_ failure: StreamFailure) {
        onTimeout?(self, failure)
        guard isOpen else { return }
        if !isConnecting { writeNow() }
        end(failure)
    }
}
