/// TLS as a layer of one stream connection, driven with bytes: ciphertext in from the
/// socket, ciphertext out for the connection's outbox, plaintext both ways. It holds no
/// socket and no clock: IOCore's stream layer moves the bytes (it is the security slot of a
/// `StreamConnection`, `TLSStream+StreamSecurity.swift`), so SIP, the control API and the
/// clients share one connection path for TCP and TLS; tests pump two streams into each other.
///
/// Plaintext sent before the handshake is done waits here, and leaves encrypted only once
/// the peer's certificate and, as a client, its name (by the target's `TLSNamePolicy`)
/// have been checked: nothing we send ever crosses the wire in the clear, and a failed
/// check sends nothing at all.
///
/// Not thread-safe: one thread at a time (OpenSSL's error queue is per thread).
public struct TLSStream {
    public enum State: Equatable, Sendable {
        case handshaking
        case established
        case failed(TLSFailure)
        /// The peer sent close_notify.
        case closed
    }

    /// What one step produced.
    public struct Output: Equatable, Sendable {
        /// Decrypted bytes for the framer.
        public var plaintext: [UInt8] = []
        /// Bytes to write to the socket.
        public var ciphertext: [UInt8] = []
        /// The handshake finished (and the peer checked out) in this step.
        public var established = false
        /// Set once, when the stream fails.
        public var failure: TLSFailure?
        /// The peer closed the TLS session.
        public var closed = false
    }

    private let session: TLSSession
    /// As a client: the name the server's certificate must carry. nil on a server.
    public let target: TLSTarget?
    public private(set) var state = State.handshaking
    /// Plaintext waiting for the handshake.
    private var held: [UInt8] = []
    /// The peer certificate's names, once established (nil if it sent none).
    public private(set) var peerNames: TLSCertificateNames?

    /// A client stream toward `target` (SNI and the name check), or nil when OpenSSL cannot
    /// make a session.
    public init?(client context: TLSContext, target: TLSTarget) {
        guard let s = TLSSession(context: context, serverName: target.serverName) else { return nil }
        session = s
        self.target = target
    }

    /// A server stream for an accepted connection.
    public init?(server context: TLSContext) {
        guard let s = TLSSession(context: context) else { return nil }
        session = s
        target = nil
    }

    /// Bytes held until the handshake is done (they count toward the queued-bytes bound).
    public var heldCount: Int { held.count }
    public var isEstablished: Bool { state == .established }
    public var isHandshaking: Bool { state == .handshaking }
    /// The negotiated protocol ("TLSv1.3").
    public var version: String { session.version }

    /// A client's first flight (ClientHello); nothing for a server.
    public mutating func start() -> Output {
        var out = Output()
        if target != nil { advanceHandshake(&out) }
        out.ciphertext += session.takeOutput()
        return out
    }

    /// Ciphertext from the socket.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Output {
        var out = Output()
        guard state == .handshaking || state == .established else { return out }
        session.feed(bytes)
        if state == .handshaking { advanceHandshake(&out) }
        if state == .established { readPlaintext(&out) }
        out.ciphertext += session.takeOutput()
        return out
    }

    /// Plaintext to send: encrypted now once established, held while handshaking, dropped
    /// after a failure.
    public mutating func send(_ plaintext: [UInt8]) -> Output {
        var out = Output()
        switch state {
        case .handshaking:
            held += plaintext
        case .established:
            encrypt(plaintext, &out)
        case .failed, .closed:
            break
        }
        out.ciphertext += session.takeOutput()
        return out
    }

    /// Our close_notify, to send before closing the socket (best effort).
    public mutating func close() -> [UInt8] {
        guard state == .established else { return [] }
        session.shutdown()
        state = .closed
        return session.takeOutput()
    }

    private mutating func advanceHandshake(_ out: inout Output) {
        switch session.handshake() {
        case .wantMore:
            return
        case .failed(let failure):
            fail(failure, &out)
        case .done:
            let names = session.peerNames
            if let target {
                let presented = names ?? TLSCertificateNames()
                let policy = target.client.names
                guard TLSNameMatcher.matches(presented, expected: target.serverName, policy: policy) else {
                    // Not even our Finished leaves: the server never sees a completed handshake.
                    _ = session.takeOutput()
                    fail(
                        .wrongName(
                            expected: target.serverName, presented: TLSNameMatcher.presented(presented, policy: policy)),
                        &out)
                    return
                }
            }
            peerNames = names
            state = .established
            out.established = true
            if !held.isEmpty {
                let waiting = held
                held = []
                encrypt(waiting, &out)
            }
        }
    }

    private mutating func readPlaintext(_ out: inout Output) {
        withUnsafeTemporaryAllocation(byteCount: 16_384, alignment: 16) { buffer in
            while state == .established {
                switch session.read(into: buffer) {
                case .data(let n):
                    out.plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                case .wantMore:
                    return
                case .closed:
                    state = .closed
                    out.closed = true
                case .failed(let failure):
                    fail(failure, &out)
                }
            }
        }
    }

    private mutating func encrypt(_ plaintext: [UInt8], _ out: inout Output) {
        if let failure = plaintext.withUnsafeBytes({ session.write($0) }) { fail(failure, &out) }
    }

    private mutating func fail(_ failure: TLSFailure, _ out: inout Output) {
        held = []
        state = .failed(failure)
        out.failure = failure
    }
}
