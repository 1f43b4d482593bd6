/// DTLS-SRTP (RFC 5763/5764) as a layer of one call's UDP socket, driven with datagrams: a
/// datagram in (the DTLS ones of the socket, RFC 7983: first byte 20-63), datagrams out, and
/// once the handshake is done the SRTP keys in our direction. It holds no socket and no
/// clock: the caller passes `now` (seconds on its monotonic clock, `EventLoop.now()`), sends
/// every datagram of `Output.datagrams` as one UDP payload, and calls `handleTimeout(now:)`
/// at `deadline`; tests pump two transports into each other in memory.
///
/// The peer's certificate is self-signed and checked only against the `a=fingerprint` of
/// its SDP (RFC 5763 §5): a mismatch fails the handshake with `.fingerprintMismatch`, and
/// no keys are ever exported for it.
///
/// Timers: OpenSSL retransmits a lost flight on its own timer (`DTLSSettings
/// .initialRetransmitTimeout`, doubling); `deadline` is that timer's expiry on the caller's
/// clock (re-read after every step), or the give-up time `DTLSSettings.handshakeTimeout`
/// after `start` if sooner, after which the transport fails with `.handshakeTimeout`.
///
/// Not thread-safe: one thread at a time (OpenSSL's error queue is per thread).
public struct DTLSTransport {
    public enum State: Equatable, Sendable {
        case handshaking
        /// The handshake finished, the peer checked out and `keys` are set.
        case connected
        case failed(DTLSFailure)
        /// Either side sent close_notify after the handshake.
        case closed
    }

    /// What one step produced.
    public struct Output: Equatable, Sendable {
        /// Datagrams to send, in order, each one UDP payload of at most `DTLSSettings.mtu`
        /// bytes.
        public var datagrams: [[UInt8]] = []
        /// The SRTP keys, set once: in the step the handshake finished.
        public var keys: DTLSSRTPKeys?
        /// Set once, when the transport fails.
        public var failure: DTLSFailure?
        /// The peer closed the association (close_notify) after the handshake.
        public var closed = false
    }

    private let session: DTLSSession
    public let role: DTLSRole
    public let settings: DTLSSettings
    public private(set) var state = State.handshaking
    /// The SRTP profile and keys, once connected.
    public private(set) var keys: DTLSSRTPKeys?
    /// When to call `handleTimeout(now:)` next, on the caller's clock; nil when nothing waits
    /// (connected, failed, closed).
    public private(set) var deadline: Double?
    /// `start` plus `settings.handshakeTimeout`.
    private var giveUpAt: Double?

    /// A transport for one call. `peerFingerprints`: every `a=fingerprint` of the peer's SDP
    /// (its certificate must match one of those with the strongest hash, RFC 8122 §5).
    public init(
        context: DTLSContext, role: DTLSRole, peerFingerprints: [DTLSFingerprint],
        settings: DTLSSettings = DTLSSettings()
    ) throws(DTLSFailure) {
        session = try DTLSSession(context: context, role: role, peerFingerprints: peerFingerprints, settings: settings)
        self.role = role
        self.settings = settings
    }

    public var isConnected: Bool { state == .connected }

    /// Starts the handshake clock; as a client, the first flight (ClientHello). A server
    /// sends nothing until the client's ClientHello arrives (`receive`).
    public mutating func start(now: Double) -> Output {
        var out = Output()
        guard state == .handshaking, giveUpAt == nil else { return out }
        giveUpAt = now + settings.handshakeTimeout
        if role == .client { advanceHandshake(&out) }
        finish(&out, now: now)
        return out
    }

    /// One datagram from the peer (a DTLS one: the caller demultiplexes, RFC 7983). Garbage
    /// is dropped (`DTLSRecordFilter`, then OpenSSL's record layer). A server that was not
    /// started starts here.
    public mutating func receive(_ datagram: UnsafeRawBufferPointer, now: Double) -> Output {
        var out = Output()
        if giveUpAt == nil, state == .handshaking { giveUpAt = now + settings.handshakeTimeout }
        switch state {
        case .handshaking:
            if let giveUpAt, now >= giveUpAt {
                fail(.handshakeTimeout, &out)
                return out
            }
            guard admit(datagram) else { break }
            advanceHandshake(&out)
            if state == .connected { drain(&out) }
        case .connected:
            guard admit(datagram) else { break }
            drain(&out)
        case .failed, .closed:
            return out
        }
        finish(&out, now: now)
        return out
    }

    /// `receive` for an array.
    public mutating func receive(_ datagram: [UInt8], now: Double) -> Output {
        datagram.withUnsafeBytes { receive($0, now: now) }
    }

    /// Call at `deadline`: retransmits the last flight when OpenSSL's timer expired, or fails
    /// with `.handshakeTimeout` past the give-up time. Early or late calls are harmless.
    public mutating func handleTimeout(now: Double) -> Output {
        var out = Output()
        guard state == .handshaking, let giveUpAt else { return out }
        if now >= giveUpAt {
            fail(.handshakeTimeout, &out)
            return out
        }
        if let failure = session.handleTimeout() { fail(failure, &out) }
        finish(&out, now: now)
        return out
    }

    /// Our close_notify (best effort), for a call that ends.
    public mutating func close() -> Output {
        var out = Output()
        guard state == .connected else { return out }
        session.shutdown()
        state = .closed
        deadline = nil
        out.datagrams = session.takeDatagrams()
        return out
    }

    /// Gives OpenSSL the datagram's admissible records (`DTLSRecordFilter`); false when
    /// none is.
    private func admit(_ datagram: UnsafeRawBufferPointer) -> Bool {
        guard let records = DTLSRecordFilter.admissible(datagram, minimumProtected: session.minimumProtectedRecord)
        else { return false }
        records.withUnsafeBytes { session.feed($0) }
        return true
    }

    private mutating func advanceHandshake(_ out: inout Output) {
        switch session.handshake() {
        case .wantMore:
            return
        case .failed(let failure):
            fail(failure, &out)
        case .done:
            // The verify callback compared the fingerprint already; once more on the
            // finished handshake, and no key leaves for a peer that does not match.
            let checked =
                session.checkPeer().map { Result<DTLSSRTPKeys, DTLSFailure>.failure($0) } ?? session.exportKeys()
            switch checked {
            case .success(let exported):
                keys = exported
                state = .connected
                out.keys = exported
            case .failure(let failure):
                // Not even our Finished leaves.
                session.discardOutput()
                fail(failure, &out)
            }
        }
    }

    private mutating func drain(_ out: inout Output) {
        switch session.drain() {
        case .open:
            break
        case .closed:
            state = .closed
            out.closed = true
        case .failed(let failure):
            fail(failure, &out)
        }
    }

    /// Takes the datagrams of the step and sets the next deadline.
    private mutating func finish(_ out: inout Output, now: Double) {
        out.datagrams += session.takeDatagrams()
        guard state == .handshaking, let giveUpAt else {
            deadline = nil
            return
        }
        deadline = session.retransmitTimeLeft().map { min(now + $0, giveUpAt) } ?? giveUpAt
    }

    private mutating func fail(_ failure: DTLSFailure, _ out: inout Output) {
        state = .failed(failure)
        out.failure = failure
        deadline = nil
        giveUpAt = nil
        // The fatal alert OpenSSL queued, if any (never key material).
        out.datagrams += session.takeDatagrams()
    }
}
