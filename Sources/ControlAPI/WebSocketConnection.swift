// One server-side WebSocket: a bounded queue of outgoing text messages and the thread that
// drains it. No CivetWeb here; the socket side is a `WebSocketTransport` (HTTPServer.swift).
//
// Why a thread per connection: writing to a client that does not read blocks inside
// CivetWeb until the socket drains. That must stall only this connection's writer, never
// `send(text:)` nor another connection. When the queue overflows, the connection is aborted
// (the transport cuts the socket, which also frees the blocked writer).

import Foundation
import Synchronization

/// The socket side of a WebSocket, implemented over CivetWeb in HTTPServer.swift.
protocol WebSocketTransport: Sendable {
    /// Runs `body` holding the connection's write lock, so frames from the writer thread and
    /// from CivetWeb's worker (pong, close reply) never interleave.
    func withWriteLock<T>(_ body: () -> T) -> T
    /// Writes one text frame; false when the connection is broken. Call under `withWriteLock`.
    func writeText(_ text: String) -> Bool
    /// Writes a close frame with `code`; false when the connection is broken. Call under `withWriteLock`.
    func writeClose(code: UInt16) -> Bool
    /// Ends the connection now: CivetWeb's read loop stops and a write blocked on a full
    /// socket fails. Never blocks.
    func abort()
    /// The connection is over (CivetWeb reported it closed): unblocks a writer still stuck
    /// in a write, without discarding what the kernel already holds. Never blocks.
    func finish()
}

/// A WebSocket opened by a client. `send(text:)` and `close()` may be called from any thread.
public final class WebSocketConnection: Sendable {
    /// Unique per server, in accept order.
    public let id: Int
    /// The upgrade request (path, query, headers; no body).
    public let request: HTTPRequest

    /// How long `close()` waits for the client's close frame before cutting the connection.
    static let closeGrace: Double = 1.0

    private enum Phase: Equatable {
        case open
        /// No more sends; flush the queue, then a close frame with this code.
        case closing(code: UInt16)
        /// Too slow or broken: queue discarded, transport aborted.
        case dropped
        /// CivetWeb closed the connection; the writer exits.
        case finished
    }

    private struct State {
        var queue: [String] = []
        var phase = Phase.open
        /// Set under the transport's write lock: no frame may follow a close frame.
        var closeFrameSent = false
        var closeDeadline: DispatchTime?
        var aborted = false
        var writerStarted = false
        var opened = false
    }

    private let queueLimit: Int
    private let transport: any WebSocketTransport
    private let state = Mutex(State())
    /// Counts state changes the writer must look at; it re-reads the state after each wake.
    private let wake = DispatchSemaphore(value: 0)
    private let writerExited = DispatchSemaphore(value: 0)

    init(id: Int, request: HTTPRequest, queueLimit: Int, transport: any WebSocketTransport) {
        self.id = id
        self.request = request
        self.queueLimit = max(1, queueLimit)
        self.transport = transport
    }

    /// True until the connection is closing, dropped or closed.
    public var isOpen: Bool { state.withLock { $0.phase == .open } }

    /// Queues a text message; never blocks the caller. Returns false (and closes the
    /// connection) when the queue is over the limit or the connection is closed.
    @discardableResult
    public func send(text: String) -> Bool {
        let (accepted, wakeWriter) = state.withLock { s -> (Bool, Bool) in
            guard s.phase == .open else { return (false, false) }
            guard s.queue.count < queueLimit else {
                drop(&s)
                return (false, true)
            }
            s.queue.append(text)
            // The writer takes the whole queue at once: it needs a wake only when the queue
            // was empty (it is then idle or about to look at the state again).
            return (true, s.queue.count == 1)
        }
        if wakeWriter { wake.signal() }
        return accepted
    }

    /// Closes the connection: messages already queued are sent, then a close frame (1000);
    /// the connection ends when the client answers, or after `closeGrace` seconds.
    public func close() {
        close(code: 1000)
    }

    // MARK: - Called by HTTPServer

    /// Starts the writer thread (CivetWeb's ready handler, before `onWebSocketOpen`).
    func start() {
        state.withLock { $0.writerStarted = true; $0.opened = true }
        let thread = Thread { [self] in
            runWriter()
            writerExited.signal()
        }
        thread.name = "irisgw-ws-\(id)"
        thread.stackSize = 512 << 10
        thread.start()
    }

