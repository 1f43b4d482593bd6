import Synchronization
import TLS

/// What an `https://` or `wss://` client checks: the trust (a CA file, or the system store)
/// and the host name its certificate must carry (RFC 6125 / RFC 2818, `TLSNamePolicy.https`).
/// The OpenSSL context is made once per client and shared by its connections.
struct ClientTLS: Sendable {
    let context: TLSContext
    let target: TLSTarget

    /// Loads the trust for `host` (the URL's, also sent as SNI when it is a name). Throws
    /// `.usage`-kind `.invalidURL` when the CA file cannot be used.
    init(host: String, caFile: String?, url: String) throws(IrisTransportError) {
        let settings = TLSClientSettings(caFile: caFile, names: .https)
        do throws(TLSFailure) {
            context = try TLSContext(client: settings)
        } catch {
            throw .invalidURL(url, reason: error.description)
        }
        target = TLSTarget(serverName: host, client: settings)
    }
}

/// A `TLSStream` over a connected `TCPStream`: the handshake at connect, then plaintext both
/// ways. One lock holds the TLS state and serialises the ciphertext that goes out (records
/// must leave in the order they were sealed), so one reader and one writer may use it at
/// once, as with a plain `TCPStream`. The reader waits for the socket without the lock.
final class TLSChannel: Sendable {
    private struct State {
        var stream: TLSStream
        /// Decrypted bytes not yet taken by `receive`.
        var plaintext: [UInt8] = []
        var taken = 0
        /// close_notify arrived: the end of the stream.
        var closed = false
    }

    private let state: Mutex<State>
    /// "127.0.0.1:8443" for messages.
    private let endpoint: (host: String, port: Int)

    init?(_ tls: ClientTLS, host: String, port: Int) {
        guard let stream = TLSStream(client: tls.context, target: tls.target) else { return nil }
        state = Mutex(State(stream: stream))
        endpoint = (host, port)
    }

    private func failure(_ f: TLSFailure) -> IrisTransportError {
        .tls(host: endpoint.host, port: endpoint.port, failure: f)
    }

    /// The handshake, the certificate and the host name checked, before `deadline`.
    func handshake(over tcp: TCPStream, deadline: Deadline) throws(IrisTransportError) {
        let operation = "the TLS handshake with \(endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host):\(endpoint.port)"
        let first = state.withLock { $0.stream.start() }
        try tcp.sendRaw(first.ciphertext, deadline: deadline, operation: operation)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = try tcp.receiveRaw(into: &buffer, deadline: deadline, operation: operation)
            guard n > 0 else { throw failure(.closedDuringHandshake) }
            let out = try state.withLock { (s) throws(IrisTransportError) -> TLSStream.Output in
                let out = buffer.withUnsafeBytes { s.stream.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                s.plaintext += out.plaintext
                if out.closed { s.closed = true }
                // An alert goes out best effort; a failed name check sends nothing at all.
                if out.failure != nil {
                    try? tcp.sendRaw(out.ciphertext, deadline: Deadline(seconds: 0.2), operation: operation)
                } else {
                    try tcp.sendRaw(out.ciphertext, deadline: deadline, operation: operation)
                }
                return out
            }
            if let f = out.failure { throw failure(f) }
            if out.established { return }
            if out.closed { throw failure(.closedDuringHandshake) }
        }
    }

    /// Seals `bytes` and sends them before `deadline`.
    func send(_ bytes: UnsafeRawBufferPointer, over tcp: TCPStream, deadline: Deadline, operation: String) throws(IrisTransportError) {
        try state.withLock { (s) throws(IrisTransportError) in
            let out = s.stream.send(Array(bytes))
            if let f = out.failure { throw failure(f) }
            try tcp.sendRaw(out.ciphertext, deadline: deadline, operation: operation)
        }
    }

    /// Decrypted bytes into `buffer` (waiting until `deadline`); 0 at the end of the stream
    /// (close_notify or the peer's FIN).
    func receive(into buffer: UnsafeMutableRawBufferPointer, over tcp: TCPStream, deadline: Deadline,
                 operation: String) throws(IrisTransportError) -> Int {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let limit = buffer.count
            let ready = state.withLock { s -> [UInt8]? in
                if s.taken < s.plaintext.count {
                    let n = min(limit, s.plaintext.count - s.taken)
                    let chunk = Array(s.plaintext[s.taken..<(s.taken + n)])
                    s.taken += n
                    if s.taken == s.plaintext.count {
                        s.plaintext.removeAll(keepingCapacity: true)
                        s.taken = 0
                    }
                    return chunk
                }
                return s.closed ? [] : nil
            }
            if let ready {
                ready.withUnsafeBytes { buffer.copyMemory(from: $0) }
                return ready.count
            }
            let n = try tcp.receiveRaw(into: &scratch, deadline: deadline, operation: operation)
            if n == 0 { return 0 }
            try state.withLock { (s) throws(IrisTransportError) in
                let out = scratch.withUnsafeBytes { s.stream.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                s.plaintext += out.plaintext
                if out.closed { s.closed = true }
                if let f = out.failure { throw failure(f) }
                try tcp.sendRaw(out.ciphertext, deadline: deadline, operation: operation)
            }
        }
    }

    /// Our close_notify, best effort (a blocked peer does not hold us).
    func close(over tcp: TCPStream) {
        state.withLock { s in
            let bye = s.stream.close()
            try? tcp.sendRaw(bye, deadline: Deadline(seconds: 0.2), operation: "TLS close")
        }
    }
}