    /// Like `close()` with a specific close code (1001 when the server stops).
    func close(code: UInt16) {
        let changed = state.withLock { s -> Bool in
            guard s.phase == .open else { return false }
            s.phase = .closing(code: code)
            return true
        }
        if changed { wake.signal() }
    }

    /// Cuts the connection without a close handshake (server stop after the grace period).
    func abort() {
        let changed = state.withLock { s -> Bool in
            guard s.phase != .finished, !s.aborted else { return false }
            drop(&s)
            return true
        }
        if changed { wake.signal() }
    }

    /// Under the write lock: claims the right to send the one close frame. False when one
    /// was already sent (the client is answering ours) or the connection is gone.
    func claimCloseFrame() -> Bool {
        state.withLock { s in
            guard !s.closeFrameSent, s.phase != .finished, !s.aborted else { return false }
            s.closeFrameSent = true
            return true
        }
    }

    /// Under the write lock: whether a frame may still go out (none after a close frame).
    var mayWrite: Bool {
        state.withLock { !$0.closeFrameSent && $0.phase != .finished && !$0.aborted }
    }

    /// The client sent a close frame (already answered): nothing more is sent.
    func peerClosed() {
        let changed = state.withLock { s -> Bool in
            guard s.phase == .open else { return false }
            s.phase = .closing(code: 1000)
            s.queue.removeAll()
            return true
        }
        if changed { wake.signal() }
    }

    /// CivetWeb closed the connection. Returns once the writer no longer touches it: true the
    /// first time for a connection that was opened (time for `onWebSocketClose`).
    func finish() -> Bool {
        let (first, waitForWriter) = state.withLock { s -> (Bool, Bool) in
            guard s.phase != .finished else { return (false, false) }
            if !s.aborted { transport.finish() }
            s.phase = .finished
            s.queue.removeAll()
            return (s.opened, s.writerStarted)
        }
        guard first || waitForWriter else { return false }
        wake.signal()
        if waitForWriter { writerExited.wait() }
        return first
    }

    // MARK: - Writer

    private enum Work {
        case exit
        case idle
        case write([String])
        case sendClose(UInt16)
        case linger(DispatchTime)
    }

    /// Discards the queue and aborts the transport. Caller holds the state lock.
    private func drop(_ s: inout State) {
        s.queue.removeAll()
        // Once finished, CivetWeb may close the socket: the transport is off limits.
        guard s.phase != .finished else { return }
        s.phase = .dropped
        if !s.aborted {
            s.aborted = true
            transport.abort()
        }
    }

    private func nextWork() -> Work {
        state.withLock { s -> Work in
            switch s.phase {
            case .finished:
                return .exit
            case .dropped:
                return .idle
            case .open where s.queue.isEmpty:
                return .idle
            case .open:
                defer { s.queue = [] }
                return .write(s.queue)
            case .closing where s.aborted:
                return .idle
            case .closing where !s.queue.isEmpty:
                defer { s.queue = [] }
                return .write(s.queue)
            case .closing(let code):
                if let deadline = s.closeDeadline { return .linger(deadline) }
                return .sendClose(code)
            }
        }
    }

    private func runWriter() {
        while true {
            switch nextWork() {
            case .exit:
                return
            case .idle:
                wake.wait()
            case .write(let batch):
                for text in batch {
                    // nil: nothing may follow (checked under the write lock, as a close reply
                    // or a drop may have happened meanwhile); the state says what is next.
                    let written = transport.withWriteLock { () -> Bool? in
                        guard mayWrite else { return nil }
                        return transport.writeText(text)
                    }
                    guard let written else { break }
                    if !written {
                        state.withLock { drop(&$0) }
                        break
                    }
                }
            case .sendClose(let code):
                let ok = transport.withWriteLock { () -> Bool in
                    guard claimCloseFrame() else { return true }
                    return transport.writeClose(code: code)
                }
                state.withLock { s in
                    s.closeDeadline = .now() + WebSocketConnection.closeGrace
                    if !ok { drop(&s) }
                }
            case .linger(let deadline):
                // Waiting for the client's close frame, which ends CivetWeb's read loop.
                if wake.wait(timeout: deadline) == .timedOut {
                    abort()
                }
            }
        }
    }
}
